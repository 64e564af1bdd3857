"""STO-001 / STO-002 at preview: an FSx for Lustre file system's capacity and throughput tier."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clusterforge.catalog import Catalog
from clusterforge.targets.aws.crossguard.props import UNKNOWN, as_int, as_text, read
from clusterforge.targets.aws.fsx import capacity_rule, capacity_step, capacity_unjudged, tier_problems

DEPLOYMENT_TYPES = ("SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2")
THROUGHPUT = "perUnitStorageThroughput"


@dataclass(frozen=True)
class Lustre:
    """The props both rules read, with the provider's defaults (SCRATCH_1, SSD) filled in."""

    deployment_type: str
    storage_type: str
    capacity: Any  # int, None (omitted) or a malformed value
    throughput: int | None


def lustre(props: Mapping[str, Any]) -> Lustre | None:
    """The file system's settings; None when one is unknown or outside what the rules cover."""
    raw = [read(props, key) for key in ("deploymentType", "storageType", "storageCapacity", THROUGHPUT)]
    if UNKNOWN in raw:
        return None
    kind = as_text(raw[0]) or "SCRATCH_1"
    storage = as_text(raw[1]) or "SSD"
    if kind not in DEPLOYMENT_TYPES or storage not in ("SSD", "HDD"):
        return None  # INTELLIGENT_TIERING has no capacity or per-TiB tier; new types are not ours to judge
    whole = as_int(raw[2])
    capacity = whole if whole is not None else raw[2]
    return Lustre(kind, storage, capacity, as_int(raw[3]))


def capacity_problems(props: Mapping[str, Any], catalog: Catalog | None = None) -> list[str]:
    """STO-001: storageCapacity is a size AWS accepts for the deployment and storage type."""
    fs = lustre(props)
    if fs is None or fs.capacity is None:
        return []
    if not isinstance(fs.capacity, int) or fs.capacity <= 0:
        return [f"storageCapacity {fs.capacity!r} is not a whole positive number of GiB"]
    unjudged = capacity_unjudged(fs.deployment_type, fs.storage_type, fs.throughput)
    if unjudged is not None:
        return [f"storageCapacity {fs.capacity:,} GiB cannot be judged: {unjudged[0]} ({unjudged[1]})"]
    rule_text = capacity_rule(fs.capacity, fs.deployment_type, fs.storage_type, fs.throughput)
    if rule_text is None:
        return []
    step = capacity_step(fs.deployment_type, fs.storage_type, fs.throughput)
    up = -(-fs.capacity // step) * step
    return [f"storageCapacity {fs.capacity:,} GiB is not valid: it must be {rule_text} (use {up:,} GiB)"]


def throughput_problems(props: Mapping[str, Any], catalog: Catalog | None = None) -> list[str]:
    """STO-002: perUnitStorageThroughput is a tier the deployment and storage type offer (none for SCRATCH)."""
    fs = lustre(props)
    if fs is None:
        return []
    return [f"{p.message} ({p.hint})" for p in tier_problems(fs.deployment_type, fs.storage_type, fs.throughput,
                                                              THROUGHPUT)]
