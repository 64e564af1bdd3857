"""Renderers: the plan as files (Ansible inventory and vars, SLURM configs, and what the target adds).

Each module's `render(ctx)` returns its files by relative path (pure); `write` stages them one module at a
time and puts the whole directory in place at once. Modules are looked up at call time, so a test can make
one fail halfway.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import replace_directory, stage_text, write_error
from clusterforge.render import (
    cgroup_conf,
    gres_conf,
    group_vars,
    inventory,
    job_container_conf,
    plugstack_conf,
    powersave_file,
    provisioning_files,
    slurm_conf,
    topology_conf,
)
from clusterforge.render.context import RenderContext
from clusterforge.render.manifest import MANIFEST
from clusterforge.target_kernel import in_use, render_part

__all__ = ["MANIFEST", "OUTPUTS", "RenderContext", "render_files", "write"]

OUTPUTS: tuple[ModuleType, ...] = (inventory, group_vars, slurm_conf, gres_conf, topology_conf, cgroup_conf,
                                   plugstack_conf, job_container_conf, powersave_file, provisioning_files)
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
    return (*(module.render for module in OUTPUTS),
            *(render_part(target).files for target in in_use(ctx.loaded.cluster)))


def manifest_of(ctx: RenderContext, files: dict[str, str]) -> str:
    """The render manifest of `files` (clusterforge.render.manifest): what changing each file and key takes."""
    from clusterforge.render.manifest_build import build

    keys = {path: found for module in OUTPUTS if hasattr(module, "day_two_keys")
            for path, found in module.day_two_keys(ctx).items()}
    return build(files, keys, OUTPUTS, ctx.loaded.cluster.name).to_json()


def render_files(ctx: RenderContext) -> dict[str, str]:
    """Every file of the cluster by relative path, in memory, with the manifest (what `write` puts in place, but
    its marker)."""
    files = {relative: text for render in renderers(ctx) for relative, text in render(ctx).items()}
    return files | {MANIFEST: manifest_of(ctx, files)}


def write(ctx: RenderContext, out: Path) -> list[str]:
    """Render into a staging directory that replaces `out` only when every file is written: each renderer's
    files, then the manifest of them all."""
    try:
        _check_target(out)
    except OSError as exc:
        raise write_error(out, exc) from None
    written = []
    files: dict[str, str] = {}
    with replace_directory(out) as staging:  # an OSError in here becomes a ClusterforgeError naming `out`
        stage_text(staging / MARKER, ctx.header())
        for render in renderers(ctx):
            for relative, text in sorted(render(ctx).items()):
                stage_text(staging / relative, text)
                written.append(relative)
                files[relative] = text
        stage_text(staging / MANIFEST, manifest_of(ctx, files))
        written.append(MANIFEST)
    return written
