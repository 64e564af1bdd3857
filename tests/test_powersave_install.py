"""What the slurm role installs on a controller for the power-save programs: the modules
`clusterforge.powersave.payload` derives from their imports, which the role's filter
(clusterforge.cluster.controller_modules) derives the same way and the AWS roles bundle carries. They must be enough
on their own: a copy of just those files imports the programs, and each target's provider from its own folder, with
no `__init__.py` of clusterforge/targets or of the target (PEP 420 namespace packages), so importing a provider runs
nothing of its target's package. No list of them is kept by hand: a module split in two is copied as two."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from clusterforge.powersave.payload import controller_modules
from clusterforge.target_kernel import node_power, registered
from clusterforge.targets.aws.image_bundle import bundle_paths
from tests.conftest import ROOT, filter_plugins

CONTROLLER_MODULES = controller_modules(ROOT)


def test_the_role_derives_the_same_modules_and_lists_none() -> None:
    defaults = yaml.safe_load((ROOT / "roles" / "slurm" / "defaults" / "main.yml").read_text())
    assert defaults["slurm_power_save_modules"] == []  # empty: derived where the role runs
    assert tuple(filter_plugins("power_save").controller_modules(str(ROOT))) == CONTROLLER_MODULES
    assert {"clusterforge/powersave/programs.py", "clusterforge/bmc/redfish.py",
            "clusterforge/targets/onprem/powersave.py"} <= set(CONTROLLER_MODULES)
    assert not [m for m in CONTROLLER_MODULES if m.startswith("clusterforge/targets/") and m.endswith("__init__.py")]


def test_the_role_says_where_to_find_the_modules_when_its_source_has_none(tmp_path: Path) -> None:
    from ansible.errors import AnsibleFilterError

    with pytest.raises(AnsibleFilterError, match=r"holds no clusterforge/powersave/payload\.py"):
        filter_plugins("power_save").controller_modules(str(tmp_path))


def test_the_aws_roles_bundle_carries_them() -> None:
    carried = {p.relative_to(ROOT).as_posix() for p in bundle_paths(ROOT)}
    assert set(CONTROLLER_MODULES) <= carried
    assert not any(p.startswith("clusterforge/") and p not in CONTROLLER_MODULES for p in carried)


def controller_copy(root: Path, source: Path = ROOT) -> Path:
    """Exactly the files the role derives from `source`, under `root`, as the role lays them out on a controller."""
    for module in controller_modules(source):
        target = root / module
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((source / module).read_bytes())
    return root


def isolated(code: str, copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh `python -I -S` whose path is the copy, then pydantic's (and boto3's) site-packages."""
    prelude = "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; "
    return subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code, str(copy),
                           sysconfig.get_paths()["purelib"], *args], capture_output=True, text=True, check=False)


