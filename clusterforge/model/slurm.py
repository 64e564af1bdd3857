"""The blueprint's `slurm:` section: partitions, accounting, QOS and accounts, HA state, and pass-through settings.

Shape only. Whether a QOS preempts one that exists, whether HA state sits on shared storage or a settings key is
a parameter of the pinned release are policies (SLM-003 onwards); which keys clusterforge writes itself, and so
refuses in `settings`, is model/references.py.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StringConstraints

from clusterforge.model.base import Name, Strict
from clusterforge.model.text import (
    MountPath,
    SacctText,
    SlurmKey,
    SlurmName,
    SlurmTime,
    SlurmValue,
    Tres,
    UnixUser,
)
from clusterforge.validation import expected

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

    enabled: bool = True
    pool: Name | None = None
    database: Database = "slurm_acct_db"


class Qos(Strict):
    """A quality of service, applied with `sacctmgr`; an option left out is not managed."""

    name: SlurmName
    priority: Annotated[int, Field(ge=0, le=4_294_967_294)] | None = None
    preempt: Annotated[list[SlurmName], Field(max_length=100)] = []
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

    fairshare: Weight = 100_000
    qos: Weight = 10_000
    age: Weight = 1_000
    job_size: Weight = 0
    partition: Weight = 0


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

    job_requeue: bool = True
    return_to_service: Literal[0, 1, 2] = 1
    cred_expire_s: Annotated[int, Field(ge=5, le=3600)] = 60
    sched_interval_s: Annotated[int, Field(ge=1, le=600)] = 10
    # batch jobs exiting with these codes are requeued (e.g. a wrapper's "NCCL timeout, try again")...
    requeue_exit: Annotated[list[ExitCode], Field(max_length=32)] = []
    # ...and with these requeued and held for a person (`scontrol release`)
    requeue_exit_hold: Annotated[list[ExitCode], Field(max_length=32)] = []
    # how long a rebooted node may take to register again before it is DOWN ("reboot timed out"): a GPU
    # server's firmware POST alone can take several minutes
    resume_timeout_s: Annotated[int, Field(ge=30, le=65_533)] = 900


class Slurm(Strict):
    cluster_name: Name | None = None
    partitions: list[Partition] = []
    private_data: list[Literal["accounts", "jobs", "nodes", "partitions", "reservations", "usage", "users"]] = [
        "jobs", "usage", "users", "accounts"]
    # Seconds without an answer before slurmctld marks a node DOWN (SLURM's default: 300).
    slurmd_timeout_s: Annotated[int, Field(ge=10, le=65533)] | None = None
    recovery: Recovery = Recovery()
    # Where slurmctld keeps its state; with two controllers it must be on storage both mount (SLM-006).
    state_save_location: MountPath = STATE_SAVE_LOCATION
    configless: bool = True  # compute nodes fetch their config from slurmctld (`slurmd --conf-server`)
    mpi: Literal["pmix", "none"] = "pmix"  # MpiDefault: `srun` starts MPI ranks through PMIx
    accounting: Accounting = Accounting()
    preempt_mode: Literal["requeue", "cancel", "off"] = "requeue"  # what a QOS's `preempt` does to its victims
    qos: Annotated[list[Qos], Field(max_length=1000)] = []
    accounts: Annotated[list[Account], Field(max_length=10_000)] = []
    priority_weights: PriorityWeights = PriorityWeights()
    settings: Settings = {}  # slurm.conf parameters merged over the rendered ones
    cgroup_settings: Settings = {}  # the same for cgroup.conf
    prolog_epilog: bool = False  # Prolog/Epilog run every script in /etc/slurm/prolog.d and epilog.d
    pam_slurm_adopt: bool = False  # ssh into a node lands in the user's job there (and is refused without one)
    job_container_tmpfs: JobContainerTmpfs | None = None
    containers: bool = False  # enroot + pyxis on compute and login nodes: `srun --container-image`
