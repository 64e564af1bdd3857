"""What makes a node image bootable by Warewulf 4: a kernel and its initramfs in the image, and what a server needs
that the lab's container nodes do not.

Warewulf 4.6+ boots the kernel it finds in the image (`/boot/vmlinuz-<version>`, or `/lib/modules/<version>/vmlinuz`;
`wwctl image kernels` lists them and `wwctl node set --kernelversion` picks one: warewulf/warewulf
userdocs/images/kernel.rst). The packages are those Warewulf's own Debian 13 node image installs for a stateless
node (warewulf/warewulf-node-images debian/Containerfile-13) that the lab's node image lacks: Debian's kernel
meta-package, kmod and udev (modules loaded for the hardware found), ifupdown (Warewulf's `debian.interfaces`
overlay writes /etc/network/interfaces.d), nfs-common, ethtool, pciutils, netbase; initramfs-tools, which the
kernel's postinst would pick anyway, is named so the initramfs is Debian's and not chance's.

The lab's container image masks what a container cannot do with the host's kernel (lab/data/Containerfile:
systemd-sysctl, systemd-modules-load, logind, the console's getty) and remounts cgroup v1 controllers for SLURM;
on a server they are undone, so sysctl settings and module lists apply at boot as on any Debian host.

The boot unit (`clusterforge-boot.service`, lab/data) also says on the console when it starts (BOOT_LINE, through a
drop-in): whoever watches a server's serial console, and the QEMU boot benchmark (benchmarks/qemu_boot.py), sees
the node begin to configure itself. systemd's own "Starting ..." line is status output, which `quiet` on the
kernel's command line hides; this one is the unit's own output, sent to the console (`journal+console`).

Only `image build` runs these steps (after the boot phase, before the clean-up: lab/bake.py `Recipe.finish`); the
lab's own bake does not: its containers boot the host's kernel.
"""

from __future__ import annotations

import hashlib
import shlex
from pathlib import PurePosixPath

KERNEL = "linux-image-amd64"
PACKAGES = (KERNEL, "initramfs-tools", "kmod", "udev", "dbus", "ifupdown", "nfs-common", "ethtool", "pciutils",
            "netbase")
# what the lab's node image masks or adds for a container (lab/data/Containerfile), undone for a server
UNMASK = ("systemd-sysctl.service", "systemd-modules-load.service", "systemd-logind.service", "getty@tty1.service")
CONTAINER_ONLY = ("cgroup-rw.service",)
# Every installed kernel gets an initramfs: the kernel's postinst makes one through initramfs-tools' hook; one it
# could not make in the bake container is made here, and a kernel or initramfs missing fails the bake.
INITRAMFS = ('set -e; for m in /lib/modules/*; do v="${m##*/}"; '
             '[ -s "/boot/initrd.img-$v" ] || update-initramfs -c -k "$v"; '
             'test -s "/boot/vmlinuz-$v"; test -s "/boot/initrd.img-$v"; done; ls /boot/vmlinuz-* >/dev/null')

# the console line, and the drop-in that prints it (%H: the node's host name, a systemd specifier)
BOOT_LINE = "clusterforge-boot: the boot phase starts on"
CONSOLE_DROPIN = "/etc/systemd/system/clusterforge-boot.service.d/console.conf"
CONSOLE_UNIT = f'[Service]\nExecStartPre=/bin/echo "{BOOT_LINE} %H"\nStandardOutput=journal+console\n'

# The roles' install steps run in the bake's container install for a server, not for a container: a container
# shares the host's clock, so `common` leaves chrony out there (roles/common/vars), which a booted server runs.
SERVER_VARS = {"clusterforge_container": False}

STEPS: tuple[tuple[str, ...], ...] = (
    ("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q", "--no-install-recommends",
     *PACKAGES),
    ("sh", "-c", INITRAMFS),
    ("systemctl", "unmask", "--quiet", *UNMASK),
    ("systemctl", "disable", "--quiet", *CONTAINER_ONLY),
    ("sh", "-c", f"mkdir -p {shlex.quote(str(PurePosixPath(CONSOLE_DROPIN).parent))} "
                 f"&& printf %s {shlex.quote(CONSOLE_UNIT)} > {shlex.quote(CONSOLE_DROPIN)}"),
)


def describe(bootable: bool) -> str:
    """What `--dry-run` says of an image's bootability."""
    return f"bootable: kernel {KERNEL} and its initramfs" if bootable else "not bootable (for containers)"


def recipe() -> bytes:
    """The steps as an input of the image's hash: a changed package or step bakes a new image."""
    return hashlib.sha256(repr((STEPS, sorted(SERVER_VARS.items()))).encode()).digest()
