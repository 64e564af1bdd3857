"""One release runs everything: the wheel and the sdist `python -m build` makes, and the collection
`ansible-galaxy collection build` makes, used as a team uses them, outside any checkout.

The wheel is installed into a fresh virtual environment in a temporary folder, with nothing of this checkout on
its path: its dependencies come from a wheelhouse of the pinned releases (scripts/test downloads it into
.cache/wheelhouse before the tests; the install itself is offline), and every command runs from another folder,
with CLUSTERFORGE_ANSIBLE_DIR unset. The lab tier runs `lab up` from the same install (tests/lab/test_lab_bare.py)
and provisions lab nodes with the installed collection (tests/lab/test_lab.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clusterforge.core.version import __version__
from clusterforge.powersave.payload import controller_modules
from tests.conftest import EXAMPLES, ROOT

WHEELHOUSE = ROOT / ".cache" / "wheelhouse"
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())


def build(out: Path) -> Path:
    """The sdist and the wheel into `out`, built as a release builds them (offline: the build backend is this
    venv's); the wheel's path."""
    # One build at a time in this checkout: the sdist's egg-info and build/ are written in the tree itself, and two
    # lab modules that each need the release (test_lab's and the metal lab's, on two xdist workers) built at once and
    # one failed in a clean-clone CI run with the metal lab.
    import fcntl

    lock_file = ROOT / ".cache" / "release-build.lock"
    lock_file.parent.mkdir(exist_ok=True)
    with lock_file.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                       check=True, capture_output=True, text=True)
    (found,) = out.glob("clusterforge-*.whl")
    return found


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    build(out)
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("clusterforge-*.whl")
    return found


def installed_env(root: Path, wheel: Path) -> dict[str, str]:
    """A fresh environment holding the wheel and its dependencies, and the environment to run it in."""
    if not WHEELHOUSE.is_dir():
        pytest.skip("no wheelhouse: scripts/test downloads the pinned dependencies into .cache/wheelhouse")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    # this pip installs into the new environment (--python); no bytecode: Ansible's 30,000 files compile later
    subprocess.run([sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "-q",
                    "--no-compile", "--no-index", "--find-links", str(WHEELHOUSE), "-c",
                    str(ROOT / "requirements" / "lock.txt"), f"{wheel}[ansible,bmc]"], check=True, capture_output=True,
                   text=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLUSTERFORGE_", "ANSIBLE_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{root / 'bin'}{os.pathsep}/usr/bin:/bin"
    env["CLUSTERFORGE_CACHE"] = str(root / "cache")
    return env


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    root = tmp_path_factory.mktemp("pipx") / "clusterforge"
    env = installed_env(root, wheel)
    work = tmp_path_factory.mktemp("team")
    yield work, env
    shutil.rmtree(root, ignore_errors=True)


def run(installed: tuple[Path, dict[str, str]], *args: str, code: int | tuple[int, ...] = 0) -> str:
    work, env = installed
    done = subprocess.run(["clusterforge", *args], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    allowed = code if isinstance(code, tuple) else (code,)
    assert done.returncode in allowed, (args, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout + done.stderr


def test_one_version_everywhere() -> None:
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    pack = yaml.safe_load((ROOT / "policy-pack" / "PulumiPolicy.yaml").read_text())
    changelog = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert changelog is not None
    assert galaxy["version"] == pack["version"] == changelog.group(1) == __version__


def test_the_wheel_and_the_sdist_hold_everything_every_command_reads(dist: Path, wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    bundled = "clusterforge/bundled/"
    for needed in ("site.yml", "provisioning.yml", "ansible.cfg", "galaxy.yml", "meta/runtime.yml",
                   "plugins/filter/packages.py", "stacks/aws/__main__.py", "stacks/aws/Pulumi.yaml",
                   "policy-pack/__main__.py", "policy-pack/PulumiPolicy.yaml", "examples/jobs/train.py",
                   "requirements/lock.txt",
                   *(f"roles/{role}/tasks/main.yml" for role in ROLES),
                   *(f"roles/{role}/meta/argument_specs.yml" for role in ROLES),
                   *(f"templates/{t.name}/params.yaml" for t in (ROOT / "templates").iterdir() if t.is_dir())):
        assert bundled + needed in names, needed
    assert "clusterforge/lab/data/blueprint.yaml" in names and "clusterforge/catalog/data/servers.yaml" in names
    # the power-save programs' modules beside site.yml, where the slurm role copies them from
    assert {bundled + module for module in controller_modules(ROOT)} <= names
    assert not [n for n in names if "__pycache__" in n or "/venv/" in n or n.startswith(("tests/", "docs/"))]
    (sdist,) = dist.glob("clusterforge-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {"setup.py", "site.yml", "galaxy.yml", "roles/slurm/tasks/main.yml", "plugins/filter/packages.py"} <= members


def test_every_command_runs_from_the_installed_wheel_outside_any_checkout(installed: tuple[Path, dict[str, str]],
                                                                          tmp_path: Path) -> None:
    work, env = installed
    where = subprocess.run(["python", "-c", "import clusterforge; print(clusterforge.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert not where.startswith(str(ROOT)), where  # the wheel's copy, not this checkout's
    # the slurm role's filter, run on the installed copy it copies from, derives what this checkout does
    derive = ("import clusterforge, importlib.util, json, pathlib; "
              "tree = pathlib.Path(clusterforge.__file__).parent / 'bundled'; "
              "spec = importlib.util.spec_from_file_location('f', tree / 'plugins/filter/power_save.py'); "
              "f = importlib.util.module_from_spec(spec); spec.loader.exec_module(f); "
              "print(json.dumps(f.controller_modules(str(tree))))")
    derived = subprocess.run(["python", "-c", derive], cwd=work, env=env, capture_output=True, text=True, check=True)
    assert tuple(json.loads(derived.stdout)) == controller_modules(ROOT)
    assert run(installed, "--version").strip().endswith(__version__)
    blueprint = work / "hall.yaml"
    shutil.copy(EXAMPLES / "onprem-dgx-h100.yaml", blueprint)
    run(installed, "validate", str(blueprint))
    run(installed, "check", str(blueprint))
    run(installed, "plan", str(blueprint))
    run(installed, "cost", str(blueprint))
    run(installed, "schema", "-o", str(work / "schema.json"))
    run(installed, "report", str(blueprint), "-o", str(work / "report.html"))
    assert "new-team" in run(installed, "new", "onprem-dev", "--set", "name=new-team")  # templates ship too
    assert "onprem-dev" in run(installed, "new", "--list")
    out = work / "out"
    run(installed, "render", str(blueprint), "-o", str(out))
    assert (out / "manifest.json").is_file()  # render reads the roles' declarations
    hosts = run(installed, "provision", str(out), "--list-hosts")
    assert "gpu-0001" in hosts  # site.yml and every role parsed from the installed copy
    assert "would" in run(installed, "image", "build", str(blueprint), "--dry-run").lower()
    aws = work / "aws.yaml"
    shutil.copy(EXAMPLES / "aws-p5.yaml", aws)
    run(installed, "check", str(aws))
    grown = work / "grown.yaml"
    grown.write_text(aws.read_text().replace("count: 64,", "count: 64, max_count: 96,", 1))
    assert "gpu-" in run(installed, "diff", str(aws), str(grown))
    from tests.test_health_perf import fleet_lines, saved

    perf = work / "perf.lines"
    perf.write_text(saved(fleet_lines(4)))
    assert "4 answered" in run(installed, "health", "perf", "--from", str(perf))


def test_power_runs_from_the_installed_wheel(installed: tuple[Path, dict[str, str]]) -> None:
    """`power` with the bmc extra (sushy) powers a stand-in BMC off."""
    from tests.bmc_standins import standin

    work, env = installed
    with standin("honest") as bmc:
        document = work / "bmcs.yaml"
        document.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": {"url": bmc.url}}}))
        login = {**env, "CLUSTERFORGE_BMC_USERNAME": "admin", "CLUSTERFORGE_BMC_PASSWORD": "x"}
        done = subprocess.run(["clusterforge", "power", "off", "gpu-0001", "--bmcs", str(document)], cwd=work,
                              env=login, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Off" in done.stdout and bmc.power == "Off", done.stdout + done.stderr


def test_the_collection_builds_installs_and_is_used_by_its_full_names(tmp_path: Path) -> None:
    """`ansible-galaxy collection build` at the top of the tree; a playbook of a team's own, in another folder,
    names the roles clusterforge.cluster.*, and Ansible resolves every role and the roles' own filter."""
    galaxy = shutil.which("ansible-galaxy", path=str(Path(sys.executable).parent))
    assert galaxy is not None
    subprocess.run([galaxy, "collection", "build", str(ROOT), "--output-path", str(tmp_path)], check=True,
                   capture_output=True, text=True)
    (tarball,) = tmp_path.glob("clusterforge-cluster-*.tar.gz")
    assert tarball.name == f"clusterforge-cluster-{__version__}.tar.gz"
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    assert {"galaxy.yml", "MANIFEST.json", "meta/runtime.yml", "plugins/filter/packages.py"} <= names or \
        {"MANIFEST.json", "meta/runtime.yml", "plugins/filter/packages.py"} <= names
    assert all(f"roles/{role}/tasks/main.yml" in names for role in ROLES)
    assert not [n for n in names if n.startswith(("clusterforge/", "tests/", "docs/", "stacks/", ".git"))]
    collections = tmp_path / "collections"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")},
           "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_HOME": str(tmp_path / "home"),
           "ANSIBLE_LOCALHOST_WARNING": "False", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "False"}
    # only the tarball: the tests' own link to this tree as clusterforge.cluster is not on this path
    subprocess.run([galaxy, "collection", "install", str(tarball), "-p", str(collections)], check=True,
                   capture_output=True, text=True, env=env)
    assert (collections / "ansible_collections" / "clusterforge" / "cluster" / "MANIFEST.json").is_file()
    team = tmp_path / "team"
    team.mkdir()
    (team / "cluster.yml").write_text(yaml.safe_dump([{
        "name": "Our nodes", "hosts": "all", "gather_facts": False, "become": True,
        "roles": [f"clusterforge.cluster.{role}" for role in ("common", "munge", "slurm")],
    }], sort_keys=False))
    (team / "filter.yml").write_text(yaml.safe_dump([{
        "name": "The roles' filter by its full name", "hosts": "localhost", "gather_facts": False,
        "tasks": [{"name": "Missing packages are found",
                   "ansible.builtin.assert": {"that": "['a=1.*', 'b'] | clusterforge.cluster.missing_packages("
                                                      "['a 1.2 installed']) == ['b']"}}],
    }], sort_keys=False))
    playbook = str(Path(sys.executable).parent / "ansible-playbook")
    syntax = subprocess.run([playbook, "--syntax-check", "-i", "localhost,", "cluster.yml"], cwd=team, env=env,
                            capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    used = subprocess.run([playbook, "-i", "localhost,", "-c", "local", "filter.yml"], cwd=team, env=env,
                          capture_output=True, text=True)
    assert used.returncode == 0, used.stdout[-2000:] + used.stderr[-2000:]


def test_json_of_the_installed_schema_names_the_release(installed: tuple[Path, dict[str, str]]) -> None:
    work, _ = installed
    run(installed, "schema", "-o", str(work / "s.json"))
    assert __version__ in json.loads((work / "s.json").read_text())["$id"]
