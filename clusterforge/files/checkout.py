"""Where this checkout keeps what the Ansible-facing commands read, and where clusterforge caches what it builds.

Commands of several rooms need these (`provision`, `update`, day two's reading of the slurm role, the lab), so
they live below all of them rather than in the lab's package.
"""

from __future__ import annotations

import os
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem


def cache_root() -> Path:
    """`$CLUSTERFORGE_CACHE`, else `$XDG_CACHE_HOME/clusterforge`, else `~/.cache/clusterforge`."""
    explicit = os.environ.get("CLUSTERFORGE_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "clusterforge"


def project_root() -> Path:
    """The checkout holding `site.yml` and `roles/` (the package lives one level below it, this file two)."""
    explicit = os.environ.get("CLUSTERFORGE_ANSIBLE_DIR")
    root = Path(explicit) if explicit else Path(__file__).resolve().parents[2]  # clusterforge/files/ -> the checkout
    if not (root / "site.yml").is_file() or not (root / "roles").is_dir():
        raise ClusterforgeError(Problem(
            "site.yml and roles/ not found", str(root),
            hint="run from a clusterforge checkout (pip install -e .) or set CLUSTERFORGE_ANSIBLE_DIR"))
    return root
