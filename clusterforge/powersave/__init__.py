"""SLURM power saving as the owner of cloud instances: the programs slurmctld runs to resume and suspend CLOUD
nodes, and the reconcile loop that replaces what failed.

IaC owns what is O(pools) (network, launch templates, FSx); instances belong to SLURM, which powers nodes up when
jobs need them and down when idle, through `ResumeProgram` and `SuspendProgram` (power_save.shtml). This package
is those programs: `config` is the file render writes for them, `provider` the face every cloud shows, `agent` the
protocol of a power agent a provider may ask, `slurm` the scontrol calls, `resume`, `suspend`, `reconcile` the
three jobs, and `targets` the file of powered-up nodes they leave for Prometheus. The providers live with their
targets (`targets/<name>/powersave.py`, the class `Target.power_provider` names): the file says which one, and
the programs import it by that name, so nothing here names a target.
"""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent

# What a controller needs to run the programs, relative to the checkout: these modules import only the standard
# library and pydantic (a provider its cloud's SDK too, boto3 for EC2). The slurm role copies them
# (`slurm_power_save_modules` lists the same) and the AWS roles bundle carries them (targets/aws/image_bundle.py).
# Each target's provider is the module `powersave.py` of its folder, found here: it is copied without its package's
# __init__.py (nor clusterforge/targets' own), so on the controller `clusterforge.targets.<name>` is a namespace
# package (PEP 420) and importing the provider runs nothing else of the target.
# `targets` writes Prometheus's file of powered-up nodes with files/atomic (the standard library and core.errors).
PROGRAM_MODULES = ("clusterforge/__init__.py", "clusterforge/core/__init__.py", "clusterforge/core/errors.py",
                   "clusterforge/core/hostlist.py", "clusterforge/core/limits.py", "clusterforge/core/version.py",
                   "clusterforge/files/__init__.py", "clusterforge/files/atomic.py",
                   "clusterforge/powersave/__init__.py", "clusterforge/powersave/agent.py",
                   "clusterforge/powersave/config.py", "clusterforge/powersave/programs.py",
                   "clusterforge/powersave/provider.py", "clusterforge/powersave/reconcile.py",
                   "clusterforge/powersave/resume.py", "clusterforge/powersave/slurm.py",
                   "clusterforge/powersave/suspend.py", "clusterforge/powersave/targets.py")
# The on-prem provider's Redfish client and what it imports (the BMC document's loader is the CLI's: one check of
# untrusted YAML, not two); a controller whose file names another provider never imports them.
BMC_MODULES = ("clusterforge/bmc/__init__.py", "clusterforge/bmc/credentials.py", "clusterforge/bmc/fleet.py",
               "clusterforge/bmc/hosts.py", "clusterforge/bmc/redfish.py", "clusterforge/bmc/transport.py",
               "clusterforge/core/hints.py",
               "clusterforge/core/source.py", "clusterforge/core/unknown_keys.py", "clusterforge/core/validation.py",
               "clusterforge/files/yamlguard.py", "clusterforge/files/yamlsource.py")
PROVIDER_MODULES = tuple(sorted(f"clusterforge/targets/{path.parent.name}/powersave.py"
                                for path in (_PACKAGE / "targets").glob("*/powersave.py")))
CONTROLLER_MODULES = PROGRAM_MODULES + BMC_MODULES + PROVIDER_MODULES
