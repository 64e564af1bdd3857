"""Software rules: each pool's stack is a known-compatible set (its vendor's tables, and what its target's nodes
need beyond it), versions are pinned, every pool's accelerators have their vendor's pins, and the stack supports the
GPU architecture.

Each pool is checked against its own accelerators' vendor's pins (or its own `software:` override), so partitions of
several vendors share one cluster (policies/pool_software.py). The compatibility tables are catalog data (the shared
ones in `clusterforge/catalog/data/software.yaml`, a vendor's or a target's own in its folder; a source per row); a
site catalog adds the sets it has qualified. The checks are the vendor's and the target's (their
`software_checks.py`, found by module), with the helpers of policies/software_compat.py."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from clusterforge.accelerator_kernel import accelerator, running, stack_pins, vendor_function
from clusterforge.catalog.slurm_parameters import release_of
from clusterforge.catalog.software import SlurmRow
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import OVERRIDES, SOFTWARE, Inputs
from clusterforge.policies.pool_software import PoolSet, accelerators, located, pool_sets
from clusterforge.policies.registry import domain, rule
from clusterforge.policies.software_compat import PIN, lookup
from clusterforge.target_kernel import stage_function


class SoftwareChecks(Protocol):
    """What SW-001 asks of an accelerator vendor with compatibility tables, and of a target whose nodes need
    software of their own beyond their accelerators' stack (the `software_checks` of the vendor's or the target's
    `software_checks.py`): the drafts for one set of pools on the same pins, given the catalog's software tables and
    whether the stack's pins are complete."""

    def __call__(self, pool_set: PoolSet, tables: Any, complete: bool) -> Iterable[Draft]:
        ...


class ArchitectureChecks(Protocol):
    """What SW-005 asks of an accelerator vendor (its `architecture_checks.py`'s `architecture_checks`): the drafts for
    one set of pools whose stack's release is older than the oldest that supports a pool's GPU architecture."""

    def __call__(self, pool_set: PoolSet, tables: Any) -> Iterable[Draft]:
        ...


DOMAIN = domain("software", "Software", 60)


def _complete(pins: dict[str, str], stack: str) -> bool:
    return all(field in pins and PIN.match(pins[field]) for field in stack_pins(stack))


@rule("SW-001", "error", DOMAIN, "Known-compatible version set",
      "CUDA release notes (minimum driver per release, Table 2's branch minimum per CUDA major); NCCL builds per "
      "CUDA; ROCm/RCCL changelog and amdgpu matrix; the release notes of what a target's nodes need beyond the stack "
      "(its fabric's plugin and installer, its own accelerators' SDK). Each row names its own source in "
      "clusterforge/catalog/data/software.yaml or its vendor's or target's data/software.yaml; a site adds qualified "
      "sets with --catalog",
      inputs=Inputs(("target", SOFTWARE, OVERRIDES, "pools[].hardware"), ("gpus", "accelerators"),
                    also="the catalog's software tables: built-in rows in "
                    "`clusterforge/catalog/data/software.yaml` and each vendor's and target's `data/software.yaml` "
                    "(a source "
                    "each), a site's qualified sets from `--catalog` (see \"Adding a qualified software set\"); "
                    "`clusterforge catalog software` lists them"))
def compatible_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each pool's pins are a known-compatible set for the stack its accelerators run, as its vendor's
    `software_checks` reads its tables, then what its target's nodes need beyond the stack (on EFA: the plugin and
    installer that fit, an installer no older than the instance family's minimum). A release newer than the tables
    know is a warning that says so, with what could still be checked; pools on the same pins are checked once, and
    with more than one set the message names the pools."""
    tables, target = ctx.catalog.software, ctx.target
    sets = pool_sets(ctx)
    for pool_set in sets:
        sw = pool_set.software
        drafts: list[Draft] = []
        complete = _complete(sw.pins(), pool_set.stack)  # SW-002 and SW-004 report missing or unpinned versions
        vendor: SoftwareChecks | None = vendor_function(running(pool_set.stack), "software_checks",
                                                         "software_checks")
        if vendor is not None:  # a vendor without compatibility tables has nothing to check here
            drafts += vendor(pool_set, tables, complete)
        own: SoftwareChecks | None = stage_function(target, "software_checks", "software_checks")
        if own is not None:
            drafts += own(pool_set, tables, complete)
        yield from located(drafts, sets, pool_set)


@rule("SW-002", "error", DOMAIN, "Versions are pinned", "reproducible builds: no floating versions",
      inputs=Inputs((SOFTWARE, OVERRIDES)))
def pinned_versions(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every software version is an exact release number (no `latest`, ranges or wildcards), in `software` and in
    each pool's override; a declared `stack` has its versions pinned, and a pool whose vendor has some but not all
    of its stack's versions pinned gets the rest (a vendor with none is SW-004's)."""
    cluster = ctx.cluster
    sw = cluster.software
    for name, value in sw.pins().items():
        if not PIN.match(value):
            yield Draft(("software", name), f"software.{name} is {value!r}, not a pinned version",
                        "pin an exact release such as 595.91.07")
    for i, pool in enumerate(cluster.pools):
        for name, value in (pool.software.pins() if pool.software else {}).items():
            if not PIN.match(value):
                yield Draft(("pools", i, "software", name), f"pools[{i}].software.{name} is {value!r}, not a "
                            "pinned version", "pin an exact release such as 595.91.07")
    if sw.stack is not None:
        for name in stack_pins(sw.stack):
            if name not in sw.pins():
                yield Draft(("software", "stack"), f"software.stack is {sw.stack} but software.{name} is not pinned",
                            f"pin software.{name} (see `clusterforge catalog software`)")
        return
    for pool_set in pool_sets(ctx):
        pins = pool_set.software.pins()
        missing = [name for name in stack_pins(pool_set.stack) if name not in pins]
        if missing and len(missing) < len(stack_pins(pool_set.stack)):
            for name in missing:
                yield Draft(pool_set.path(name), f"{pool_set.names()} run {running(pool_set.stack).stack_title} but "
                            f"software.{name} is not pinned", f"pin software.{name} (see `clusterforge catalog "
                            "software`)")


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
    row, draft = lookup(tables, SlurmRow, release, "SLURM", "its end of support is not checked")
    if draft is not None:
        yield draft
    if not isinstance(row, SlurmRow):
        return
    day = today()
    if _month_over(row.supported_until, day):
        supported = [r.key for _, r in tables.rows() if isinstance(r, SlurmRow)
                     and not _month_over(r.supported_until, day)]
        yield Draft(("software", "slurm"), f"SLURM {release} is out of support: its last security fixes were due "
                    f"in {row.supported_until} ({row.supported_by})",
                    f"pin a supported release: {', '.join(supported) or 'none known'}", level="warning")


