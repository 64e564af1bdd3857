"""Target aws's fabric kind: `fabric: {kind: efa}`, the Elastic Fabric Adapter. Only AWS offers it, so the blueprint
model has it only through this target (its `BlueprintPart.fabrics`); its interfaces and placement are the pools'
(efa.py)."""

from __future__ import annotations

from typing import Literal

from clusterforge.model import TargetFabric


class EfaFabric(TargetFabric):
    """AWS Elastic Fabric Adapter: no switches to size, interfaces and placement instead."""

    kind: Literal["efa"]
