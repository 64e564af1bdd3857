"""SW-001 for AMD pools, read from AMD's table (software.py): ROCm ships one RCCL and lists the amdgpu
driver series it runs on; each GPU architecture has an oldest ROCm release that supports it. The rules find these
functions through the registry (`vendor_function`), with the helpers every vendor's checks share
(clusterforge/policies/software_compat.py)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.accelerators.amd.software import RocmRow
from clusterforge.catalog.software import SoftwareCatalog, version_tuple
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import PIN, lookup


def rocm(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """ROCm is a known release, RCCL is the one it ships, the amdgpu driver is of a series AMD lists for it."""
    assert sw.pin("rocm") is not None and sw.pin("rccl") is not None
    release, collectives = sw.version("rocm"), sw.version("rccl")
    row, draft = lookup(tables, RocmRow, release, "ROCm", "its RCCL and amdgpu series are not checked")
    if draft is not None:
        yield draft
    if not isinstance(row, RocmRow):
        return
    if version_tuple(collectives) != version_tuple(row.rccl):
        yield Draft(("software", "rccl"), f"ROCm {release} ships RCCL {row.rccl}, not {collectives}",
                    f"pin rccl: {row.rccl}, or the ROCm release that ships {collectives}")
    driver = sw.pin("amdgpu_driver")
    if driver is not None and PIN.match(driver) and row.amdgpu and not any(
            version_tuple(driver)[:2] == version_tuple(series)[:2] for series in row.amdgpu):
        yield Draft(("software", "amdgpu_driver"), f"amdgpu {driver} is not of a series AMD lists for ROCm "
                    f"{release} ({', '.join(row.amdgpu)})", "use a listed driver series")


def software_checks(pool_set: PoolSet, tables: SoftwareCatalog, complete: bool) -> Iterator[Draft]:
    """SW-001 on a ROCm set: its RCCL and amdgpu series fit, once ROCm and RCCL are pinned."""
    if complete:
        yield from rocm(pool_set.software, tables)
