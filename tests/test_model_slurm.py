"""The `slurm:` and `storage.shared` sections: defaults, and each invalid value refused at load with its line."""

from __future__ import annotations

import pytest

from clusterforge.errors import ClusterforgeError
from clusterforge.load import load_text
from clusterforge.model import Slurm, Software

BASE = """\
apiVersion: clusterforge/v1
kind: Cluster
name: t
target: onprem
pools:
  - {name: ctl, hardware: cpu-1u, count: 2, role: controller}
  - {name: gpu, hardware: dgx-h100, count: 4, partition: train}
storage:
  lustre: {mount: /lustre}
  shared: {mount: /shared, source: "nfs-01:/export/shared"}
slurm:
  state_save_location: /shared/slurm/state
  qos:
    - {name: low, priority: 0}
    - {name: high, priority: 1000, preempt: [low], max_wall: "1-00:00:00", grp_tres: "gres/gpu=64,cpu=1024"}
  accounts:
    - {name: physics, description: Physics department, fairshare: 60, qos: [normal, low, high], users: [alice]}
  settings: {SchedulerParameters: "bf_continue,bf_window=4320", SlurmctldTimeout: 10}
  cgroup_settings: {AllowedRAMSpace: 98.5}
  job_container_tmpfs: {base_path: /local/slurm-tmp, dirs: [/tmp, /dev/shm]}
"""


def test_the_defaults() -> None:
    slurm = Slurm()
    assert (slurm.state_save_location, slurm.configless, slurm.mpi, slurm.preempt_mode) == (
        "/var/spool/slurmctld", True, "pmix", "requeue")
    assert (slurm.accounting.enabled, slurm.accounting.pool, slurm.accounting.database) == (True, None,
                                                                                            "slurm_acct_db")
    assert slurm.priority_weights.model_dump() == {"fairshare": 100_000, "qos": 10_000, "age": 1_000,
                                                   "job_size": 0, "partition": 0}
    assert (slurm.qos, slurm.accounts, slurm.settings, slurm.cgroup_settings) == ([], [], {}, {})
    assert (slurm.prolog_epilog, slurm.pam_slurm_adopt, slurm.job_container_tmpfs, slurm.containers) == (
        False, False, None, False)
    assert Software().slurm == "24.11"


def test_a_full_section_loads() -> None:
    cluster = load_text(BASE).cluster
    assert cluster.storage.shared is not None and cluster.storage.shared.options == "defaults,_netdev"
    assert cluster.slurm.settings == {"SchedulerParameters": "bf_continue,bf_window=4320", "SlurmctldTimeout": "10"}
    assert cluster.slurm.cgroup_settings == {"AllowedRAMSpace": "98.5"}  # numbers become their digits


def _line(needle: str) -> int:
    return next(i for i, line in enumerate(BASE.splitlines(), 1) if needle in line)


