"""Target aws's stand-ins in the lab's apt repository: the software the efa and nccl roles install for EFA, at the
blueprint's pins and with nothing inside, so their install paths (repository, pin, package, checksum) run in the
lab and CI, which have neither EFA devices nor AWS's repositories (clusterforge/lab/repo.py).

- `aws-ofi-nccl`, the NCCL plugin for libfabric, as a .deb the nccl role installs from the lab's repository;
- the EFA installer tarball the efa role downloads and verifies by its sha256, whose script records the
  installation the way the real installer does (/opt/amazon/efa_installed_packages) and installs nothing else.
"""

from __future__ import annotations

import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterforge.lab.repo import APT_LINE, Build, Pins, StandIns, standin

INSTALLER = "efa_installer_version"  # the role variables that pin them (all.yml)
PLUGIN = "efa_aws_ofi_nccl_version"

_EFA_INSTALLER = """#!/bin/sh
# clusterforge lab stand-in for aws-efa-installer {version}: records the installation the way the real installer
# does (/opt/amazon/efa_installed_packages) and installs nothing else.
set -e
mkdir -p /opt/amazon/efa
printf '# EFA installer version: {version}\\n# Debug packages installed: no\\n# Packages installed:\\n' \\
  > /opt/amazon/efa_installed_packages
echo "EFA installer {version} (clusterforge lab stand-in): done"
"""


def efa_installer(tarball: Path, version: str) -> None:
    with tempfile.TemporaryDirectory(dir=tarball.parent) as tmp:
        script = Path(tmp) / "efa_installer.sh"
        script.write_text(_EFA_INSTALLER.format(version=version))
        tmp_tar = tarball.with_suffix(".tmp")
        with tarfile.open(tmp_tar, "w:gz") as tar:
            info = tar.gettarinfo(str(script), "aws-efa-installer/efa_installer.sh")
            info.mode, info.uid, info.gid, info.uname, info.gname, info.mtime = 0o755, 0, 0, "root", "root", 0
            with open(script, "rb") as handle:
                tar.addfile(info, handle)
        tmp_tar.replace(tarball)


def packages(pins: Pins) -> list[tuple[str, str, Build]]:
    version = f"{pins.pin(PLUGIN)}-1"
    return [("aws-ofi-nccl", version,
             lambda deb: standin(deb, "aws-ofi-nccl", version, "collectives plugin for libfabric (EFA)"))]


def files(pins: Pins) -> dict[str, tuple[str, Build]]:
    version = pins.pin(INSTALLER)
    return {"efa_installer": (f"aws-efa-installer-{version}.tar.gz", lambda path: efa_installer(path, version))}


def variables(located: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """The nccl role's plugin from the lab's repository, the efa role's installer from its file there, and the
    health check without its EFA probe (the lab's nodes have no EFA devices)."""
    url, digest = located.get("efa_installer", ("", ""))
    return {"health_check_efa": False, "nccl_aws_ofi_nccl_apt_repository": APT_LINE, "efa_installer_url": url,
            "efa_installer_sha256": digest}


STANDINS = StandIns(pins=(INSTALLER, PLUGIN), packages=packages, files=files, variables=variables)
