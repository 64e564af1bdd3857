"""Software rules: a known-compatible set (CUDA, ROCm or Neuron, with the EFA pieces on AWS), versions pinned, and
the stack the one the accelerators run.

The compatibility tables are catalog data (`clusterforge/catalog/data/software.yaml`, a source per row); a site
catalog adds the sets it has qualified. The rules only read them."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from clusterforge.catalog import Gpus, Instance, Server
from clusterforge.catalog.slurm_parameters import release_of
from clusterforge.catalog.software import (
    AwsOfiNcclRow,
    CudaRow,
    EfaInstallerRow,
    NcclRow,
    NeuronRow,
    RocmRow,
    Row,
    SlurmRow,
    SoftwareCatalog,
    version_tuple,
)
from clusterforge.hints import known as known_names
from clusterforge.model import Software
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import SOFTWARE, Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("software", "Software", 60)

PIN = re.compile(r"^\d+(\.\d+){1,3}$")
STACK_PINS = {"cuda": ("nvidia_driver", "cuda", "nccl"), "rocm": ("rocm", "rccl"),
              "neuron": ("neuron_sdk", "neuron_driver")}
# The stack each accelerator vendor runs (the catalog's gpus.vendor), and how messages name them.
VENDOR_STACK = {"nvidia": "cuda", "amd": "rocm", "aws": "neuron"}
VENDOR_NAME = {"nvidia": "NVIDIA", "amd": "AMD", "aws": "AWS Neuron"}
STACK_NAME = {"cuda": "CUDA/NCCL", "rocm": "ROCm/RCCL", "neuron": "Neuron"}


def _unknown(tables: SoftwareCatalog, kind: type[Row], version: str, what: str) -> Draft:
    """A release the tables lack, on the blueprint field of the same name, with what they know."""
    known = known_names(tables.versions(kind.KEY)) or "none"
    return Draft(("software", kind.KEY), f"{what} {version} is not in the software tables",
                 f"known: {known}; a site that has qualified it adds a row with --catalog (docs/policies.md, "
                 "\"Adding a qualified software set\")")


def _older(version: str, minimum: str) -> bool:
    return version_tuple(version) < version_tuple(minimum)


def _cuda(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """Driver ≥ CUDA's minimum, and NCCL has a build for this CUDA."""
    cuda = tables.row(CudaRow, sw.cuda)
    if cuda is None:
        yield _unknown(tables, CudaRow, sw.cuda, "CUDA")
    elif _older(sw.nvidia_driver, cuda.min_driver):
        yield Draft(("software", "nvidia_driver"), f"driver {sw.nvidia_driver} is older than {cuda.min_driver}, the "
                    f"minimum for CUDA {sw.cuda}", f"use driver ≥ {cuda.min_driver} or an older CUDA")
    nccl = tables.row(NcclRow, sw.nccl)
    if nccl is None:
        yield _unknown(tables, NcclRow, sw.nccl, "NCCL")
        return
    major = version_tuple(sw.cuda)[:1]
    usable = [b for b in nccl.cuda if version_tuple(b)[:1] == major and version_tuple(b) <= version_tuple(sw.cuda)]
    if not usable:
        yield Draft(("software", "nccl"), f"NCCL {sw.nccl} has no build for CUDA {sw.cuda} (builds: "
                    f"{', '.join(nccl.cuda)})", "pick an NCCL release built for this CUDA major version")


