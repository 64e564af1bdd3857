"""The blueprint's `slurm:` section: partitions, accounting, QOS and accounts, HA state, and pass-through settings.

Shape only. Whether a QOS preempts one that exists, whether HA state sits on shared storage or a settings key is
a parameter of the pinned release are policies (SLM-003 onwards); which keys clusterforge writes itself, and so
refuses in `settings`, is model/references.py.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from clusterforge.core.text import (
    MountPath,
    SacctText,
    SlurmKey,
    SlurmName,
    SlurmTime,
    SlurmValue,
    Tres,
    UnixUser,
)
from clusterforge.core.validation import expected
from clusterforge.model.base import Name, SetsSlurm, Strict

STATE_SAVE_LOCATION = "/var/spool/slurmctld"  # slurmctld's state without HA (Debian's packages create it)
DATABASE = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
Database = Annotated[str, StringConstraints(pattern=DATABASE), Field(description=expected(
    DATABASE, "a MariaDB database name: a letter or '_', then letters, digits or '_', e.g. slurm_acct_db"))]
Weight = Annotated[int, Field(ge=0, le=4_294_967_295)]  # slurm.conf PriorityWeight*: 32-bit unsigned
Limit = Annotated[int, Field(ge=0, le=2_147_483_647)]  # sacctmgr job-count limits


def _word(value: object) -> object:
    """A number (`SlurmctldTimeout: 10`) as its digits. A boolean is refused rather than guessed: SLURM spells
    them yes/no, YES/NO or true/false depending on the parameter."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a SLURM value: quote it as the parameter spells it, "
                         "e.g. 'yes' or 'YES'")
    return str(value) if isinstance(value, int | float) else value


# A pass-through parameter's value: one word such as `bf_continue,bf_window=4320`, or an integer.
SettingValue = Annotated[SlurmValue, BeforeValidator(_word, json_schema_input_type=SlurmValue | float)]
Settings = Annotated[dict[SlurmKey, SettingValue], Field(max_length=200)]


class Partition(Strict):
    name: Name
    pools: Annotated[list[Name], Field(min_length=1)]
    default: bool = False
    max_time: SlurmTime = "UNLIMITED"


class Accounting(Strict):
    """slurmdbd with MariaDB: `sacct`, fair share, QOS limits and preemption all need it.

    The daemon runs on the primary controller unless `pool` names a pool of its own (its first node). The
    database password is never in the blueprint or the rendered files: the role makes or reads it."""

    enabled: Annotated[bool, SetsSlurm("AccountingStorageType", "JobAcctGatherType")] = True
    pool: Annotated[Name | None, SetsSlurm("AccountingStorageHost")] = None
    database: Database = "slurm_acct_db"


class Qos(Strict):
    """A quality of service, applied with `sacctmgr`; an option left out is not managed."""

    name: SlurmName
    priority: Annotated[int, Field(ge=0, le=4_294_967_294)] | None = None
    preempt: Annotated[list[SlurmName], Field(max_length=100), SetsSlurm("PreemptType")] = []
    max_wall: SlurmTime | None = None
    grp_tres: Tres | None = None
    max_tres_per_job: Tres | None = None
    max_tres_per_user: Tres | None = None
    max_jobs_per_user: Limit | None = None
    max_submit_jobs_per_user: Limit | None = None
    description: SacctText | None = None


class Account(Strict):
    """A SLURM account (a bank): its share of the machine, the QOS its users may use, and its users."""

    name: SlurmName
    description: SacctText | None = None
    organization: SacctText | None = None
    fairshare: Annotated[int, Field(ge=1, le=2_147_483_647)] | None = None
    qos: Annotated[list[SlurmName], Field(max_length=100)] = []
    default_qos: SlurmName | None = None
    users: Annotated[list[UnixUser], Field(max_length=100_000)] = []


class PriorityWeights(Strict):
    """priority/multifactor weights (slurm.conf PriorityWeight*); the defaults favour fair share, then QOS."""

    fairshare: Annotated[Weight, SetsSlurm("PriorityWeightFairshare")] = 100_000
    qos: Annotated[Weight, SetsSlurm("PriorityWeightQOS")] = 10_000
    age: Annotated[Weight, SetsSlurm("PriorityWeightAge")] = 1_000
    job_size: Annotated[Weight, SetsSlurm("PriorityWeightJobSize")] = 0
    partition: Annotated[Weight, SetsSlurm("PriorityWeightPartition")] = 0


