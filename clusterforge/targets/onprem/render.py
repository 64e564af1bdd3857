"""What target onprem adds to render (`RENDER`): the protocol of a pool's BMCs, from its `bmc:` field, for the BMC
document render writes from the site's address plan (clusterforge/render/provisioning_files.py)."""

from __future__ import annotations

from clusterforge.model import Pool
from clusterforge.target_kernel.protocol import RenderPart


def bmc_protocol(pool: Pool) -> str | None:
    protocol = getattr(pool, "bmc", None)
    return str(protocol) if protocol is not None else None


RENDER = RenderPart(bmc_protocol=bmc_protocol)
