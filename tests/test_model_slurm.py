"""The `slurm:` and `storage.shared` sections: defaults, and each invalid value refused at load with its line."""

from __future__ import annotations

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.model import Slurm, Software
from tests.located import assert_located

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
    assert cluster.storage.shared is not None and cluster.storage.shared.options == "defaults,_netdev,nosuid,nodev"
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
    assert_located(BASE, old, new, needle, path, fragment)


def test_the_cli_refuses_a_line_break_in_a_setting_with_file_and_line(cli, write) -> None:
    path = write(BASE.replace('SlurmctldTimeout: 10}', 'SlurmctldTimeout: "10\\nSlurmctldHost=evil"}'))
    for command in ("validate", "check", "render"):
        args = [command, path] + (["-o", path.parent / "out"] if command == "render" else [])
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert f"{path}:{_line('SlurmctldTimeout')}: slurm.settings.SlurmctldTimeout: " in result.output
        assert "Traceback" not in result.output
    assert not (path.parent / "out").exists()


# What a daemon or role running as root would run, write, load, mount over or chown (policies/root_access.py).

ROOT_REFUSED = [
    ("settings: {HealthCheckProgram: /tmp/hc}", "HealthCheckProgram", "runs this program"),
    ("settings: {SlurmdPidFile: /etc/shadow}", "SlurmdPidFile", "writes or reads this file"),
    ("settings: {slurmdlogfile: /etc/ld.so.preload}", "SlurmdLogFile", "writes or reads this file"),
    ("settings: {PluginDir: /tmp/plugins}", "PluginDir", "loads from"),
    ("settings: {JobCompLoc: 'http://x.example:9200/x'}", "JobCompLoc", "writes or reads"),
    ("settings: {JobCompHost: x.example}", "JobCompHost", "another host"),
    ("settings: {TaskPlugin: task/none}", "TaskPlugin", "plugin"),
    ("settings: {ProctrackType: proctrack/linuxproc}", "ProctrackType", "plugin"),
    ("settings: {AuthType: auth/jwt}", "AuthType", "plugin"),
    ("settings: {AuthInfo: 'cred_expire=30,socket=/tmp/m'}", "AuthInfo", "password, a key"),
    ("settings: {SlurmdUser: root}", "SlurmdUser", "the user a daemon runs as"),
    ("settings: {PrologSlurmctld: /tmp/p}", "PrologSlurmctld", "runs this program"),
    ("settings: {JobSubmitPlugins: lua}", "JobSubmitPlugins", "plugin"),
    ("cgroup_settings: {ConstrainDevices: 'no'}", "ConstrainDevices", "confinement"),
    ("cgroup_settings: {CgroupMountpoint: /tmp/cg}", "CgroupMountpoint", "folder"),
    ("state_save_location: /etc", "slurm.state_save_location", "folder of its own"),
    ("state_save_location: /var/spool", "slurm.state_save_location", "folder of its own"),
    ("state_save_location: /shared", "slurm.state_save_location", "folder of its own"),
    ("job_container_tmpfs: {base_path: /root}", "base_path", "folder of its own"),
    ("job_container_tmpfs: {base_path: /local/t, dirs: [/etc]}", "dirs[0]", "temporary folder"),
]


ROOT_BASE = BASE[:BASE.index("slurm:\n")] + "slurm:\n  partitions: [{name: train, pools: [gpu]}]\n"


def _with(line: str) -> str:
    return ROOT_BASE + "  " + line + "\n"


def _refusal(text: str, policy: str = "") -> str:
    import yaml

    from clusterforge.core.errors import ClusterforgeError as Error
    from clusterforge.policies.config import PolicyConfig
    from clusterforge.policies.root_access import refuse_root_access

    loaded = load_text(text, "bp.yaml")
    config = PolicyConfig.model_validate(yaml.safe_load(policy) or {})
    try:
        refuse_root_access(loaded.cluster, loaded.source, config)
    except Error as error:
        return "\n".join(p.render() for p in error.problems)
    return ""


