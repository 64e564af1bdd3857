"""SW-001 for NVIDIA pools, read from NVIDIA's tables (software.py): a CUDA release needs its driver
minimum; a CUDA minor newer than the tables know runs, under minor-version compatibility, on its major's driver
branch minimum; NCCL is built per CUDA major; each GPU architecture has an oldest driver that supports it. The rules
find these functions through the registry (`vendor_function`), with the helpers and words every vendor's checks
share (clusterforge/policies/software_compat.py)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.accelerators.nvidia.software import CudaMajorRow, CudaRow, NcclRow
from clusterforge.catalog.software import SoftwareCatalog, version_tuple
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import ahead, lookup, newer, older, unknown


def cuda(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """Driver ≥ CUDA's minimum (the major's branch minimum for a newer minor), and NCCL has a build for this CUDA's
    major version."""
    driver, toolkit, collectives = sw.version("nvidia_driver"), sw.version("cuda"), sw.version("nccl")
    release = tables.row(CudaRow, toolkit)
    if release is not None:
        if older(driver, release.min_driver):
            yield Draft(("software", "nvidia_driver"), f"driver {driver} is older than "
                        f"{release.min_driver}, the minimum for CUDA {toolkit}",
                        f"use driver ≥ {release.min_driver} or an older CUDA")
    elif newer(tables, CudaRow, toolkit, major=True):
        major = str(version_tuple(toolkit)[0])
        branch = tables.row(CudaMajorRow, major)
        if branch is not None and older(driver, branch.min_driver):
            yield Draft(("software", "nvidia_driver"), f"driver {driver} is older than "
                        f"{branch.min_driver}, the minimum for any CUDA {major}.x (CUDA {toolkit} is newer than the "
                        "tables know)", f"use driver ≥ {branch.min_driver}")
        else:
            checked = (f"the driver meets CUDA {major}.x's minimum {branch.min_driver} (minor-version compatibility)"
                       if branch is not None else f"no driver minimum is recorded for CUDA {major}.x")
            yield ahead(tables, CudaRow, toolkit, "CUDA", checked)
    else:
        yield unknown(tables, CudaRow, toolkit, "CUDA")
    nccl, draft = lookup(tables, NcclRow, collectives, "NCCL", "its CUDA builds are not checked")
    if draft is not None:
        yield draft
    if not isinstance(nccl, NcclRow):
        return
    cuda_major = version_tuple(toolkit)[:1]
    usable = [b for b in nccl.cuda if version_tuple(b)[:1] == cuda_major and version_tuple(b) <= version_tuple(toolkit)]
    if not usable:
        yield Draft(("software", "nccl"), f"NCCL {collectives} has no build for CUDA {toolkit} (builds: "
                    f"{', '.join(nccl.cuda)})", "pick an NCCL release built for this CUDA major version")


def software_checks(pool_set: PoolSet, tables: SoftwareCatalog, complete: bool) -> Iterator[Draft]:
    """SW-001 on a CUDA set: its driver, CUDA and NCCL fit, once all three are pinned (SW-002 and SW-004 report the
    rest)."""
    if complete:
        yield from cuda(pool_set.software, tables)
