"""The slurm role's GRES check (roles/slurm/tasks/verify_gres.yml) run by a real ansible-playbook on this machine:
a stand-in `sinfo` answers as slurmctld would, and the pools' `gres` is what `clusterforge render` writes. The role
reads the rendered host var `gres` here, so a node scheduled with other GRES than its pool has fails the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

BIN = Path(sys.executable).parent
TASKS = ROOT / "roles" / "slurm" / "tasks" / "verify_gres.yml"


def run_check(tmp_path: Path, sinfo: str, pools: dict[str, str | None]) -> subprocess.CompletedProcess[str]:
    """The check for compute nodes node-0001.. (one per pool, pools' `gres` as given) against sinfo's lines."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sinfo").write_text(f"#!/bin/sh\ncat <<'END'\n{sinfo}END\n")
    (fake / "sinfo").chmod(0o755)
    children = {f"pool_{index}": {"hosts": {f"node-{index:04}": {}}, "vars": {"gres": gres}}
                for index, gres in enumerate(pools.values(), 1)}
    inventory = {"all": {"hosts": {"ctl-0001": {}},
                         "children": {"slurm_compute": {"children": children}}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    playbook = [{"hosts": "all", "gather_facts": False,
                 "vars": {"slurm_controller": "ctl-0001", "slurm_compute_group": "slurm_compute",
                          "slurm_run_computes": "{{ groups['slurm_compute'] | intersect(ansible_play_hosts) }}"},
                 "tasks": [{"ansible.builtin.import_tasks": str(TASKS)}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(playbook))
    home = tmp_path / "ansible-home"
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "ANSIBLE_HOME": str(home),
           "ANSIBLE_LOCAL_TEMP": str(home / "tmp"), "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
           "ANSIBLE_NOCOLOR": "1"}
    extra = json.dumps({"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                        "ansible_become": False})
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(tmp_path / "hosts.yml"), str(tmp_path / "play.yml"),
                           "-e", extra], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


def test_nodes_scheduled_with_their_pools_gres_pass(tmp_path: Path) -> None:
    """sinfo's socket suffix is not part of the GRES; a pool without GRES is not checked."""
    result = run_check(tmp_path, "node-0001 gpu:h100:8(S:0-1)\nnode-0002 (null)\nctl-0001 (null)\n",
                       {"gpu": "gpu:h100:8", "cpu": None})
    assert result.returncode == 0, result.stdout[-3000:]


def test_a_node_scheduled_with_other_gres_fails_naming_it(tmp_path: Path) -> None:
    result = run_check(tmp_path, "node-0001 gpu:h100:8(S:0-1)\nnode-0002 gpu:a100:8(S:0-1)\n",
                       {"h100": "gpu:h100:8", "h200": "gpu:h200:8"})
    assert result.returncode != 0
    assert "(node: scheduled, pool): node-0002: gpu:a100:8, gpu:h200:8" in result.stdout
    assert "node-0001" not in result.stdout.split("(node: scheduled, pool)")[1]


def test_a_node_slurmctld_does_not_know_fails(tmp_path: Path) -> None:
    result = run_check(tmp_path, "node-0001 gpu:h100:8\n", {"a": "gpu:h100:8", "b": "gpu:h100:8"})
    assert result.returncode != 0
    assert "node-0002: (not in sinfo), gpu:h100:8" in result.stdout