@rule("SW-004", "error", DOMAIN, "Every pool has its accelerators' software",
      "the vendors' stacks run only on their own devices: CUDA and NCCL on NVIDIA GPUs, ROCm and RCCL on AMD "
      "Instinct, the Neuron SDK on Trainium/Inferentia; the vendor is the catalog's gpus.vendor",
      inputs=Inputs(("software.stack", SOFTWARE, OVERRIDES, "pools[].hardware"), ("gpus", "accelerators")))
def stack_matches_accelerators(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every accelerator pool has the pins of its vendor's stack (NVIDIA: CUDA, AMD: ROCm, AWS Trainium: Neuron), in
    `software` or the pool's own override; pools of several vendors each take their own vendor's pins. A declared
    `software.stack` says every accelerator pool runs that one stack, so a pool of another vendor is an error."""
    declared = ctx.cluster.software.stack
    if declared is not None:
        for i, pool in enumerate(ctx.cluster.pools):
            gpus = accelerators(ctx.catalog.get(pool.hardware))
            vendor = accelerator(gpus.vendor) if gpus is not None else None
            if gpus is None or vendor is None or vendor.stack == declared:
                continue
            yield Draft(("pools", i, "hardware"),
                        f"pool {pool.name} has {vendor.title} {gpus.model} ({pool.hardware}) but software.stack is "
                        f"{declared}: {running(declared).stack_title} pins would be checked and installed, not "
                        f"{vendor.stack_title}",
                        f"remove software.stack and pin both vendors' versions side by side ({_pins(vendor.stack)}), "
                        "each pool gets its own vendor's")
        return
    for pool_set in pool_sets(ctx):
        pins = pool_set.software.pins()
        if any(name in pins for name in stack_pins(pool_set.stack)):
            continue
        for i, pool, gpus in pool_set.pools:
            yield Draft(("pools", i, "hardware"),
                        f"pool {pool.name} has {accelerator(gpus.vendor).title} {gpus.model} ({pool.hardware}) but no "
                        f"{running(pool_set.stack).stack_title} pins: nothing to check or install for it",
                        f"pin software: {{{_pins(pool_set.stack)}}} or the pool's own software: (`clusterforge "
                        "catalog software` lists the known sets)")


def _pins(stack: str) -> str:
    return ", ".join(f"{name}: ..." for name in stack_pins(stack))


@rule("SW-005", "error", DOMAIN, "Driver supports the GPU architecture",
      "the oldest driver per GPU architecture: NVIDIA GPU Operator platform support (HGX B200: 570.133.20 or "
      "later), NVIDIA and AMD release notes (ROCm 7.0 adds gfx950, the MI350 series); rows with their sources in "
      "clusterforge/catalog/data/software.yaml (`gpu_model`, `gpu_architecture`)",
      inputs=Inputs((SOFTWARE, OVERRIDES, "pools[].hardware"), ("gpus",), also="of the pins, the one each "
                    "vendor's architecture check compares (its driver, or its platform release); the catalog's "
                    "`gpu_model` and `gpu_architecture` tables (a site adds rows with `--catalog`)"))
def driver_supports_architecture(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Each pool's stack release (its vendor's driver, or its platform release) is no older than the oldest that
    supports its GPUs' architecture (Hopper, Blackwell, Blackwell Ultra, CDNA3, CDNA4, ...), as its vendor's
    `architecture_checks` compares them: a set compatible with itself can still be too old for the GPU it runs on.
    GPU models the tables do not map are not checked."""
    tables = ctx.catalog.software
    sets = pool_sets(ctx)
    for pool_set in sets:
        checks: ArchitectureChecks | None = vendor_function(running(pool_set.stack), "architecture_checks",
                                                            "architecture_checks")
        if checks is not None:
            yield from located(list(checks(pool_set, tables)), sets, pool_set)
