"""The metal lab's servers as the rest of the lab sees them: which are powered on (`lab status`), and their removal
with their BMCs (`lab down`). Apart from `up`, which bakes images, so the lab's lifecycle imports no image build."""

from __future__ import annotations

from clusterforge.lab.bmc_service import BmcFiles
from clusterforge.lab.metal import bmcs, vbmc, virt
from clusterforge.lab.paths import LabPaths


def _defined(paths: LabPaths) -> list[virt.Server]:
    """The lab's servers, by the definitions `up` wrote (`<lab>/metal/domains/<domain>.xml`)."""
    domains = paths.root / "metal" / "domains"
    found = sorted(domains.glob("*.xml")) if domains.is_dir() else []
    return [virt.Server("", xml.stem, "", "", "") for xml in found]


def running_servers(paths: LabPaths) -> set[str]:
    """The lab's virtual servers that are powered on (their libvirt names, as `lab status` lists them)."""
    return {server.domain for server in _defined(paths) if virt.state(server) == "running"}


def down(paths: LabPaths) -> list[str]:
    """Remove the metal lab's servers and stop its BMCs (before `lab down` removes the rest)."""
    removed = []
    files = BmcFiles.of(paths)
    if bmcs.stop(files):
        removed.append("BMC emulator")
    if vbmc.stop(files):
        removed.append("IPMI BMCs (VirtualBMC)")
    defined = _defined(paths)
    if defined:  # libvirtd answers (started when nothing runs it: after a reboot, or once the lab's were killed),
        virt.require()  # or a server left defined would outlive the lab folder that names it
    for server in defined:
        if virt.undefine(server):
            removed.append(f"server {server.domain}")
        server.console.unlink(missing_ok=True)
    return removed
