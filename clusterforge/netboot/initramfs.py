"""The initramfs of a stateless boot: busybox, the few drivers the image's kernel has as modules that the boot
needs before the image is mounted (the virtual NIC, squashfs, loop, overlay), and `data/init`.

Why not the image's own initramfs (initramfs-tools): it boots from a disk or NFS, and a 37 MB initramfs read by
iPXE costs seconds that Linux reads the image in. Loading the image from Linux, not from iPXE, is what the
reference measured fastest (shared reference bare-metal.md: Linux in the guest fetched at 115-170 MB/s, iPXE at
31-37), and a root in memory is what Warewulf's stateless nodes run from: nothing on a disk outlives a boot.
"""

from __future__ import annotations

import gzip
import hashlib
import lzma
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_bytes

BUSYBOX = Path("/bin/busybox")  # Debian's busybox-static: one static program for the shell, ip, udhcpc and wget
# What must load before the image is mounted: the NIC's driver (virtio's here; a site's NIC drivers are the same
# kind of entry), the image's file system, the loop device it is mounted from, and the writable layer.
MODULES = ("virtio_net", "e1000", "squashfs", "loop", "overlay")
SCRIPTS = ("init", "fetch.sh", "udhcpc.script")  # data/'s scripts, at the initramfs's root
PT_INTERP = 3


def is_static(program: Path) -> bool:
    """An ELF program without an interpreter (a dynamically linked one needs its libraries in the initramfs)."""
    head = program.read_bytes()[:4096]
    if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only
        return False
    phoff, = struct.unpack_from("<Q", head, 32)
    phentsize, phnum = struct.unpack_from("<HH", head, 54)
    return all(struct.unpack_from("<I", head, phoff + i * phentsize)[0] != PT_INTERP for i in range(phnum))


def module_order(modules_dir: Path, wanted: Iterable[str] = MODULES) -> list[str]:
    """The module files (relative to modules_dir) to load for `wanted`, each after what it depends on, from the
    kernel's modules.dep; a module built into the kernel, or one this kernel does not have, needs nothing."""
    deps: dict[str, list[str]] = {}
    for line in (modules_dir / "modules.dep").read_text(encoding="utf-8").splitlines():
        path, _, needs = line.partition(":")
        deps[path] = needs.split()
    by_name = {Path(path).name.split(".ko")[0].replace("-", "_"): path for path in deps}
    order: list[str] = []

    def add(path: str) -> None:
        if path in order:
            return
        for needed in deps.get(path, []):
            add(needed)
        order.append(path)

    for name in wanted:
        if name in by_name:
            add(by_name[name])
    return order


def _decompressed(path: Path) -> bytes:
    """A module as insmod reads it: busybox's insmod loads plain .ko files."""
    data = path.read_bytes()
    if path.suffix == ".xz":
        return lzma.decompress(data)
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".zst":
        raise ClusterforgeError(Problem(f"{path.name}: zstd-compressed modules are not supported yet", str(path),
                                        hint="an image whose kernel modules are xz- or gzip-compressed"))
    return data


def recipe() -> str:
    """What the initramfs is made of besides the image's modules (its scripts, the modules it loads), as a hash:
    a changed script packs the image's initramfs again."""
    data = resources.files("clusterforge.netboot") / "data"
    digest = hashlib.sha256(repr(MODULES).encode())
    for script in SCRIPTS:
        digest.update((data / script).read_bytes())
    return digest.hexdigest()


def build(modules_dir: Path, out: Path, busybox: Path = BUSYBOX) -> int:
    """Write the initramfs (a gzip-compressed newc cpio archive, as the kernel reads it) to `out`; its size."""
    if not busybox.is_file() or not is_static(busybox):
        raise ClusterforgeError(Problem(f"{busybox} is not a static busybox", str(busybox),
                                        hint="apt-get install busybox-static (scripts/metal-host-setup)"))
    if shutil.which("cpio") is None:
        raise ClusterforgeError(Problem("cpio is not installed", hint="apt-get install cpio"))
    data = resources.files("clusterforge.netboot") / "data"
    with tempfile.TemporaryDirectory(prefix="cf-initramfs-") as tmp:
        root = Path(tmp)
        for folder in ("bin", "lib/modules", "newroot", "proc", "sys", "dev", "run"):
            (root / folder).mkdir(parents=True)
        shutil.copy2(busybox, root / "bin/busybox")
        for script in SCRIPTS:
            (root / script).write_bytes((data / script).read_bytes())
            (root / script).chmod(0o755)
        loaded = []
        for relative in module_order(modules_dir):
            name = Path(relative).name.split(".ko")[0] + ".ko"
            (root / "lib/modules" / name).write_bytes(_decompressed(modules_dir / relative))
            loaded.append(name)
        (root / "lib/modules/order").write_text("".join(f"{name}\n" for name in loaded), encoding="utf-8")
        members = sorted(str(path.relative_to(root)) for path in root.rglob("*"))
        archive = subprocess.run(["cpio", "--create", "--format=newc", "--quiet", "--owner=0:0"], cwd=root,
                                 input="\n".join(members).encode(), capture_output=True, check=True).stdout
    compressed = gzip.compress(archive, compresslevel=6, mtime=0)
    write_bytes(out, compressed)
    return len(compressed)
