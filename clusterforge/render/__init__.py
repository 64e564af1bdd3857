"""Renderers: the plan as files (Ansible inventory and vars, SLURM configs, and what the target adds).

Each module's `render(ctx)` returns its files by relative path (pure); `write` stages them one module at a
time and puts the whole directory in place at once. Modules are looked up at call time, so a test can make
one fail halfway.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from clusterforge.atomic import replace_directory, stage_text, write_error
from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.render import (
    cgroup_conf,
    gres_conf,
    group_vars,
    inventory,
    job_container_conf,
    plugstack_conf,
    powersave_file,
    slurm_conf,
    topology_conf,
)
from clusterforge.render.context import RenderContext
from clusterforge.targets import in_use

__all__ = ["OUTPUTS", "RenderContext", "render_files", "write"]

OUTPUTS: tuple[ModuleType, ...] = (inventory, group_vars, slurm_conf, gres_conf, topology_conf, cgroup_conf,
                                   plugstack_conf, job_container_conf, powersave_file)
MARKER = ".clusterforge-render"


def _check_target(out: Path) -> None:
    """Refuse to replace a directory that render did not write: the whole directory is swapped. (A link,
    a file or a device is refused by replace_directory.)"""
    if out.is_dir() and not out.is_symlink() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ClusterforgeError(Problem(
            "is not empty and was not written by clusterforge render; render replaces the whole directory",
            str(out), hint="choose a new or empty directory"))


def renderers(ctx: RenderContext) -> tuple[Callable[[RenderContext], dict[str, str]], ...]:
    """Every renderer a cluster gets: the common modules, then those of its targets (the cluster's, then each
    other one its pools name)."""
    return (*(module.render for module in OUTPUTS), *(target.render for target in in_use(ctx.loaded.cluster)))


def render_files(ctx: RenderContext) -> dict[str, str]:
    """Every file of the cluster by relative path, in memory (what `write` puts in place, but its marker)."""
    return {relative: text for render in renderers(ctx) for relative, text in render(ctx).items()}


def write(ctx: RenderContext, out: Path) -> list[str]:
    """Render into a staging directory that replaces `out` only when every file is written."""
    try:
        _check_target(out)
    except OSError as exc:
        raise write_error(out, exc) from None
    written = []
    with replace_directory(out) as staging:  # an OSError in here becomes a ClusterforgeError naming `out`
        stage_text(staging / MARKER, ctx.header())
        for render in renderers(ctx):
            for relative, text in sorted(render(ctx).items()):
                stage_text(staging / relative, text)
                written.append(relative)
    return written