@pytest.mark.parametrize(("line", "name", "why"), ROOT_REFUSED, ids=[c[0] for c in ROOT_REFUSED])
def test_root_access_is_refused_naming_the_key_and_why(line: str, name: str, why: str) -> None:
    shown = _refusal(_with(line))
    assert name in shown and why in shown and "bp.yaml:" in shown, shown


ROOT_ALLOWED = [
    ("settings: {AuthInfo: cred_expire=30}", ""),  # only options that name nothing
    ("settings: {TaskPlugin: 'task/affinity,task/cgroup'}", ""),  # confinement kept
    ("settings: {SchedulerType: sched/builtin, GresTypes: gpu}", ""),  # exceptions with their reasons
    ("cgroup_settings: {ConstrainDevices: 'yes', AllowedRAMSpace: 98}", ""),
    ("settings: {HealthCheckProgram: /usr/local/sbin/nhc}",
     "slurm: {allowed_settings: {healthcheckprogram: [/usr/local/sbin/nhc]}}"),
    ("cgroup_settings: {ConstrainCores: 'no'}", "slurm: {allowed_cgroup_settings: {ConstrainCores: ['no']}}"),
    ("state_save_location: /var/spool/slurmctld/cluster", ""),
    ("job_container_tmpfs: {base_path: /gpfs/tmp, dirs: [/tmp, /dev/shm, /scratch/x]}",
     "storage: {mount_prefixes: [/gpfs]}"),
]


@pytest.mark.parametrize(("line", "policy"), ROOT_ALLOWED, ids=[c[0] for c in ROOT_ALLOWED])
def test_root_access_allowed(line: str, policy: str) -> None:
    assert _refusal(_with(line), policy) == ""


def test_an_allowance_is_for_its_exact_value() -> None:
    shown = _refusal(_with("settings: {HealthCheckProgram: /tmp/hc}"),
                     "slurm: {allowed_settings: {HealthCheckProgram: [/usr/local/sbin/nhc]}}")
    assert "it allows '/usr/local/sbin/nhc'" in shown and "slurm.allowed_settings" in shown, shown


@pytest.mark.parametrize("mount", ["/etc/slurm/prolog.d", "/usr/local/sbin", "/root", "/var/lib/x", "/boot", "/opt"])
def test_mount_points_on_system_folders_are_refused(mount: str) -> None:
    shown = _refusal(ROOT_BASE.replace("lustre: {mount: /lustre}", f"lustre: {{mount: {mount}}}"))
    assert "storage.lustre.mount" in shown and "mount_prefixes" in shown, shown
    assert _refusal(ROOT_BASE.replace("lustre: {mount: /lustre}", f"lustre: {{mount: {mount}}}"),
                    f"storage: {{mount_prefixes: [{mount}]}}") == ""


@pytest.mark.parametrize("options", ["suid", "defaults,_netdev,dev", "rw,SUID,nodev"])
def test_suid_and_dev_mount_options_are_refused(options: str) -> None:
    with pytest.raises(ClusterforgeError, match=r"suid|dev"):
        load_text(ROOT_BASE.replace('source: "nfs-01:/export/shared"}', f'source: "n:/x", options: "{options}"}}'))


def test_every_classified_key_is_a_parameter() -> None:
    """The data's explicit keys, exceptions and safe lists name real parameters, so a typo cannot leave one out."""
    from clusterforge.catalog.slurm_parameters import releases, restricted

    rules = restricted()
    known = {file: {k.lower() for r in releases().values() for k in r.known(file)}
             for file in ("slurm_conf", "cgroup_conf")}
    everything = known["slurm_conf"] | known["cgroup_conf"]
    assert set(rules.keys["slurm_conf"]) <= known["slurm_conf"]
    assert set(rules.keys["cgroup_conf"]) <= known["cgroup_conf"]
    assert set(rules.exceptions) | set(rules.safe) | set(rules.safe_options) <= everything
