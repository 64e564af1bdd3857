"""SW-005 for AMD pools: the oldest ROCm release that supports each GPU architecture, read from the shared
`gpu_architecture` table. The rule finds `architecture_checks` through the registry (`vendor_function`)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog.software import SoftwareCatalog
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import PIN, older, pool_architectures


def architecture_checks(pool_set: PoolSet, tables: SoftwareCatalog) -> Iterator[Draft]:
    """SW-005: the ROCm release is no older than the oldest that supports each pool's GPU architecture."""
    release = pool_set.software.version("rocm")
    for arch, gpu in pool_architectures(pool_set, tables):
        if arch.min_rocm and release and PIN.match(release) and older(release, arch.min_rocm):
            yield Draft(("software", "rocm"), f"ROCm {release} is older than {arch.min_rocm}, the oldest that "
                        f"supports {arch.architecture}: {gpu}", f"use ROCm ≥ {arch.min_rocm} with its RCCL")