def _efa(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """On AWS with CUDA: the plugin fits NCCL and CUDA's major version, and the installer bundles that plugin."""
    ofi, installer = sw.aws_ofi_nccl, sw.efa_installer
    plugin, bundle = tables.row(AwsOfiNcclRow, ofi), tables.row(EfaInstallerRow, installer)
    if plugin is None and PIN.match(ofi):
        yield _unknown(tables, AwsOfiNcclRow, ofi, "aws-ofi-nccl")
    if bundle is None and PIN.match(installer):
        yield _unknown(tables, EfaInstallerRow, installer, "EFA installer")
    if plugin is not None:
        if _older(sw.nccl, plugin.min_nccl):
            yield Draft(("software", "aws_ofi_nccl"), f"aws-ofi-nccl {ofi} needs NCCL ≥ {plugin.min_nccl}, not "
                        f"{sw.nccl}", "upgrade NCCL or pin an older plugin")
        major = version_tuple(sw.cuda)[0]
        if major not in plugin.cuda_majors:
            yield Draft(("software", "aws_ofi_nccl"), f"aws-ofi-nccl {ofi} supports CUDA "
                        f"{'/'.join(str(m) for m in plugin.cuda_majors)}.x, not CUDA {sw.cuda}",
                        "pin a plugin release that supports this CUDA (CUDA 13 needs aws-ofi-nccl ≥ 1.17.0)")
    if bundle is not None and version_tuple(bundle.aws_ofi_nccl)[:2] != version_tuple(ofi)[:2]:
        yield Draft(("software", "efa_installer"), f"EFA installer {installer} bundles aws-ofi-nccl "
                    f"{bundle.aws_ofi_nccl}, but {ofi} is pinned",
                    f"pin aws_ofi_nccl: {bundle.aws_ofi_nccl} or a matching installer")


def _rocm(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """ROCm is a known release, RCCL is the one it ships, the amdgpu driver is of a series AMD lists for it."""
    assert sw.rocm is not None and sw.rccl is not None
    row = tables.row(RocmRow, sw.rocm)
    if row is None:
        yield _unknown(tables, RocmRow, sw.rocm, "ROCm")
        return
    if version_tuple(sw.rccl) != version_tuple(row.rccl):
        yield Draft(("software", "rccl"), f"ROCm {sw.rocm} ships RCCL {row.rccl}, not {sw.rccl}",
                    f"pin rccl: {row.rccl}, or the ROCm release that ships {sw.rccl}")
    driver = sw.amdgpu_driver
    if driver is not None and PIN.match(driver) and row.amdgpu and not any(
            version_tuple(driver)[:2] == version_tuple(series)[:2] for series in row.amdgpu):
        yield Draft(("software", "amdgpu_driver"), f"amdgpu {driver} is not of a series AMD lists for ROCm "
                    f"{sw.rocm} ({', '.join(row.amdgpu)})", "use a listed driver series")


def _neuron(sw: Software, tables: SoftwareCatalog, efa: bool) -> Iterator[Draft]:
    """The Neuron SDK is a known release, its driver no older than the release's, and on AWS the EFA installer of
    the series the release pins."""
    assert sw.neuron_sdk is not None and sw.neuron_driver is not None
    row = tables.row(NeuronRow, sw.neuron_sdk)
    if row is None:
        yield _unknown(tables, NeuronRow, sw.neuron_sdk, "Neuron SDK")
        return
    if _older(sw.neuron_driver, row.neuron_driver):
        yield Draft(("software", "neuron_driver"), f"aws-neuronx-dkms {sw.neuron_driver} is older than "
                    f"{row.neuron_driver}, the driver of Neuron {sw.neuron_sdk}", f"use ≥ {row.neuron_driver}")
    if efa and row.efa_installer and version_tuple(sw.efa_installer)[:2] != version_tuple(row.efa_installer)[:2]:
        yield Draft(("software", "efa_installer"), f"Neuron {sw.neuron_sdk} pins EFA installer "
                    f"{row.efa_installer}.x, not {sw.efa_installer}", f"pin efa_installer {row.efa_installer}.x")


@rule("SW-001", "error", DOMAIN, "Known-compatible version set",
      "CUDA release notes (minimum driver per release); NCCL builds per CUDA; aws-ofi-nccl and EFA installer "
      "notes; ROCm/RCCL changelog and amdgpu matrix; Neuron SDK release notes. Each row names its own source in "
      "clusterforge/catalog/data/software.yaml; a site adds qualified sets with --catalog",
      inputs=Inputs(("target", SOFTWARE), also="the catalog's software tables: built-in rows in "
             "`clusterforge/catalog/data/software.yaml` (a source each), a site's qualified sets from "
             "`--catalog` (see \"Adding a qualified software set\"); `clusterforge catalog software` lists "
             "them"))
def compatible_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The pinned stack is a known-compatible set: CUDA (driver ≥ CUDA's minimum, NCCL built for it and, on EFA,
    the plugin and installer that fit), ROCm (its RCCL and amdgpu series) or Neuron (its driver and EFA pin)."""
    sw, tables = ctx.cluster.software, ctx.catalog.software
    pins = sw.pins()
    if not all(field in pins and PIN.match(pins[field]) for field in STACK_PINS[sw.stack]):
        return  # SW-002 reports missing or unpinned versions
    if sw.stack == "rocm":
        yield from _rocm(sw, tables)
    elif sw.stack == "neuron":
        yield from _neuron(sw, tables, ctx.target.efa_software)
    else:
        yield from _cuda(sw, tables)
        if ctx.target.efa_software:
            yield from _efa(sw, tables)


@rule("SW-002", "error", DOMAIN, "Versions are pinned", "reproducible builds: no floating versions",
      inputs=Inputs((SOFTWARE,)))
def pinned_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every software version is an exact release number (no `latest`, ranges or wildcards), and the chosen
    `stack` has its versions pinned."""
    sw = ctx.cluster.software
    pins = sw.pins()
    for name, value in pins.items():
        if not PIN.match(value):
            yield Draft(("software", name), f"software.{name} is {value!r}, not a pinned version",
                        "pin an exact release such as 570.133.20")
    for name in STACK_PINS[sw.stack]:
        if name not in pins:
            yield Draft(("software", "stack"), f"software.stack is {sw.stack} but software.{name} is not pinned",
                        f"pin software.{name} (see `clusterforge catalog software`)")


def today() -> dt.date:
    """The date SW-003 compares end-of-support months with (a seam for tests)."""
    return dt.date.today()


def _month_over(month: str, day: dt.date) -> bool:
    """Whether `day` is after the whole of `month` (YYYY-MM)."""
    year, number = (int(part) for part in month.split("-"))
    return (day.year, day.month) > (year, number)


@rule("SW-003", "error", DOMAIN, "SLURM release is known and supported",
      "SchedMD's end of support per release (slurm.schedmd.com/upgrades.html), or a distribution's security "
      "support where it ships the release; rows with their sources in clusterforge/catalog/data/software.yaml",
      inputs=Inputs(("software.slurm",), also="the catalog's `slurm` table (a site adds rows with `--catalog`) "
             "and today's date"))
def slurm_release(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The pinned SLURM release is in the software tables (an error if not) and someone still ships security fixes
    for it (a warning once its last supported month has passed)."""
    version = ctx.cluster.software.slurm
    if not PIN.match(version):
        return  # SW-002 reports it
    tables = ctx.catalog.software
    release = release_of(version)
    row = tables.row(SlurmRow, release)
    if row is None:
        yield _unknown(tables, SlurmRow, release, "SLURM")
        return
    day = today()
    if _month_over(row.supported_until, day):
        supported = [r.key for _, r in tables.rows() if isinstance(r, SlurmRow)
                     and not _month_over(r.supported_until, day)]
        yield Draft(("software", "slurm"), f"SLURM {release} is out of support: its last security fixes were due "
                    f"in {row.supported_until} ({row.supported_by})",
                    f"pin a supported release: {', '.join(supported) or 'none known'}", level="warning")


def accelerators(entry: object) -> Gpus | None:
    """The accelerators of one node of a catalog entry: a server's (a tray's for a rack-scale system) or an
    instance type's GPUs or accelerators; None for CPU-only hardware. An instance type's `accelerators` without a
    vendor are AWS's own chips (Trainium, Inferentia), not the NVIDIA that `Gpus.vendor` defaults to."""
    if isinstance(entry, Server):
        return entry.node_gpus
    if isinstance(entry, Instance):
        if entry.gpus is not None or entry.accelerators is None:
            return entry.gpus
        chips = entry.accelerators
        return chips if "vendor" in chips.model_fields_set else chips.model_copy(update={"vendor": "aws"})
    return None


@rule("SW-004", "error", DOMAIN, "Software stack matches the accelerators",
      "the vendors' stacks run only on their own devices: CUDA and NCCL on NVIDIA GPUs, ROCm and RCCL on AMD "
      "Instinct, the Neuron SDK on Trainium/Inferentia; the vendor is the catalog's gpus.vendor",
      inputs=Inputs(("software.stack", "pools[].hardware"), ("gpus", "accelerators")))
def stack_matches_accelerators(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every pool's accelerators are of the vendor whose software `software.stack` pins (NVIDIA: cuda, AMD: rocm,
    AWS Trainium: neuron); otherwise SW-001 checks, and the roles install, the pins of another vendor's stack."""
    stack = ctx.cluster.software.stack
    for i, pool in enumerate(ctx.cluster.pools):
        gpus = accelerators(ctx.catalog.get(pool.hardware))
        if gpus is None or VENDOR_STACK[gpus.vendor] == stack:
            continue
        wanted = VENDOR_STACK[gpus.vendor]
        pins = ", ".join(f"{name}: ..." for name in STACK_PINS[wanted])
        yield Draft(("pools", i, "hardware"),
                    f"pool {pool.name} has {VENDOR_NAME[gpus.vendor]} {gpus.model} ({pool.hardware}) but "
                    f"software.stack is {stack}: {STACK_NAME[stack]} pins would be checked and installed, not "
                    f"{STACK_NAME[wanted]}",
                    f"set software: {{stack: {wanted}, {pins}}} (`clusterforge catalog software` lists the known "
                    "sets); one cluster runs one vendor's stack")
