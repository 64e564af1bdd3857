"""What a provisioning server serves to boot a node image statelessly, made from the image once: its kernel, the
netboot initramfs (netboot/initramfs.py) and the image's root file system as a zstd squashfs. Kept under the
image's id, so the same image is never packed twice, and written whole or not at all.

Sizes (benchmarks/README.md, "The metal lab"): the lab's 1.8 GB image packs to about a third; every node fetches it
whole at each boot, so what a provisioning server sends per boot is the squashfs plus the overlays.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.netboot import initramfs

# zstd at level 3: packing 1.8 GB takes about a minute on two cores where the default level 15 took several,
# and the image is only ~10% larger; the kernel reads either at the same speed
SQUASHFS_OPTIONS = ("-comp", "zstd", "-Xcompression-level", "3", "-noappend", "-quiet", "-no-progress",
                    "-wildcards", "-e", "boot/initrd.img-*")
MANIFEST = "manifest.json"
KERNEL, INITRD, IMAGE = "vmlinuz", "initrd.img", "image.sqfs"


@dataclass(frozen=True)
class Artifacts:
    """A packed image's folder: kernel, initramfs and squashfs, and what they were made from."""

    folder: Path

    @property
    def kernel(self) -> Path:
        return self.folder / KERNEL

    @property
    def initrd(self) -> Path:
        return self.folder / INITRD

    @property
    def image(self) -> Path:
        return self.folder / IMAGE

    def manifest(self) -> dict[str, object]:
        loaded = json.loads((self.folder / MANIFEST).read_text(encoding="utf-8"))
        return loaded if isinstance(loaded, dict) else {}

    def complete(self) -> bool:
        return (self.folder / MANIFEST).is_file() and all(p.is_file() for p in (self.kernel, self.initrd, self.image))


def _podman(*args: str) -> str:
    proc = subprocess.run(["podman", *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ClusterforgeError(Problem(f"podman {' '.join(args[:2])} failed: {proc.stderr.strip()[-300:]}",
                                        args[-1]))
    return proc.stdout.strip()


def kernel_version(root: Path) -> str:
    """The image's one kernel (`/boot/vmlinuz-<version>`, as Warewulf 4.6 finds it)."""
    found = sorted(path.name.removeprefix("vmlinuz-") for path in (root / "boot").glob("vmlinuz-*"))
    if not found:
        raise ClusterforgeError(Problem("the image has no /boot/vmlinuz-*: it is not bootable", str(root),
                                        hint="build it with `clusterforge image build` (without --no-bootable)"))
    return found[-1]


def pack(root: Path, out: Path, say: Callable[[str], None]) -> dict[str, object]:
    """Pack an image's root folder into `out` (kernel, initramfs, squashfs); the manifest."""
    for program in ("mksquashfs",):
        if shutil.which(program) is None:
            raise ClusterforgeError(Problem(f"{program} is not installed", hint="scripts/metal-host-setup"))
    version = kernel_version(root)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(root / "boot" / f"vmlinuz-{version}", out / KERNEL)
    initrd_bytes = initramfs.build(root / "lib" / "modules" / version, out / INITRD)
    say(f"packing the image's root as a squashfs (zstd): {out / IMAGE}")
    partial = out / f".{IMAGE}.partial"
    subprocess.run(["mksquashfs", str(root), str(partial), *SQUASHFS_OPTIONS], check=True)
    partial.replace(out / IMAGE)
    manifest: dict[str, object] = {"kernel_version": version, "kernel_bytes": (out / KERNEL).stat().st_size,
                                   "initrd_bytes": initrd_bytes, "image_bytes": (out / IMAGE).stat().st_size}
    return manifest


def from_image(tag: str, cache: Path, say: Callable[[str], None]) -> Artifacts:
    """The artifacts of podman image `tag`, packed once per image id and initramfs recipe under `cache`."""
    image_id = _podman("image", "inspect", "--format", "{{.Id}}", tag)
    found = Artifacts(cache / f"{image_id[:12]}-{initramfs.recipe()[:8]}")
    if found.complete():
        return found
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".packing-", dir=cache) as tmp:
        root = Path(_podman("image", "mount", tag))
        try:
            manifest = pack(root, Path(tmp), say)
        finally:
            _podman("image", "unmount", tag)
        write_text(Path(tmp) / MANIFEST, json.dumps({"image": tag, "id": image_id, **manifest}, indent=2) + "\n")
        shutil.rmtree(found.folder, ignore_errors=True)
        Path(tmp).chmod(0o755)  # a made-private temporary folder; the provisioning server's web server reads it
        Path(tmp).replace(found.folder)
        Path(tmp).mkdir()  # for TemporaryDirectory's clean-up
    return found
