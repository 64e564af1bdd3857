"""STO-004 at preview: an FSx for Lustre file system's metadata IOPS."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterforge.catalog import Catalog
from clusterforge.targets.aws.crossguard.props import UNKNOWN, as_int, as_text, read
from clusterforge.targets.aws.fsx_metadata import metadata_problem


def metadata_problems(props: Mapping[str, Any], catalog: Catalog | None = None) -> list[str]:
    """STO-004: `metadataConfiguration.iops` is a value AWS accepts for the deployment type, storage type and
    mode (the provider's defaults: SCRATCH_1, SSD). Unknown values are left to the deploy."""
    raw = [read(props, "deploymentType"), read(props, "storageType"), read(props, "metadataConfiguration", "mode"),
           read(props, "metadataConfiguration", "iops")]
    if UNKNOWN in raw or raw[3] is None:
        return []
    iops = as_int(raw[3])
    if iops is None or iops <= 0:
        return [f"metadataConfiguration.iops {raw[3]!r} is not a whole positive number"]
    problem = metadata_problem(iops, as_text(raw[0]) or "SCRATCH_1", as_text(raw[1]) or "SSD",
                               as_text(raw[2]) or "USER_PROVISIONED")
    return [] if problem is None else [f"{problem.message} ({problem.hint})"]