class JobContainerTmpfs(Strict):
    """job_container/tmpfs: each job gets private /tmp and /dev/shm (or `dirs`) under `base_path`, removed at its
    end. `base_path` must be local to each node (job_container.conf(5))."""

    base_path: MountPath
    dirs: Annotated[list[MountPath], Field(max_length=32)] = []


ExitCode = Annotated[int, Field(ge=1, le=255)]


class Recovery(Strict):
    """How a job survives the loss of its node: requeued (`JobRequeue`), eligible again after `cred_expire_s`
    (SLURM's default is 120 s), picked up by the next scheduler pass (`sched_interval_s`; default 60 s), and a
    node SLURM set DOWN for not responding returns by itself when its slurmd registers again. The measured
    effect of each term is in docs/operations.md."""

    job_requeue: Annotated[bool, SetsSlurm("JobRequeue")] = True
    return_to_service: Annotated[Literal[0, 1, 2], SetsSlurm("ReturnToService")] = 1
    cred_expire_s: Annotated[int, Field(ge=5, le=3600)] = 60
    sched_interval_s: Annotated[int, Field(ge=1, le=600)] = 10
    # batch jobs exiting with these codes are requeued (e.g. a wrapper's "NCCL timeout, try again")...
    requeue_exit: Annotated[list[ExitCode], Field(max_length=32), SetsSlurm("RequeueExit")] = []
    # ...and with these requeued and held for a person (`scontrol release`)
    requeue_exit_hold: Annotated[list[ExitCode], Field(max_length=32), SetsSlurm("RequeueExitHold")] = []
    # ResumeTimeout: how long a rebooted node, or with power saving a powered-up one, may take to register before it
    # is DOWN ("reboot timed out", "resume timed out"). SLURM has this one setting for both, so the blueprint has this
    # one field: unset, it is REBOOT_TIMEOUT_S, or POWER_UP_TIMEOUT_S when a pool is power-saved (a cloud launch
    # adds the instance's launch and the image's boot to the server's POST).
    resume_timeout_s: Annotated[Annotated[int, Field(ge=30, le=65_533)] | None, SetsSlurm("ResumeTimeout")] = None

    def resume_timeout(self, power_saving: bool) -> int:
        """ResumeTimeout: the blueprint's, else the default for a cluster with or without power saving."""
        if self.resume_timeout_s is not None:
            return self.resume_timeout_s
        return POWER_UP_TIMEOUT_S if power_saving else REBOOT_TIMEOUT_S


REBOOT_TIMEOUT_S = 900  # a GPU server's firmware POST alone can take several minutes
# ParallelCluster's compute_node_bootstrap_timeout (1,800 s) for a GPU instance from CreateFleet to a registered
# slurmd; its scaling baseline took 1,200 s for 4,000 dynamic nodes to be SLURM-ready (reference/scale.md). SLURM's
# own default (60 s) is far too short for GPU servers.
POWER_UP_TIMEOUT_S = 1800
TREE_WIDTH_MAX = 65_533  # slurm.conf(5): TreeWidth may not exceed 65533


