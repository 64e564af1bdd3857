"""The two archives a node image and a booting node read from S3 (pure Python, no Pulumi).

- the **roles bundle**: `site.yml`, `ansible.cfg` and `roles/` of this tree, the collection's plugins (the
  roles name them as clusterforge.cluster.*) where Ansible finds them beside `site.yml`
  (`collections/ansible_collections/clusterforge/cluster/plugins/`), and the power-save programs' modules
  (`powersave.payload.controller_modules`, derived from their imports), which the slurm role installs on the
  controller. The image build runs its `install` steps; the image keeps it for the boot phase. Its digest names
  the bake, so the archive must be the same bytes for the same files: sorted entries, no timestamps, owners or
  modes from the checkout (only the executable bit), and a gzip header without a name or a time.
- the **node config**: what `clusterforge render` writes for the roles' boot phase (`inventory/group_vars/` and
  `slurm/`), read by every node at first boot with its instance role. It holds no secret: the munge key has a
  place of its own (an SSM SecureString parameter, see components/image.py).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from clusterforge.files.checkout import COLLECTION_NAME, COLLECTION_NAMESPACE, project_root
from clusterforge.powersave.payload import controller_modules

BUNDLE_FILES = ("site.yml", "ansible.cfg")
BUNDLE_DIRS = ("roles", "plugins")
# In the archive the collection's plugins sit where ansible-playbook looks beside the playbook it runs.
ARCHIVED_AS = {"plugins": f"collections/ansible_collections/{COLLECTION_NAMESPACE}/{COLLECTION_NAME}/plugins"}
SKIPPED_PARTS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".swp", "~")


def _wanted(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return (path.is_file() and not path.is_symlink() and not SKIPPED_PARTS.intersection(parts)
            and not any(part.startswith(".") for part in parts) and not path.name.endswith(SKIPPED_SUFFIXES))


def bundle_paths(root: Path) -> list[Path]:
    """The files of the roles bundle, sorted by their path in the archive (links and caches left out)."""
    found = [root / name for name in (*BUNDLE_FILES, *controller_modules(root))]
    for folder in BUNDLE_DIRS:
        found += [p for p in (root / folder).rglob("*") if _wanted(p, root)]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def tar_gz(files: Iterable[tuple[str, bytes, bool]]) -> bytes:
    """A gzip'd tar of (path, content, executable) in the order given; the same input gives the same bytes."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content, executable in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(content), 0, 0o755 if executable else 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(content))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as archive:
        archive.write(raw.getvalue())
    return out.getvalue()


def archived_name(relative: str) -> str:
    """A tree file's path in the roles bundle (the plugins go where the playbook finds their collection)."""
    top, _, rest = relative.partition("/")
    return f"{ARCHIVED_AS[top]}/{rest}" if top in ARCHIVED_AS and rest else relative


def roles_bundle(root: Path | None = None) -> bytes:
    """The roles bundle of the tree (`clusterforge.files.checkout.project_root` unless `root` is given)."""
    base = root if root is not None else project_root()
    entries = sorted((archived_name(p.relative_to(base).as_posix()), p) for p in bundle_paths(base))
    return tar_gz((name, p.read_bytes(), bool(p.stat().st_mode & 0o100)) for name, p in entries)


def config_bundle(files: Mapping[str, str]) -> bytes:
    """The node config archive from rendered files by relative path (sorted, so its bytes follow the text)."""
    return tar_gz((name, files[name].encode(), False) for name in sorted(files))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
