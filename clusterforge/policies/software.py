"""Software rules: a known-compatible driver/CUDA/NCCL/EFA set, and versions pinned."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

from pydantic import BaseModel, ConfigDict

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.registry import rule
from clusterforge.validation import validate
from clusterforge.yamlsource import parse_text

PIN = re.compile(r"^\d+(\.\d+){1,3}$")


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    versions: dict[str, str | list[str]]


class Compatibility(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    cuda_min_driver: _Table
    nccl_cuda_builds: _Table
    aws_ofi_nccl_min_nccl: _Table
    efa_installer_bundles_ofi: _Table


@lru_cache(maxsize=1)
def compatibility() -> Compatibility:
    text = (resources.files("clusterforge.policies") / "data" / "compatibility.yaml").read_text(encoding="utf-8")
    return validate(Compatibility, parse_text(text, "<policies>/compatibility.yaml"))


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _known(table: _Table, version: str, what: str, path: tuple[str, ...]) -> Draft | None:
    if version in table.versions:
        return None
    known = ", ".join(sorted(table.versions, key=version_tuple))
    return Draft(path, f"{what} {version} is not in the compatibility table", f"known: {known}")


@rule("SW-001", "error", "software", "Known-compatible version set",
      "CUDA release notes (minimum driver per release); NCCL builds per CUDA; aws-ofi-nccl and EFA installer notes")
def compatible_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Driver ≥ CUDA's minimum; NCCL has a build for this CUDA; on EFA, aws-ofi-nccl and the installer fit NCCL."""
    sw, table = ctx.cluster.software, compatibility()
    if not all(PIN.match(v) for v in (sw.nvidia_driver, sw.cuda, sw.nccl)):
        return  # SW-002 reports unpinned versions
    unknown = _known(table.cuda_min_driver, sw.cuda, "CUDA", ("software", "cuda"))
    if unknown:
        yield unknown
    else:
        minimum = str(table.cuda_min_driver.versions[sw.cuda])
        if version_tuple(sw.nvidia_driver) < version_tuple(minimum):
            yield Draft(("software", "nvidia_driver"), f"driver {sw.nvidia_driver} is older than {minimum}, the "
                        f"minimum for CUDA {sw.cuda}", f"use driver ≥ {minimum} or an older CUDA")
    unknown = _known(table.nccl_cuda_builds, sw.nccl, "NCCL", ("software", "nccl"))
    if unknown:
        yield unknown
    else:
        builds = list(table.nccl_cuda_builds.versions[sw.nccl])
        cuda = version_tuple(sw.cuda)
        usable = [b for b in builds if version_tuple(b)[0] == cuda[0] and version_tuple(b) <= cuda]
        if not usable:
            yield Draft(("software", "nccl"), f"NCCL {sw.nccl} has no build for CUDA {sw.cuda} (builds: "
                        f"{', '.join(builds)})", "pick an NCCL release built for this CUDA major version")
    if ctx.cluster.target != "aws":
        return
    ofi, installer = sw.aws_ofi_nccl, sw.efa_installer
    for version, tab, what, key in ((ofi, table.aws_ofi_nccl_min_nccl, "aws-ofi-nccl", "aws_ofi_nccl"),
                                    (installer, table.efa_installer_bundles_ofi, "EFA installer", "efa_installer")):
        if PIN.match(version) and (missing := _known(tab, version, what, ("software", key))):
            yield missing
    if ofi in table.aws_ofi_nccl_min_nccl.versions:
        min_nccl = str(table.aws_ofi_nccl_min_nccl.versions[ofi])
        if version_tuple(sw.nccl) < version_tuple(min_nccl):
            yield Draft(("software", "aws_ofi_nccl"), f"aws-ofi-nccl {ofi} needs NCCL ≥ {min_nccl}, not {sw.nccl}",
                        "upgrade NCCL or pin an older plugin")
    if installer in table.efa_installer_bundles_ofi.versions:
        bundled = str(table.efa_installer_bundles_ofi.versions[installer])
        if version_tuple(bundled)[:2] != version_tuple(ofi)[:2]:
            yield Draft(("software", "efa_installer"), f"EFA installer {installer} bundles aws-ofi-nccl {bundled}, "
                        f"but {ofi} is pinned", f"pin aws_ofi_nccl: {bundled} or a matching installer")


@rule("SW-002", "error", "software", "Versions are pinned", "reproducible builds: no floating versions")
def pinned_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every software version is an exact release number: no `latest`, ranges or wildcards."""
    for name, value in ctx.cluster.software.model_dump().items():
        if not PIN.match(value):
            yield Draft(("software", name), f"software.{name} is {value!r}, not a pinned version",
                        "pin an exact release such as 570.133.20")
