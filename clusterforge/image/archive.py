"""OCI archives of node images, for a provisioning server that imports a file (Warewulf 4: `wwctl image import`).

An archive is written under a temporary name in the destination folder and renamed when complete, so a reader never
sees half an archive and an interrupted save leaves none. Its name carries the image's inputs hash: an archive of
that name is already the image, and is not written again.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import podman

SAVE_TIMEOUT_S = 1800  # a baked image is about 1.7 GB


def save(tag: str, folder: Path, file_name: str, say: Callable[[str], None] | None = None) -> tuple[Path, bool]:
    """`podman save --format oci-archive` of `tag` to folder/file_name; the path and whether it was written now."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot create {folder}: {exc.strerror}", str(folder),
                                        path="--oci-archive")) from None
    final = folder / file_name
    if final.is_file():
        return final, False
    partial = folder / f".{file_name}.{os.getpid()}.tmp"
    if say:
        say(f"saving {tag} to {final} (an OCI archive: about half a minute per GB)")
    try:
        podman.run(["save", "--quiet", "--format", "oci-archive", "--output", str(partial), tag],
                   timeout=SAVE_TIMEOUT_S)
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    return final, True


def warewulf_import(archive: Path, name: str) -> str:
    """The command that imports the archive as a Warewulf 4.6+ image named `name` (before 4.6: `wwctl container
    import`, same arguments)."""
    return shlex.join(["wwctl", "image", "import", str(archive), name])