# (old, new, the line's needle, path, message fragment)
INVALID = [
    ('SlurmctldTimeout: 10}', 'SlurmctldTimeout: "10\\nSlurmctldHost=evil"}', "SlurmctldTimeout",
     "slurm.settings.SlurmctldTimeout", "is not one word"),
    ('SlurmctldTimeout: 10}', 'SlurmctldTimeout: "1 0"}', "SlurmctldTimeout", "slurm.settings.SlurmctldTimeout",
     "is not one word"),
    ('SlurmctldTimeout: 10}', 'SlurmctldTimeout: "10#x"}', "SlurmctldTimeout", "slurm.settings.SlurmctldTimeout",
     "is not one word"),
    ('SlurmctldTimeout: 10}', 'SlurmctldTimeout: yes}', "SlurmctldTimeout", "slurm.settings.SlurmctldTimeout",
     "true is not a SLURM value"),
    ('SlurmctldTimeout: 10}', '"Slurmctld Timeout": 10}', "Slurmctld Timeout", "slurm.settings.Slurmctld Timeout",
     "is not a SLURM parameter name"),
    ('SlurmctldTimeout: 10}', 'NodeName: "gpu-[1-4]"}', "NodeName", "slurm.settings.NodeName",
     "NodeName cannot be set in slurm.settings"),
    ('SlurmctldTimeout: 10}', 'include: /etc/passwd}', "include", "slurm.settings.include",
     "Include cannot be set in slurm.settings: it would make SLURM read a file"),
    ('SlurmctldTimeout: 10}', 'SlurmctldHost: evil}', "SlurmctldHost", "slurm.settings.SlurmctldHost",
     "the controllers are the nodes of the controller pool"),
    ('SlurmctldTimeout: 10}', 'StateSaveLocation: /x}', "StateSaveLocation", "slurm.settings.StateSaveLocation",
     "StateSaveLocation is set by slurm.state_save_location"),
    ('SlurmctldTimeout: 10}', 'schedulerparameters: x}', "schedulerparameters",
     "slurm.settings.schedulerparameters", "is 'SchedulerParameters' again"),
    ("{name: low, priority: 0}", "{name: Low, priority: 0}", "name: Low", "slurm.qos[0].name",
     "is not a SLURM QOS or account name"),
    ('grp_tres: "gres/gpu=64,cpu=1024"', 'grp_tres: "gres/gpu=lots"', "grp_tres", "slurm.qos[1].grp_tres",
     "is not SLURM TRES limits"),
    ("description: Physics department", "description: 'a|b'", "a|b", "slurm.accounts[0].description",
     "is not a short description"),
    ("users: [alice]", "users: ['alice;rm']", "alice;rm", "slurm.accounts[0].users[0]", "is not a user name"),
    ("fairshare: 60", "fairshare: 0", "fairshare: 0", "slurm.accounts[0].fairshare", "greater than or equal to 1"),
    ('source: "nfs-01:/export/shared"', 'source: "nfs-01:/export/../etc"', "nfs-01", "storage.shared.source",
     "is not an NFS export"),
    ("shared: {mount: /shared,", "shared: {mount: /lustre,", "shared: {mount", "storage.shared.mount",
     "both mounted at /lustre"),
    ("state_save_location: /shared/slurm/state", "state_save_location: /shared/../etc",
     "state_save_location", "slurm.state_save_location", "is not an absolute path"),
    ("state_save_location: /shared/slurm/state", "accounting: {pool: ctrl}", "accounting",
     "slurm.accounting.pool", "unknown pool 'ctrl' (did you mean ctl?)"),
    ("state_save_location: /shared/slurm/state", "mpi: openmpi", "mpi:", "slurm.mpi", "'pmix' or 'none'"),
    ("base_path: /local/slurm-tmp", "base_path: local", "base_path", "slurm.job_container_tmpfs.base_path",
     "is not an absolute path"),
]


@pytest.mark.parametrize(("old", "new", "needle", "path", "fragment"), INVALID, ids=[c[3] for c in INVALID])
def test_invalid_values_are_located(old: str, new: str, needle: str, path: str, fragment: str) -> None:
    assert old in BASE
    text = BASE.replace(old, new, 1)
    with pytest.raises(ClusterforgeError) as error:
        load_text(text, "bp.yaml")
    problems = [p for p in error.value.problems if p.path == path]
    assert problems, [p.render() for p in error.value.problems]
    line = next(i for i, row in enumerate(text.splitlines(), 1) if needle in row)
    assert (problems[0].file, problems[0].line) == ("bp.yaml", line)
    assert fragment in problems[0].render(), problems[0].render()


def test_the_cli_refuses_a_line_break_in_a_setting_with_file_and_line(cli, write) -> None:
    path = write(BASE.replace('SlurmctldTimeout: 10}', 'SlurmctldTimeout: "10\\nSlurmctldHost=evil"}'))
    for command in ("validate", "check", "render"):
        args = [command, path] + (["-o", path.parent / "out"] if command == "render" else [])
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert f"{path}:{_line('SlurmctldTimeout')}: slurm.settings.SlurmctldTimeout: " in result.output
        assert "Traceback" not in result.output
    assert not (path.parent / "out").exists()
