"""Cross-field shape checks of the `slurm:` section: pass-through settings that would take over what clusterforge
writes, and names that must exist.

`slurm.settings` is merged over the rendered slurm.conf. A key that writes a structural line (NodeName,
PartitionName, ...), names the controllers or makes SLURM read a file clusterforge does not render would break the
rendered configuration, and a key a blueprint field already sets would make the file and the roles disagree
(the roles read the field, slurmctld the setting). Both are refused here, at load, so no command, not even
`render --force`, writes them. Whether a key exists in the pinned release is a policy (SLM-007).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from clusterforge.errors import Problem, shown
from clusterforge.hints import did_you_mean
from clusterforge.model.blueprint import Cluster
from clusterforge.yamlsource import PathKey, Source

_LINES = "clusterforge writes these lines from the pools and partitions"
_HOSTS = "the controllers are the nodes of the controller pool (two nodes: HA)"
_FILES = "it would make SLURM read a file clusterforge does not render"
STRUCTURAL: dict[str, str] = {
    **dict.fromkeys(("NodeName", "PartitionName", "NodeSet", "DownNodes", "FrontendName", "FrontendAddr"), _LINES),
    **dict.fromkeys(("SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController", "BackupAddr"), _HOSTS),
    **dict.fromkeys(("Include", "PlugStackConfig"), _FILES),
}
"""slurm.conf keys no blueprint may set, with why."""

OWNED: dict[str, str] = {
    "ClusterName": "slurm.cluster_name",
    "StateSaveLocation": "slurm.state_save_location",
    "SlurmdTimeout": "slurm.slurmd_timeout_s",
    "PrivateData": "slurm.private_data",
    "MpiDefault": "slurm.mpi",
    "PreemptType": "slurm.qos[].preempt",
    "PreemptMode": "slurm.preempt_mode",
    "AccountingStorageType": "slurm.accounting.enabled",
    "AccountingStorageHost": "slurm.accounting.pool",
    "JobAcctGatherType": "slurm.accounting.enabled",
    "PriorityWeightFairshare": "slurm.priority_weights.fairshare",
    "PriorityWeightQOS": "slurm.priority_weights.qos",
    "PriorityWeightAge": "slurm.priority_weights.age",
    "PriorityWeightJobSize": "slurm.priority_weights.job_size",
    "PriorityWeightPartition": "slurm.priority_weights.partition",
    "JobContainerType": "slurm.job_container_tmpfs",
    "Prolog": "slurm.prolog_epilog",
    "Epilog": "slurm.prolog_epilog",
    "TopologyPlugin": "fabric (topology.conf is rendered from it)",
    "JobRequeue": "slurm.recovery.job_requeue",
    "ReturnToService": "slurm.recovery.return_to_service",
    "RequeueExit": "slurm.recovery.requeue_exit",
    "RequeueExitHold": "slurm.recovery.requeue_exit_hold",
    "ResumeTimeout": "slurm.recovery.resume_timeout_s",
    # power saving (pools[].max_count, slurm.power_save): the programs, and the nodes they may power down
    "ResumeProgram": "pools[].max_count (clusterforge-resume)",
    "SuspendProgram": "pools[].max_count (clusterforge-suspend)",
    "ResumeFailProgram": "pools[].max_count (clusterforge-suspend)",
    "SuspendTime": "slurm.power_save.suspend_time_s",
    "SuspendTimeout": "slurm.power_save.suspend_timeout_s",
    "ResumeRate": "slurm.power_save.resume_rate",
    "SuspendRate": "slurm.power_save.suspend_rate",
    "TreeWidth": "slurm.power_save.tree_width",
    "SuspendExcNodes": "pools[].count (the always-on nodes of power-saved pools)",
    "SuspendExcParts": "slurm.power_save.exclude_partitions",
    "HealthCheckInterval": "operations.health.interval_s",
}
"""slurm.conf keys a blueprint field sets, with the field."""

_STRUCTURAL = {key.lower(): key for key in STRUCTURAL}
_OWNED = {key.lower(): key for key in OWNED}


def _settings_problems(settings: Mapping[str, object], field: str, source: Source, conf: bool) -> Iterator[Problem]:
    """Keys given twice in different case (SLURM reads keys case-insensitively), and for slurm.conf the keys
    clusterforge writes itself."""
    seen: dict[str, str] = {}
    for key in settings:
        path: PathKey = ("slurm", field, key)
        folded = key.lower()
        if folded in seen:
            yield source.problem(path, f"{shown(key)} is {shown(seen[folded])} again (SLURM keys ignore case)",
                                 "keep one of them")
            continue
        seen[folded] = key
        if not conf:
            continue
        if folded in _STRUCTURAL:
            name = _STRUCTURAL[folded]
            yield source.problem(path, f"{name} cannot be set in slurm.{field}: {STRUCTURAL[name]}",
                                 "remove it; describe the cluster with pools, partitions and the fabric")
        elif folded in _OWNED:
            name = _OWNED[folded]
            yield source.problem(path, f"{name} is set by {OWNED[name]}, not slurm.{field}",
                                 f"use {OWNED[name]}")


def slurm_problems(cluster: Cluster, source: Source) -> Iterator[Problem]:
    """What in `slurm:` and `storage.shared` does not fit the rest of the blueprint."""
    slurm = cluster.slurm
    yield from _settings_problems(slurm.settings, "settings", source, conf=True)
    yield from _settings_problems(slurm.cgroup_settings, "cgroup_settings", source, conf=False)
    pool = slurm.accounting.pool
    names = [p.name for p in cluster.pools]
    if pool is not None and pool not in names:
        yield source.problem(("slurm", "accounting", "pool"), f"unknown pool {shown(pool)}", did_you_mean(pool, names))
    monitoring = cluster.operations.monitoring.pool
    if monitoring is not None and monitoring not in names:
        yield source.problem(("operations", "monitoring", "pool"), f"unknown pool {shown(monitoring)}",
                             did_you_mean(monitoring, names))
    recovery = slurm.recovery
    for code in sorted(set(recovery.requeue_exit) & set(recovery.requeue_exit_hold)):
        yield source.problem(("slurm", "recovery", "requeue_exit_hold"), f"exit code {code} is in both "
                             "requeue_exit and requeue_exit_hold", "a code either requeues or holds: keep it in one")
    shared, lustre = cluster.storage.shared, cluster.storage.lustre
    if shared is not None and lustre is not None and shared.mount == lustre.mount:
        yield source.problem(("storage", "shared", "mount"), f"storage.shared and storage.lustre are both mounted "
                             f"at {shared.mount}", "give each file system its own mount point")
