"""Overlays: the files laid over the node image at boot, as tar archives the netboot initramfs unpacks onto the
root (Warewulf's system and runtime overlays). The system overlay is the same for every node (what a node needs to
configure itself: the playbook, the roles, the collections); a node's own carries who it is and its secrets, and
the provisioning server gives it to that node's address alone.

Files are archived owned by root with their modes kept, so a secret of mode 0600 stays root's on the node; Python's
byte code caches are left out (the node makes its own).
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from clusterforge.files.atomic import write_bytes

SKIPPED = ("__pycache__",)


def _as_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if any(part in SKIPPED for part in PurePosixPath(info.name).parts):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write(out: Path, sources: Sequence[tuple[Path, str]], files: Mapping[str, tuple[bytes, int]] = {}) -> int:
    """Write the overlay `out`: each source (a file or a folder, followed into) at its absolute target path, and
    `files` (target path -> content and mode); its size. Written whole or not at all."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT, dereference=True) as archive:
        made: set[str] = set()
        for source, target in sources:
            name = target.lstrip("/")
            for parent in reversed(PurePosixPath(name).parents[:-1] if "/" in name else ()):
                _folder(archive, str(parent), made)
            archive.add(str(source), arcname=name, filter=_as_root)
            made.add(name)
        for target, (content, mode) in sorted(files.items()):
            name = target.lstrip("/")
            for parent in reversed(PurePosixPath(name).parents[:-1]):
                _folder(archive, str(parent), made)
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(content), mode
            archive.addfile(_as_root(info) or info, io.BytesIO(content))
    data = buffer.getvalue()
    write_bytes(out, data)
    return len(data)


def _folder(archive: tarfile.TarFile, name: str, made: set[str]) -> None:
    """A parent folder of a target, mode 0755, once (tar keeps the last entry's mode for a folder)."""
    if name in made or name in ("", "."):
        return
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    archive.addfile(_as_root(info) or info)
    made.add(name)
