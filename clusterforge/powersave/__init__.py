"""SLURM power saving as the owner of cloud instances: the programs slurmctld runs to resume and suspend CLOUD
nodes, and the reconcile loop that replaces what failed.

IaC owns what is O(pools) (network, launch templates, FSx); instances belong to SLURM, which powers nodes up when
jobs need them and down when idle, through `ResumeProgram` and `SuspendProgram` (power_save.shtml). This package
is those programs: `config` is the file render writes for them, `provider` the face every cloud shows (`aws` over
EC2 CreateFleet), `slurm` the scontrol calls, and `resume`, `suspend`, `reconcile` the three jobs.
"""
