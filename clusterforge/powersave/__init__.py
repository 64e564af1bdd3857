"""SLURM power saving as the owner of cloud instances: the programs slurmctld runs to resume and suspend CLOUD
nodes, and the reconcile loop that replaces what failed.

IaC owns what is O(pools) (network, launch templates, FSx); instances belong to SLURM, which powers nodes up when
jobs need them and down when idle, through `ResumeProgram` and `SuspendProgram` (power_save.shtml). This package
is those programs: `config` is the file render writes for them, `provider` the face every cloud shows, `agent` the
protocol of a power agent a provider may ask, `slurm` the scontrol calls, `resume`, `suspend`, `reconcile` the
three jobs, `targets` the file of powered-up nodes they leave for Prometheus, and `payload` what of clusterforge a
controller gets to run them (derived from their imports: the slurm role copies it, the AWS roles bundle carries
it). The providers live with their targets (`targets/<name>/powersave.py`, the class its `power.py`'s
`NodePower` names): the file says which one, and the programs import it by that name, so nothing here names a
target.
"""