class PowerSave(Strict):
    """How slurmctld powers the nodes of pools with a `max_count` up and down (slurm.conf's power-save settings).

    Defaults are those of the cloud schedulers that run GPU fleets: idle ten minutes before a node is powered
    down (ParallelCluster's ScaledownIdletime), no rate limit on resume or suspend and 300 s for an instance to
    terminate (slurm-gcp v6's cloud_parameters: resume_rate 0, suspend_rate 0, suspend_timeout 300; the
    ParallelCluster cookbook sets ResumeRate=0). ResumeTimeout is `slurm.recovery.resume_timeout_s`, shared with
    reboots. Without `cloud_dns` the nodes are not in DNS: the resume program tells slurmctld each node's address,
    and slurmd cannot forward messages to peers it cannot resolve, so TreeWidth is raised to its maximum (slurmctld
    talks to every node itself), as SchedMD's elastic computing guide says for cloud nodes (reference/scale.md).
    """

    # SuspendTime: idle this long, powered down
    suspend_time_s: Annotated[int, Field(ge=30, le=31_536_000), SetsSlurm("SuspendTime")] = 600
    # SuspendTimeout: the instance is gone by then
    suspend_timeout_s: Annotated[int, Field(ge=10, le=65_533), SetsSlurm("SuspendTimeout")] = 300
    # ResumeRate, nodes per minute (0: unlimited)
    resume_rate: Annotated[int, Field(ge=0, le=1_000_000), SetsSlurm("ResumeRate")] = 0
    # SuspendRate, nodes per minute (0: unlimited)
    suspend_rate: Annotated[int, Field(ge=0, le=1_000_000), SetsSlurm("SuspendRate")] = 0
    # TreeWidth: default above
    tree_width: Annotated[Annotated[int, Field(ge=1, le=TREE_WIDTH_MAX)] | None, SetsSlurm("TreeWidth")] = None
    # the nodes' names resolve in DNS (a private hosted zone): SlurmctldParameters=cloud_dns, SLURM's TreeWidth
    cloud_dns: bool = False
    # partitions whose nodes are never powered down (SuspendExcParts); partitions without a power-saved pool are
    # excluded anyway
    exclude_partitions: Annotated[list[Name], Field(max_length=1000), SetsSlurm("SuspendExcParts")] = []
    # nodes asked of the cloud in one request (the power-save file's batch_size; ParallelCluster's
    # launch_max_batch_size is 500): AWS caps one EC2 Fleet at 10,000 (FLT-003)
    launch_batch_size: Annotated[int, Field(ge=1, le=1_000_000)] = 500
    # how long a node short of capacity stays DOWN before it is given back to slurmctld to try again
    insufficient_capacity_timeout_s: Annotated[int, Field(ge=0, le=86_400)] = 600

    def resolved_tree_width(self) -> int | None:
        """TreeWidth to write: the blueprint's, else the maximum without DNS, else SLURM's default (None)."""
        if self.tree_width is not None:
            return self.tree_width
        return None if self.cloud_dns else TREE_WIDTH_MAX


class Slurm(Strict):
    cluster_name: Annotated[Name | None, SetsSlurm("ClusterName")] = None
    partitions: list[Partition] = []
    private_data: Annotated[list[Literal["accounts", "cloud", "jobs", "nodes", "partitions", "reservations", "usage",
                               "users"]], SetsSlurm("PrivateData")] = ["jobs", "usage", "users", "accounts"]
    # Seconds without an answer before slurmctld marks a node DOWN (SLURM's default: 300).
    slurmd_timeout_s: Annotated[Annotated[int, Field(ge=10, le=65533)] | None, SetsSlurm("SlurmdTimeout")] = None
    recovery: Recovery = Recovery()
    power_save: PowerSave = PowerSave()  # applies where a pool has a max_count
    # Where slurmctld keeps its state; with two controllers it must be on storage both mount (SLM-006).
    state_save_location: Annotated[MountPath, SetsSlurm("StateSaveLocation")] = STATE_SAVE_LOCATION
    configless: bool = True  # compute nodes fetch their config from slurmctld (`slurmd --conf-server`)
    # MpiDefault: `srun` starts MPI ranks through PMIx
    mpi: Annotated[Literal["pmix", "none"], SetsSlurm("MpiDefault")] = "pmix"
    accounting: Accounting = Accounting()
    # what a QOS's `preempt` does to its victims
    preempt_mode: Annotated[Literal["requeue", "cancel", "off"], SetsSlurm("PreemptMode")] = "requeue"
    qos: Annotated[list[Qos], Field(max_length=1000)] = []
    accounts: Annotated[list[Account], Field(max_length=10_000)] = []
    priority_weights: PriorityWeights = PriorityWeights()
    settings: Settings = {}  # slurm.conf parameters merged over the rendered ones
    cgroup_settings: Settings = {}  # the same for cgroup.conf
    # Prolog/Epilog run every script in /etc/slurm/prolog.d and epilog.d
    prolog_epilog: Annotated[bool, SetsSlurm("Prolog", "Epilog")] = False
    pam_slurm_adopt: bool = False  # ssh into a node lands in the user's job there (and is refused without one)
    job_container_tmpfs: Annotated[JobContainerTmpfs | None, SetsSlurm("JobContainerType")] = None
    containers: bool = False  # enroot + pyxis on compute and login nodes: `srun --container-image`
