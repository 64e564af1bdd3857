"""What the metal lab's servers boot from: the node image packed for a stateless boot (clusterforge/netboot), the
overlays that make each one a node, and the provisioning role run on the controller, which serves them (dnsmasq's
DHCP reservations and iPXE, nginx), exactly as a site's head node does.

The overlays carry what a container node of `--boot self` is given as read-only volumes (lab/selfboot.Given):
the system overlay the playbook, roles and collections and the boot folder's common part (vars, every node's
address, the render), the same for every server; a server's own overlay its node.env (its name) and the secrets
(the munge key), which the role's nginx serves to that server's reserved address alone.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab.nodes import NodeSpec
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.selfboot import BOOT, SECRETS, Given
from clusterforge.netboot import overlay
from clusterforge.netboot.artifacts import Artifacts

HTTP = "/srv/clusterforge-boot/http"  # the role's HTTP root (provisioning_root/http) in the controller
NETBOOT, OVERLAYS = "netboot", "overlays"
# A server's own overlay: who it is (its boot folder's node.env) and its secrets, a few KB whatever the cluster's
# size. The rest of the boot folder (vars, every node's address, the render) is the same for every server and
# grows with the cluster, so it is the system overlay's: in each server's own, 12,500 servers would each fetch
# (and a render would write) every other's address and the whole render.
NODE_ENV = "node.env"
# What a virtual server's boot phase is told beyond a container's: it is no container, so the roles do what they
# do on a server (time sync, sysctl, modules), but its packages are the lab repository's stand-ins, which carry
# their names and versions and none of their files (enroot's hooks), so the roles do not look for those files.
# And it is emulated, 2 vCPUs beside another server on the host's 2 cores, at a tenth of a real CPU's speed or less:
# starting a process for the health check's disk probe took over 5 s while the boot phase ran (the job's prolog
# drained the server: "/ not writable"), and once the boot phase's `df /` ran past 60 s (the whole check 215 s;
# 2.8 s when run again by hand: the cause was not found). (The metal blueprint runs no health prolog or epilog: its
# slurm.conf has no Prolog line, which a node's own variables cannot take away.)
SERVER_VARS = {"containers_check_software": False, "health_mount_timeout_s": 180}


@dataclass(frozen=True)
class BootFolder:
    """The lab's folder of overlays (`<lab>/metal/overlays`) and the packed image, as the controller serves them."""

    overlays: Path
    artifacts: Artifacts

    @classmethod
    def of(cls, paths: LabPaths, artifacts: Artifacts) -> BootFolder:
        return cls(paths.root / "metal" / OVERLAYS, artifacts)

    def controller_mounts(self) -> list[str]:
        """The controller's volumes: both, read-only, in the role's HTTP root; and the capabilities dnsmasq needs to
        answer DHCP on the container's interface (raw sockets, the ARP entry of a client with no address yet)."""
        return ["--volume", f"{self.artifacts.folder}:{HTTP}/{NETBOOT}:ro",
                "--volume", f"{self.overlays}:{HTTP}/{OVERLAYS}:ro",
                "--cap-add", "NET_ADMIN", "--cap-add", "NET_RAW"]


def volumes(options: Sequence[str]) -> list[tuple[Path, str]]:
    """The (source, target) pairs of podman `--volume SOURCE:TARGET:ro` options."""
    pairs = []
    for flag, value in zip(options[::2], options[1::2], strict=True):
        if flag != "--volume":
            raise ClusterforgeError(Problem(f"a node is given {flag}, which an overlay cannot carry", flag))
        source, target = value.split(":")[:2]
        pairs.append((Path(source), target))
    return pairs


def write_overlays(folder: BootFolder, given: Given, servers: Sequence[NodeSpec], ssh_key: bytes,
                   say: Callable[[str], None]) -> dict[str, int]:
    """The system overlay and each server's own, from what a container node is given, with the lab's SSH key for
    root (`lab exec`, as a container is given it); their sizes."""
    pairs = volumes(given.common)
    secrets = [(s, t) for s, t in pairs if t == SECRETS or t.startswith(SECRETS + "/")]
    boot = next((s for s, t in pairs if t == BOOT), None)
    system = [pair for pair in pairs if pair not in secrets and pair[1] != BOOT]
    if boot is not None:  # the boot folder but the node's name: the same for every server
        system += [(entry, f"{BOOT}/{entry.name}") for entry in sorted(boot.iterdir()) if entry.name != NODE_ENV]
    sizes = {"system": overlay.write(folder.overlays / "system.tar", system)}
    for server in servers:
        files = {f"{BOOT}/{NODE_ENV}": (_node_env(boot / NODE_ENV, server.name), 0o644)} if boot is not None else {}
        files["/root/.ssh/authorized_keys"] = (ssh_key, 0o600)
        # secrets as root's alone on the node, whatever their mode is here
        files |= {t: (s.read_bytes(), 0o600) for s, t in secrets if s.is_file()}
        sizes[server.name] = overlay.write(folder.overlays / "node" / f"{server.name}.tar", [], files)
    say(f"overlays written: system {sizes['system'] / 1e6:.1f} MB, each server's own "
        f"{max((v for k, v in sizes.items() if k != 'system'), default=0) / 1e3:.0f} KB ({folder.overlays})")
    return sizes


def _node_env(env: Path, node: str) -> bytes:
    """The boot folder's node.env with the node's name written in (a container's is its host name at boot)."""
    lines = [line for line in env.read_text(encoding="utf-8").splitlines() if not line.startswith("CLUSTERFORGE_NODE=")]
    return ("\n".join([*lines, f"CLUSTERFORGE_NODE={node}"]) + "\n").encode()


def role_vars(network: ipaddress.IPv4Network, server_address: str, render_dir: Path) -> dict[str, object]:
    """The provisioning role's variables for the controller of the metal lab."""
    return {"provisioning_interface": "eth0", "provisioning_server_address": server_address,
            "provisioning_network": str(network), "provisioning_gateway": "",
            "provisioning_render_dir": str(render_dir), "provisioning_start_service": True,
            "provisioning_kernel": f"{NETBOOT}/vmlinuz", "provisioning_initrd": f"{NETBOOT}/initrd.img",
            "provisioning_image": f"{NETBOOT}/image.sqfs", "provisioning_overlays": OVERLAYS,
            "provisioning_kernel_args": "console=ttyS0,115200 net.ifnames=0"}
