"""plugstack.conf: the SPANK plugins, always written so that ours replaces Debian's.

Debian's plugstack.conf is `include /etc/slurm/plugstack.conf.d/*.conf` over an empty directory, and slurmctld
logs two errors for it at every start (the measured recipe, section 11). Without containers the file is only a
comment ("missing or empty, it will simply be ignored", spank(7)); with them it loads pyxis.

The plugin's path is one for every architecture, because configless sends every node the same file and a
cluster may mix them (aarch64 GB200 compute trays, x86_64 login nodes), while NVIDIA's pyxis packages put the
library in each architecture's own directory (/usr/lib/<multiarch>/slurm). /usr/local/lib/slurm/spank_pyxis.so
is pyxis's own `make install` location (its Makefile and README); the containers role makes it exist on each host,
a link to its package's file where the package put it elsewhere.
"""

from __future__ import annotations

from clusterforge.render.context import RenderContext, conf_lines
from clusterforge.render.manifest import RoleHandlers

# What changing it takes on day two (clusterforge.render.manifest): what the slurm role's handlers for it do.
DAY_TWO = {"slurm/plugstack.conf": RoleHandlers()}

PYXIS = "/usr/local/lib/slurm/spank_pyxis.so"


def render(ctx: RenderContext) -> dict[str, str]:
    if ctx.loaded.cluster.slurm.containers:
        body = ["# enroot + pyxis: srun --container-image (roles/containers)", f"required {PYXIS}"]
    else:
        body = ["# no SPANK plugins (slurm.containers: false); this file replaces Debian's include of an empty "
                "directory"]
    return {"slurm/plugstack.conf": ctx.header() + conf_lines(body)}
