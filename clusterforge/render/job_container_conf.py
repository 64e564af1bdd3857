"""job_container.conf for job_container/tmpfs: every job gets private /tmp and /dev/shm (or the blueprint's
`dirs`) under BasePath, removed when it ends. Written only when `slurm.job_container_tmpfs` is set, as
slurm.conf then names the plugin; configless nodes fetch the file with the rest."""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import RoleHandlers

# What changing it takes on day two (clusterforge.render.manifest): what the slurm role's handlers for it do.
DAY_TWO = {"slurm/job_container.conf": RoleHandlers()}


def render(ctx: RenderContext) -> dict[str, str]:
    spec = ctx.loaded.cluster.slurm.job_container_tmpfs
    if spec is None:
        return {}
    path = ("slurm", "job_container_tmpfs")
    # job_container.conf(5): without NodeName the line starts with BasePath; AutoBasePath creates it (mode 0755)
    fields = [f"BasePath={ctx.conf(spec.base_path, (*path, 'base_path'))}", "AutoBasePath=true"]
    if spec.dirs:
        fields.append("Dirs=" + ",".join(ctx.conf(d, (*path, "dirs", i)) for i, d in enumerate(spec.dirs)))
    return {"slurm/job_container.conf": ctx.header() + conf_lines([" ".join(fields)])}
