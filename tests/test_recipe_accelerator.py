"""docs/contributing.md's accelerator recipe, performed: the vendor module it shows, added to the registry's path
from a temporary folder, is all it takes for a site catalog to name the vendor and for gres.conf, SW-004, the group
vars and the day-two effects to follow it.

The registry finds its modules on `clusterforge.accelerators.__path__` at first use, so each step runs in a fresh
process that adds the folder to that path, exactly as a new file in the package would be found.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterforge.render.yamlout import load
from tests.test_contributing import DOC, EXAMPLE, ROOT
from tests.test_contributing import RUNNER as PACKAGE_RUNNER

RUNNER = PACKAGE_RUNNER.format(package="clusterforge.accelerators")

EFFECTS = """\
import sys
import clusterforge.accelerators as package
package.__path__.append(sys.argv[1])
from clusterforge.render.change_classes import group_var_effects
for key in sys.argv[2:]:
    [effect] = group_var_effects(key)
    print(key, effect.action.name, effect.hosts)
"""


def code_block(heading: str, language: str) -> str:
    """The first `language` code block under `## heading` of docs/contributing.md."""
    section = DOC.read_text(encoding="utf-8").split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block under {heading!r}"
    return match[1]


def run(script: str, extra: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`script` in a fresh process with `extra` appended to the accelerator registry's path."""
    return subprocess.run([sys.executable, "-c", script, str(extra), *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


@pytest.fixture
def vendor(tmp_path: Path) -> tuple[Path, str, str]:
    """The recipe's module in a folder of its own, a site catalog with a server of its GPUs, and a blueprint of
    that server: (the folder, the vendor's name, the catalog key)."""
    module = code_block("Add an accelerator vendor", "python")
    name = re.search(r'name="([a-z][a-z0-9_-]*)"', module)
    assert name
    folder = tmp_path / "vendors"
    folder.mkdir()
    (folder / f"zz_{name[1]}.py").write_text(module)
    entry = yaml.safe_load(code_block("Add a hardware entry", "yaml"))
    [key] = entry["hardware"]
    entry["hardware"][key]["gpus"] = {"model": "Gaudi3", "count": 8, "memory_gib": 128, "vendor": name[1]}
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(entry, sort_keys=False))
    (tmp_path / "cluster.yaml").write_text(EXAMPLE.read_text().replace("hardware: dgx-h100", f"hardware: {key}"))
    return folder, name[1], key


def test_a_vendor_module_is_all_the_catalog_gres_software_rules_group_vars_and_day_two_need(
        tmp_path: Path, vendor: tuple[Path, str, str]) -> None:
    folder, name, key = vendor
    site, blueprint = str(tmp_path / "site.yaml"), str(tmp_path / "cluster.yaml")

    checked = run(RUNNER, folder, "check", blueprint, "--catalog", site, "--format", "json")
    assert checked.returncode == 1, checked.stderr
    [unpinned] = [f["message"] for f in json.loads(checked.stdout)["findings"] if f["id"] == "SW-004"]
    assert unpinned == f"pool gpu has Intel Gaudi3 ({key}) but no SynapseAI pins: nothing to check or install for it"

    out = tmp_path / "out"
    rendered = run(RUNNER, folder, "render", blueprint, "--catalog", site, "-o", str(out), "--force")
    assert rendered.returncode == 0, rendered.stderr
    assert "Name=gpu Type=gaudi3 File=/dev/accel/accel[0-7]\n" in (out / "slurm" / "gres.conf").read_text()
    everyone = load((out / "inventory" / "group_vars" / "all.yml").read_text())
    assert everyone["gpu_vendor"] == name
    assert (everyone["gaudi_driver_version"], everyone["gaudi_synapseai_version"]) == ("", "")  # not pinned yet

    # its pins are fields of `software:` with the module alone (the blueprint model is composed with them)
    pinned = tmp_path / "pinned.yaml"
    pinned.write_text((tmp_path / "cluster.yaml").read_text()
                      + 'software: {stack: synapseai, habana_driver: "1.21.0", synapseai: "1.21.0"}\n')
    again = run(RUNNER, folder, "render", str(pinned), "--catalog", site, "-o", str(tmp_path / "out2"), "--force")
    assert again.returncode == 0, again.stderr
    pinned_vars = load((tmp_path / "out2" / "inventory" / "group_vars" / "all.yml").read_text())
    assert (pinned_vars["gaudi_driver_version"], pinned_vars["gaudi_synapseai_version"]) == ("1.21.0", "1.21.0")
    rechecked = run(RUNNER, folder, "check", str(pinned), "--catalog", site, "--format", "json")
    assert "SW-004" not in {f["id"] for f in json.loads(rechecked.stdout)["findings"]}, rechecked.stdout

    effects = run(EFFECTS, folder, "gaudi_driver_version", "gaudi_synapseai_version")
    assert effects.returncode == 0, effects.stderr
    assert effects.stdout.splitlines() == [f"gaudi_driver_version REBOOT VendorGpus(vendor='{name}')",
                                           "gaudi_synapseai_version DRAIN gpu"]


def test_without_the_module_the_vendor_is_unknown(tmp_path: Path, vendor: tuple[Path, str, str]) -> None:
    """The test above passes only because the module is on the path: without it the catalog is refused."""
    _, name, _ = vendor
    empty = tmp_path / "none"
    empty.mkdir()
    checked = run(RUNNER, empty, "check", str(tmp_path / "cluster.yaml"), "--catalog", str(tmp_path / "site.yaml"))
    assert checked.returncode == 2
    assert "gpus.vendor: Input should be 'nvidia', 'amd' or 'aws'" in checked.stderr
    assert name not in ("nvidia", "amd", "aws")
