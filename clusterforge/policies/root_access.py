"""What in a blueprint a daemon or a role running as root would run, load, write, mount over or chown.

slurmctld and slurmd run as root, and so do the roles that mount file systems and create SLURM's folders. A pull
request must not be able to choose a program they run (`HealthCheckProgram`), a file they write (`SlurmdLogFile:
/etc/ld.so.preload`), a plugin folder, a remote endpoint, confinement switched off (`TaskPlugin: task/none`,
`ConstrainDevices: no`), or a system folder to mount over or chown (`storage.shared.mount: /etc`). So:

- a restricted `slurm.settings` / `slurm.cgroup_settings` key (classed by catalog/slurm_parameters.py's data, with
  the reason) is refused unless the policy config allows that key with that exact value;
- mount points are at or under an allowed prefix (MOUNT_PREFIXES, those of the targets' own file systems,
  its `BlueprintPart.mount_prefixes`, plus the policy config's `storage.mount_prefixes`); slurmctld's state and
  job_container/tmpfs's base folder are folders of their own below one (or below /var/spool/slurmctld); the job's
  private folders (`dirs`) are temporary folders or under a prefix.

This needs the policy config, which the blueprint loader does not read, so analysis.analyze runs it right after
loading: every command that judges, plans or renders a blueprint (`check`, `plan`, `render` with or without
`--force`, `report`, the stack guard and the CrossGuard pack) refuses the same blueprints with exit 2, before any
rule runs or any file is written. A policy rule would not do: rules can be waived and `render --force` ignores them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

from clusterforge.catalog.slurm_parameters import releases, restricted
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.files.yamlsource import PathKey, Source
from clusterforge.model.blueprint import Cluster
from clusterforge.policies.config import PolicyConfig

MOUNT_PREFIXES = ("/data", "/datasets", "/gpfs", "/home", "/local", "/lustre", "/mnt", "/nfs", "/projects", "/scratch",
                  "/shared", "/srv", "/work")
"""Where file systems may be mounted by default: data folders, never a system one (/etc, /usr, /var, /root, ...)."""


def default_prefixes() -> tuple[str, ...]:
    """MOUNT_PREFIXES and every registered target's own (where its managed file system mounts by default), sorted."""
    from clusterforge.target_kernel import blueprint_part, registered

    return tuple(sorted({*MOUNT_PREFIXES, *(p for target in registered().values()
                                           for p in blueprint_part(target).mount_prefixes)}))

STATE_PREFIXES = ("/var/spool/slurmctld",)
"""Besides a folder below a mount prefix, where slurmctld's state may be (Debian's packages create it)."""

JOB_TMP_DIRS = ("/tmp", "/dev/shm", "/var/tmp")
"""Folders job_container/tmpfs may make private to each job, besides those under a mount prefix."""

_SETTINGS: dict[str, tuple[Literal["slurm_conf", "cgroup_conf"], str]] = {
    "settings": ("slurm_conf", "allowed_settings"), "cgroup_settings": ("cgroup_conf", "allowed_cgroup_settings")}


def _under(path: str, prefixes: tuple[str, ...], *, strictly: bool = False) -> bool:
    """Whether `path` is one of `prefixes` (unless `strictly`) or below one. Paths are MountPath: no '..'."""
    return any(path.startswith(prefix + "/") or (not strictly and path == prefix) for prefix in prefixes)


def _documented(file: Literal["slurm_conf", "cgroup_conf"], key: str) -> str:
    """`key` as the man pages spell it (SLURM ignores case), so the message and the allowance name it so."""
    return next((name for params in reversed(releases().values()) if (name := params.canonical(file, key))), key)


def _settings_problems(settings: Mapping[str, str], field: str, allowed: Mapping[str, list[str]],
                       source: Source) -> Iterator[Problem]:
    if not settings:
        return  # most blueprints set none: the parameter data is not even read
    file, option = _SETTINGS[field]
    rules = restricted()
    allowances = {key.lower(): values for key, values in allowed.items()}
    for key, value in settings.items():
        why = rules.why(file, key, value)
        if why is None or value in allowances.get(key.lower(), []):
            continue
        name, granted = _documented(file, key), allowances.get(key.lower())
        also = f" (it allows {', '.join(shown(v) for v in granted)})" if granted else ""
        yield source.problem(
            ("slurm", field, key), f"{name}={shown(value)} needs the platform team's allowance: {why}",
            f"remove it, or have the policy config allow exactly this value{also} in slurm.{option}: "
            f"{{{name}: [{shown(value)}]}}")


def _path_problem(path: PathKey, value: str, what: str, allowed: tuple[str, ...], source: Source) -> Problem:
    return source.problem(path, f"{shown(value)} is not {what}: a role running as root would mount over or chown it",
                          f"use a folder under {', '.join(allowed)}, or add a prefix to the policy config's "
                          "storage.mount_prefixes")


def _path_problems(cluster: Cluster, source: Source, prefixes: tuple[str, ...]) -> Iterator[Problem]:
    storage = cluster.storage
    mounts: list[tuple[PathKey, str]] = []
    if storage.shared is not None:
        mounts.append((("storage", "shared", "mount"), storage.shared.mount))
    if storage.lustre is not None:
        mounts.append((("storage", "lustre", "mount"), storage.lustre.mount))
    for path, mount in mounts:
        if not _under(mount, prefixes):
            yield _path_problem(path, mount, "an allowed mount point", prefixes, source)
    slurm = cluster.slurm
    state = slurm.state_save_location
    if not (_under(state, STATE_PREFIXES) or _under(state, prefixes, strictly=True)):
        yield _path_problem(("slurm", "state_save_location"), state, "a folder of its own for slurmctld's state",
                            (*STATE_PREFIXES, *prefixes), source)
    tmpfs = slurm.job_container_tmpfs
    if tmpfs is None:
        return
    if not _under(tmpfs.base_path, prefixes, strictly=True):
        yield _path_problem(("slurm", "job_container_tmpfs", "base_path"), tmpfs.base_path,
                            "a folder of its own for job_container/tmpfs", prefixes, source)
    for i, folder in enumerate(tmpfs.dirs):
        if not _under(folder, (*JOB_TMP_DIRS, *prefixes)):
            yield _path_problem(("slurm", "job_container_tmpfs", "dirs", i), folder,
                                "a temporary folder a job may have of its own", (*JOB_TMP_DIRS, *prefixes), source)


def root_access_problems(cluster: Cluster, source: Source, config: PolicyConfig) -> list[Problem]:
    """Every restricted setting the policy config does not allow and every mount point or SLURM folder outside
    the allowed prefixes."""
    allowances = config.slurm
    out = [*_settings_problems(cluster.slurm.settings, "settings", allowances.allowed_settings, source),
           *_settings_problems(cluster.slurm.cgroup_settings, "cgroup_settings", allowances.allowed_cgroup_settings,
                               source)]
    out += _path_problems(cluster, source, (*default_prefixes(), *config.storage.mount_prefixes))
    return out


def refuse_root_access(cluster: Cluster, source: Source, config: PolicyConfig) -> None:
    """Raise the input error of root_access_problems, if any."""
    problems = root_access_problems(cluster, source, config)
    if problems:
        raise ClusterforgeError(sorted(problems, key=lambda p: p.line))
