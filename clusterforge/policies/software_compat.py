"""Compatibility as the vendors state it, read from the software tables (catalog data, a source per row).

- NVIDIA: a CUDA release needs its driver minimum; a CUDA minor newer than the tables know runs, under minor-version
  compatibility, on its major's driver branch minimum; NCCL is built per CUDA major.
- AMD: ROCm ships one RCCL and lists the amdgpu driver series it runs on.
- Every GPU architecture has an oldest driver (NVIDIA) or ROCm release (AMD) that supports it.
- A target checks the software its own nodes need with its own tables (its `software_checks.py`'s
  `software_checks`), with the helpers
  here: on AWS the EFA pieces and the Neuron SDK (clusterforge/targets/aws/software_checks.py).

A release newer than every row of its table is a warning that the tables are behind (a site adds the row with
`--catalog` once it has qualified the set); a release inside the known range that no row lists, and a set the rows
show to be incompatible, are errors. Each function checks one set of pins and writes its drafts against the
cluster's
`software` block; the rule moves them to where a pool set's pins are (policies/pool_software.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from clusterforge.accelerators import accelerator
from clusterforge.catalog.software import (
    ArchitectureRow,
    CudaMajorRow,
    CudaRow,
    GpuModelRow,
    NcclRow,
    RocmRow,
    Row,
    SoftwareCatalog,
    version_tuple,
)
from clusterforge.core.hints import known as known_names
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet

PIN = re.compile(r"^\d+(\.\d+){1,3}$")
QUALIFY = ("a site that has qualified it adds a row with --catalog (docs/policies.md, \"Adding a qualified software "
           "set\")")


def older(version: str, minimum: str) -> bool:
    return version_tuple(version) < version_tuple(minimum)


def newer(tables: SoftwareCatalog, kind: type[Row], version: str, *, major: bool = False) -> bool:
    """Whether `version` is newer than every release the table lists (with `major`: every release of its own major
    version, or of a major the table does not list at all)."""
    known = tables.versions(kind.table())
    if major:
        same = [v for v in known if version_tuple(v)[:1] == version_tuple(version)[:1]]
        known = same or [v for v in known if version_tuple(v)[:1] < version_tuple(version)[:1]]
    return bool(known) and version_tuple(version) > version_tuple(known[-1])


def unknown(tables: SoftwareCatalog, kind: type[Row], version: str, what: str) -> Draft:
    """A release the tables lack though it is not newer than them, on the blueprint field of the same name."""
    known = known_names(tables.versions(kind.KEY)) or "none"
    return Draft(("software", kind.KEY), f"{what} {version} is not in the software tables",
                 f"known: {known}; {QUALIFY}")


def ahead(tables: SoftwareCatalog, kind: type[Row], version: str, what: str, checked: str) -> Draft:
    """A release newer than the tables know: a warning that says so and what was still checked."""
    newest = tables.versions(kind.KEY)[-1]
    return Draft(("software", kind.KEY), f"{what} {version} is newer than the tables know (newest: {newest}); "
                 f"{checked}", QUALIFY, level="warning")


def lookup(tables: SoftwareCatalog, kind: type[Row], version: str, what: str,
           checked: str = "its pairings are not checked") -> tuple[Row | None, Draft | None]:
    """The row of `version`, or the draft that says why there is none (a warning when it is newer than the table)."""
    row = tables.row(kind, version)
    if row is not None:
        return row, None
    if newer(tables, kind, version):
        return None, ahead(tables, kind, version, what, checked)
    return None, unknown(tables, kind, version, what)


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


def architectures(pool_set: PoolSet, tables: SoftwareCatalog) -> Iterator[Draft]:
    """The driver (NVIDIA) or ROCm release (AMD) is no older than the oldest that supports each pool's GPU
    architecture; GPU models the tables do not map are not checked."""
    seen: dict[str, list[str]] = {}
    models: dict[str, tuple[str, str]] = {}
    for _, pool, gpus in pool_set.pools:
        model = tables.row(GpuModelRow, gpus.model)
        if model is not None:
            seen.setdefault(model.architecture, []).append(pool.name)
            models.setdefault(model.architecture, (accelerator(gpus.vendor).title, gpus.model))
    sw = pool_set.software
    for name, pools in seen.items():
        arch = tables.row(ArchitectureRow, name)
        if arch is None:
            continue
        vendor, model_name = models[name]
        gpu = f"{vendor} {model_name} ({name}, pool {', '.join(pools)})"
        driver, release = sw.version("nvidia_driver"), sw.version("rocm")
        if pool_set.stack == "cuda" and arch.min_driver and PIN.match(driver) and older(driver, arch.min_driver):
            yield Draft(("software", "nvidia_driver"), f"driver {driver} is older than {arch.min_driver}, "
                        f"the oldest that supports {name}: {gpu}", f"use driver ≥ {arch.min_driver} (and a CUDA it "
                        "supports)")
        if pool_set.stack == "rocm" and arch.min_rocm and release and PIN.match(release) \
                and older(release, arch.min_rocm):
            yield Draft(("software", "rocm"), f"ROCm {release} is older than {arch.min_rocm}, the oldest that "
                        f"supports {name}: {gpu}", f"use ROCm ≥ {arch.min_rocm} with its RCCL")
