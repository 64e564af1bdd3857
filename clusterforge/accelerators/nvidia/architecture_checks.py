"""SW-005 for NVIDIA pools: the oldest driver that supports each GPU architecture, read from the shared
`gpu_architecture` table. The rule finds `architecture_checks` through the registry (`vendor_function`)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog.software import SoftwareCatalog
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import PIN, older, pool_architectures


def architecture_checks(pool_set: PoolSet, tables: SoftwareCatalog) -> Iterator[Draft]:
    """SW-005: the driver is no older than the oldest that supports each pool's GPU architecture."""
    driver = pool_set.software.version("nvidia_driver")
    for arch, gpu in pool_architectures(pool_set, tables):
        if arch.min_driver and PIN.match(driver) and older(driver, arch.min_driver):
            yield Draft(("software", "nvidia_driver"), f"driver {driver} is older than {arch.min_driver}, "
                        f"the oldest that supports {arch.architecture}: {gpu}", f"use driver ≥ {arch.min_driver} "
                        "(and a CUDA it supports)")
