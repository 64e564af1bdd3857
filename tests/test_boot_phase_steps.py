"""Which of site.yml's steps a node's boot phase runs (`--skip-tags install`, lab/data/clusterforge-boot and the AWS
user data) and which run where the image is made (`--tags install`: the bake, `image build`, the AMI bake).

What the baked image already holds is checked once, where it is made: the packages at their pins and the health
role's own files. A node booting that image skips those steps; a push (`lab provision`, `clusterforge provision`)
and `--tags verify` still run the checks."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PLAYBOOK = str(Path(sys.executable).with_name("ansible-playbook"))
# the files whose steps the image holds: each role's package checks, and the health role's installed files
IMAGE_STEPS = ("nvidia_driver/tasks/verify.yml", "imex/tasks/packages.yml", "infiniband/tasks/verify.yml",
               "nccl/tasks/verify.yml", "containers/tasks/verify.yml", "efa/tasks/verify.yml",
               "health/tasks/install.yml")
CHECKS = IMAGE_STEPS[:-1]


@cache
def listed(*tags: str) -> frozenset[str]:
    """`role : step` of every step site.yml lists with these tag options (statically imported steps only)."""
    # the collection the roles name is on ANSIBLE_COLLECTIONS_PATH for every test (tests/conftest.py)
    done = subprocess.run([PLAYBOOK, "site.yml", "-i", "localhost,", "--list-tasks", *tags], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return frozenset(line.strip().split("\t")[0] for line in done.stdout.splitlines() if "\tTAGS:" in line)


def steps(part: str) -> list[str]:
    role = part.split("/")[0]
    return [f"{role} : {task['name']}" for task in yaml.safe_load((ROOT / "roles" / part).read_text())]


@pytest.mark.parametrize("part", IMAGE_STEPS)
def test_what_the_image_holds_is_checked_where_it_is_made_and_not_at_every_boot(part: str) -> None:
    assert steps(part)
    for step in steps(part):
        assert step in listed("--tags", "install"), step
        assert step not in listed("--skip-tags", "install"), step
        assert step in listed(), step  # a push runs every step


@pytest.mark.parametrize("part", CHECKS)
def test_a_verify_run_still_checks_the_packages(part: str) -> None:
    for step in steps(part):
        assert step in listed("--tags", "verify"), step


def test_the_boot_phase_still_configures_and_checks_what_a_node_is() -> None:
    """What depends on who a node is stays in the boot phase: its hosts file, munge, SLURM, the health check's
    expectations and run, the IMEX node list."""
    boot = listed("--skip-tags", "install")
    for step in ("common : Hosts file lists every inventory host", "munge : This host makes a munge credential",
                 "health : The health check knows what this node should have",
                 "health : This node passes every check it is configured for",
                 "imex : The node list is this domain's, one address per tray",
                 "slurm : Every compute node of this run has registered with the controller"):
        assert step in boot, step


def test_no_step_runs_as_another_user() -> None:
    """The boot phase runs as root with `ansible_become=false` (lab/data/clusterforge-boot: sudo's lookup of the
    host's name stalled it), which would also turn off a step's `become_user`: such a step would run as root
    there. None has one; a role that needs another user says so with `runuser` or the module's own owner."""
    def switching(node: object) -> list[str]:
        """The names of the steps under `node` (blocks included) that switch user."""
        if isinstance(node, list):
            return [name for item in node for name in switching(item)]
        if not isinstance(node, dict):
            return []
        own = [str(node.get("name"))] if "become_user" in node else []
        return own + [name for key in ("block", "rescue", "always") for name in switching(node.get(key))]

    found = [f"{path.relative_to(ROOT)}: {name}" for path in sorted(ROOT.glob("roles/*/*/*.yml"))
             if path.parent.name in ("tasks", "handlers") for name in switching(yaml.safe_load(path.read_text()))]
    assert found == []
    assert "become_user" not in (ROOT / "site.yml").read_text()
