"""Where the files every Ansible-facing command reads live (a checkout, or an installed release), and where
clusterforge caches what it builds.

Commands of several rooms need these (`provision`, `update`, day two's reading of the slurm role, the lab, the
image bake, `new`, `stack new`), so they live below all of them rather than in the lab's package.

Two places hold the same tree: a checkout of clusterforge (`pip install -e .`: the package is one level below
it), and an installed wheel, whose build copies the tree into the package as `clusterforge/bundled/` (setup.py's
build hook): `site.yml`, `ansible.cfg`, the roles as the collection `clusterforge.cluster` (`galaxy.yml`,
`meta/`, `roles/`, `plugins/`), the Pulumi program and policy pack, the team templates and the lab's job. So
every command works from `pipx install clusterforge` outside any checkout, and from a checkout exactly as before.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

COLLECTION_NAMESPACE, COLLECTION_NAME = "clusterforge", "cluster"  # galaxy.yml's: roles are clusterforge.cluster.*
_PACKAGE = Path(__file__).resolve().parents[1]  # clusterforge/files/ -> the package


def cache_root() -> Path:
    """`$CLUSTERFORGE_CACHE`, else `$XDG_CACHE_HOME/clusterforge`, else `~/.cache/clusterforge`."""
    explicit = os.environ.get("CLUSTERFORGE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "clusterforge"


def _holds_the_tree(root: Path) -> bool:
    return (root / "site.yml").is_file() and (root / "roles").is_dir()


def candidates() -> list[Path]:
    """Where the tree may be, in order: `$CLUSTERFORGE_ANSIBLE_DIR`, the checkout around the package, the
    installed release's copy inside it."""
    explicit = os.environ.get("CLUSTERFORGE_ANSIBLE_DIR")
    if explicit:
        return [Path(explicit)]
    return [_PACKAGE.parent, _PACKAGE / "bundled"]


def project_root() -> Path:
    """The tree holding `site.yml` and `roles/`: a checkout, or the installed release's copy."""
    for root in candidates():
        if _holds_the_tree(root):
            return root
    raise ClusterforgeError(Problem(
        "site.yml and roles/ not found", str(candidates()[0]),
        hint="reinstall clusterforge from its wheel (pipx install clusterforge-X.whl), run from a checkout "
             "(pip install -e .), or set CLUSTERFORGE_ANSIBLE_DIR"))


def shipped(relative: str) -> Path | None:
    """A file or folder the release ships beside the package (`templates`, `examples/jobs`, `stacks/aws`,
    `policy-pack`), from the checkout or the installed copy; None where neither has it."""
    for root in candidates():
        if (root / relative).exists():
            return root / relative
    return None


def collections_path(root: Path) -> Path:
    """A folder Ansible can take as a collections path in which `clusterforge.cluster` is `root` itself.

    The roles name their own filter plugin by its full name (clusterforge.cluster.missing_packages), as a role
    of a collection must; run from this tree rather than from an installed collection, Ansible finds it through
    this link, made once per tree in the cache (never inside the tree: a link to its own parent would loop for
    every tool that walks it)."""
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    base = cache_root() / "collections" / digest
    link = base / "ansible_collections" / COLLECTION_NAMESPACE / COLLECTION_NAME
    if not (link.is_symlink() and link.resolve() == root.resolve()):
        link.parent.mkdir(parents=True, exist_ok=True)
        staging = link.with_name(f".{COLLECTION_NAME}.{os.getpid()}")
        staging.unlink(missing_ok=True)
        staging.symlink_to(root.resolve(), target_is_directory=True)
        staging.replace(link)  # atomic: a second process sees the old link or the new, never none
    return base


def ansible_environment(root: Path) -> dict[str, str]:
    """What an Ansible run over `root`'s site.yml needs beyond its ansible.cfg: the collection the roles name."""
    inherited = os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")
    defaults = "~/.ansible/collections:/usr/share/ansible/collections"
    return {"ANSIBLE_COLLECTIONS_PATH": os.pathsep.join(p for p in (str(collections_path(root)), inherited or defaults)
                                                        if p)}
