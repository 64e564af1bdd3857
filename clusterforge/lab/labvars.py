"""The lab's extra variables: how Ansible reaches the containers, and where the vendor packages come from.

Everything else comes from the rendered inventory, exactly as on bare metal.
"""

from __future__ import annotations

from typing import Any

import yaml

from clusterforge.files.atomic import write_text
from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.repo import ON_COMPUTE, Repo, apt_source

KERNEL_LOG_FILE = "/run/clusterforge-lab/kmsg"  # made at boot by the image's cf-lab-boot unit (data/Containerfile)


def lab_vars(paths: LabPaths, repo: Repo) -> dict[str, Any]:
    local = apt_source("lustre_client") | apt_source("containers")
    return {
        "ansible_user": "root",
        "ansible_ssh_common_args": f"-F {paths.ssh_config}",
        "munge_key_file": str(paths.root / "munge.key"),
        "slurm_dbd_password_file": str(paths.root / "slurmdbd.password"),
        # The lab's two compute nodes run an MPI allreduce through PMIx at the end of every provisioning run.
        "slurm_verify_mpi": True,
        # enroot and pyxis stand-ins from the lab repository, switched on here and not by the blueprint's
        # slurm.containers: the stand-in has no spank_pyxis.so, and a pyxis line in plugstack.conf would make
        # every srun in the lab fail.
        "containers_enabled": True,
        # The lab's nodes have no GPUs: the vendor's stand-ins (repo.variables()) run its roles on compute nodes,
        # which skip only the device steps; the health check checks neither fabric ports nor Lustre.
        # power-saved pools: a dead container is replaced within 20 s of reconcile noticing, not 60
        "slurm_power_save_reconcile_s": 20,
        "health_check_infiniband": False,
        # No Lustre server in the lab (the client is installed, not mounted); /shared is a podman volume.
        "health_check_lustre": False,
        # The Xid scan reads this file instead of the kernel log, which is the host's: `lab drill gpu-fault`
        # writes an Xid line there. /run is a tmpfs, so the reboot remediation orders clears it.
        "health_check_xid": ON_COMPUTE,
        "health_kernel_log_file": KERNEL_LOG_FILE,
        # The controller stands in for a subnet-manager host so the opensm path runs too.
        "infiniband_opensm_hosts": "{{ groups['slurm_controller'] | default([]) }}",
        **repo.variables(),  # the vendors' and the targets' stand-ins: where their roles find them
        **local,
    }


def bmc_vars(bmcs: BmcFiles | None) -> dict[str, Any]:
    """Where the controllers' slurm role finds the lab's BMC document and login (lab/bmc_service.py)."""
    if bmcs is None:
        return {}
    return {"slurm_power_save_bmcs": str(bmcs.document), "slurm_power_save_bmc_credentials": str(bmcs.credentials)}


def write(paths: LabPaths, repo: Repo, bmcs: BmcFiles | None = None) -> None:
    text = "# written by clusterforge lab; extra variables for site.yml against this lab\n"
    values = lab_vars(paths, repo) | bmc_vars(bmcs)
    write_text(paths.extra_vars, text + yaml.safe_dump(values, sort_keys=True, width=120))