def test_the_modules_alone_run_the_programs(tmp_path: Path) -> None:
    """Only the listed files and pydantic: the rest of clusterforge (click, the blueprint model) is not there."""
    code = ("import clusterforge; from clusterforge.powersave.programs import resume_main; "
            "assert clusterforge.__file__.startswith(sys.argv[1]), clusterforge.__file__; "
            "sys.exit(resume_main(['--help']))")
    result = isolated(code, controller_copy(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "slurmctld's ResumeProgram" in result.stdout


def test_a_module_split_in_two_is_copied_as_two_without_an_edit(tmp_path: Path) -> None:
    """Splitting a module the programs import (core/hostlist.py: its code moved to a new module it re-exports) in a
    copy of the tree: the derived payload names the new module, and a controller copy made from it runs the
    programs; the payload as it was before the split (a list kept by hand) leaves the new module out, and fails."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "clusterforge", tree / "clusterforge", ignore=shutil.ignore_patterns("__pycache__"))
    hostlist = tree / "clusterforge" / "core" / "hostlist.py"
    (hostlist.parent / "hostlist_ranges.py").write_text(hostlist.read_text())
    hostlist.write_text('"""Hostlists (split: the code is in hostlist_ranges)."""\n'
                        "from clusterforge.core.hostlist_ranges import *  # noqa: F403\n")
    derived = controller_modules(tree)
    assert "clusterforge/core/hostlist_ranges.py" in derived
    assert set(derived) - set(CONTROLLER_MODULES) == {"clusterforge/core/hostlist_ranges.py"}
    code = "from clusterforge.powersave.programs import resume_main; sys.exit(resume_main(['--help']))"
    assert isolated(code, controller_copy(tmp_path / "derived", tree)).returncode == 0
    stale = tmp_path / "stale"
    for module in CONTROLLER_MODULES:  # what a hand-kept list named before the split
        (stale / module).parent.mkdir(parents=True, exist_ok=True)
        (stale / module).write_bytes((tree / module).read_bytes())
    failed = isolated(code, stale)
    assert failed.returncode != 0 and "hostlist_ranges" in failed.stderr, failed.stderr


# What a provider's import must not run: the target packages' __init__ (the registry, the blueprint model, the
# catalog) would need modules a controller does not have, and the registry imports every target.
HEAVY = ("clusterforge.catalog", "clusterforge.model", "clusterforge.policies", "clusterforge.render")
PROVIDER_IMPORT = """import importlib, json
from clusterforge.powersave.config import PowerSaveConfig
from clusterforge.powersave.programs import provider_for
provider = sys.argv[3]
made = provider_for(PowerSaveConfig(cluster="c1", provider=provider, region="us-east-1", groups=()))
namespace = sys.modules["clusterforge.targets"]
package = sys.modules["clusterforge.targets." + provider]
loaded = {name: getattr(module, "__file__", None) for name, module in sys.modules.items()
          if name.startswith("clusterforge")}
print(json.dumps({"class": type(made).__name__, "namespaces": [getattr(namespace, "__file__", None),
                  getattr(package, "__file__", None)], "loaded": loaded}))
"""


@pytest.mark.parametrize("target", sorted(t.name for t in registered().values() if node_power(t) is not None))
def test_each_provider_imports_from_the_copy_as_a_namespace_package(tmp_path: Path, target: str) -> None:
    """The provider of each target that has one (the file names the target) is made by the programs from a copy
    of exactly the derived modules: clusterforge/targets and the target's folder are namespace packages there, so
    nothing of the target's package or of the rest of clusterforge runs."""
    pytest.importorskip("boto3")  # the EC2 provider makes its client when it is made
    power = node_power(registered()[target])
    assert power is not None
    provider = power.provider
    result = isolated(PROVIDER_IMPORT, controller_copy(tmp_path), target)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["class"] == provider.__name__
    assert found["namespaces"] == [None, None]  # no __init__.py: PEP 420 namespace packages
    assert all(str(file).startswith(str(tmp_path)) for file in found["loaded"].values() if file), found["loaded"]
    assert not [name for name in found["loaded"] if name.startswith(HEAVY)]


def test_the_role_installs_what_the_file_says_its_provider_needs_and_names_no_target() -> None:
    """Render writes the provider's OS_PACKAGES and CONTROLLER_FILES into the power-save file; the slurm role
    installs and checks those, and compares with no target's name (a new target's provider needs no role edit)."""
    import re

    from clusterforge.targets.aws.powersave import Ec2Provider
    from clusterforge.targets.onprem.powersave import BmcProvider

    tasks = ROOT / "roles" / "slurm" / "tasks"
    assert "include_tasks: power_save_on.yml" in (tasks / "power_save.yml").read_text()
    text = (tasks / "power_save_on.yml").read_text()
    assert "controller_packages" in text and "controller_files" in text
    assert [name for name in registered() if re.search(rf"""['"]{name}['"]""", text)] == []
    assert Ec2Provider.OS_PACKAGES == ("python3-boto3",)
    assert {"python3-sushy", "python3-pyghmi", "python3-yaml"} == set(BmcProvider.OS_PACKAGES)
    assert BmcProvider.CONTROLLER_FILES == ("clusterforge-bmcs.yaml", "clusterforge-bmc.credentials")
    sources = yaml.safe_load(text)
    [check] = [task for task in sources if task["name"] == "The files the provider reads have a source"]
    assert set(check["vars"]["slurm_power_save_sources"]) == set(BmcProvider.CONTROLLER_FILES)
