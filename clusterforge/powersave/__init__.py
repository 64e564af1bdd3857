"""SLURM power saving as the owner of cloud instances: the programs slurmctld runs to resume and suspend CLOUD
nodes, and the reconcile loop that replaces what failed.

IaC owns what is O(pools) (network, launch templates, FSx); instances belong to SLURM, which powers nodes up when
jobs need them and down when idle, through `ResumeProgram` and `SuspendProgram` (power_save.shtml). This package
is those programs: `config` is the file render writes for them, `provider` the face every cloud shows (`aws` over
EC2 CreateFleet), `slurm` the scontrol calls, and `resume`, `suspend`, `reconcile` the three jobs.
"""

# What a controller needs to run the programs, relative to the checkout: these modules import only the standard
# library and pydantic (boto3 for the EC2 provider). The slurm role copies them (`slurm_power_save_modules` lists
# the same) and the AWS roles bundle carries them (targets/aws/image_bundle.py).
CONTROLLER_MODULES = ("clusterforge/__init__.py", "clusterforge/errors.py", "clusterforge/hostlist.py",
                      "clusterforge/limits.py", "clusterforge/powersave/__init__.py", "clusterforge/powersave/aws.py",
                      "clusterforge/powersave/config.py", "clusterforge/powersave/lab.py",
                      "clusterforge/powersave/programs.py",
                      "clusterforge/powersave/provider.py", "clusterforge/powersave/reconcile.py",
                      "clusterforge/powersave/resume.py", "clusterforge/powersave/slurm.py",
                      "clusterforge/powersave/suspend.py")
