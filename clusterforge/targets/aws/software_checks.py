"""SW-001 on AWS: the software EFA needs fits the rest of the set, read from target aws's tables (software.py).

- The aws-ofi-nccl plugin fits NCCL and CUDA's major, and the EFA installer bundles that plugin.
- Each instance family has an oldest installer that drives its EFA devices.
- A Neuron SDK release pins an EFA installer series (the SDK's own table, clusterforge/accelerators/aws_neuron).

The rule asks the cluster's target (this module's `software_checks`, found through the kernel) after the
accelerators' own checks, with the same
words and paths as those (clusterforge/policies/software_compat.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.catalog.software import Row, SoftwareCatalog, version_tuple
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import PIN, lookup, older
from clusterforge.targets.aws.software import AwsOfiNcclRow, EfaInstallerRow, EfaInstanceRow
from clusterforge.targets.aws.software_pins import efa_pins


def efa(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """On AWS with CUDA: the plugin fits NCCL and CUDA's major version, and the installer bundles that plugin."""
    pins = efa_pins(sw)
    ofi, installer = pins.aws_ofi_nccl, pins.efa_installer
    collectives, toolkit = sw.version("nccl"), sw.version("cuda")
    plugin: Row | None = None
    bundle: Row | None = None
    if PIN.match(ofi):
        plugin, draft = lookup(tables, AwsOfiNcclRow, ofi, "aws-ofi-nccl")
        if draft is not None:
            yield draft
    if PIN.match(installer):
        bundle, draft = lookup(tables, EfaInstallerRow, installer, "EFA installer",
                               "the aws-ofi-nccl it bundles is not checked")
        if draft is not None:
            yield draft
    if isinstance(plugin, AwsOfiNcclRow):
        if older(collectives, plugin.min_nccl):
            yield Draft(("software", "aws_ofi_nccl"), f"aws-ofi-nccl {ofi} needs NCCL ≥ {plugin.min_nccl}, not "
                        f"{collectives}", "upgrade NCCL or pin an older plugin")
        if version_tuple(toolkit)[0] not in plugin.cuda_majors:
            yield Draft(("software", "aws_ofi_nccl"), f"aws-ofi-nccl {ofi} supports CUDA "
                        f"{'/'.join(str(m) for m in plugin.cuda_majors)}.x, not CUDA {toolkit}",
                        "pin a plugin release that supports this CUDA (CUDA 13 needs aws-ofi-nccl ≥ 1.17.0)")
    if isinstance(bundle, EfaInstallerRow) and version_tuple(bundle.aws_ofi_nccl)[:2] != version_tuple(ofi)[:2]:
        yield Draft(("software", "efa_installer"), f"EFA installer {installer} bundles aws-ofi-nccl "
                    f"{bundle.aws_ofi_nccl}, but {ofi} is pinned",
                    f"pin aws_ofi_nccl: {bundle.aws_ofi_nccl} or a matching installer")


def efa_instances(pool_set: PoolSet, tables: SoftwareCatalog) -> Iterator[Draft]:
    """On AWS: the EFA installer is no older than the oldest that drives each pool's instance family."""
    installer = efa_pins(pool_set.software).efa_installer
    if not PIN.match(installer):
        return
    families: dict[str, list[str]] = {}
    for _, pool, _ in pool_set.pools:
        families.setdefault(pool.hardware.split(".")[0], []).append(pool.name)
    for family, names in families.items():
        row = tables.row(EfaInstanceRow, family)
        if row is not None and older(installer, row.min_efa_installer):
            yield Draft(("software", "efa_installer"), f"EFA installer {installer} is older than "
                        f"{row.min_efa_installer}, the oldest that drives {family} instances' EFA devices "
                        f"(pool {', '.join(names)})", f"pin efa_installer ≥ {row.min_efa_installer} "
                        f"(`clusterforge catalog software --table efa_instance`)")


def neuron_efa(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """On AWS with the Neuron SDK: the EFA installer is of the series the SDK's release pins (its vendor's
    `neuron_sdk` table; the release and its driver are the vendor's own check)."""
    row = tables.row_in("neuron_sdk", sw.version("neuron_sdk"))
    series = getattr(row, "efa_installer", None)
    installer = efa_pins(sw).efa_installer
    if series and version_tuple(installer)[:2] != version_tuple(series)[:2]:
        yield Draft(("software", "efa_installer"), f"Neuron {sw.version('neuron_sdk')} pins EFA installer "
                    f"{series}.x, not {installer}", f"pin efa_installer {series}.x")


def software_checks(pool_set: PoolSet, tables: SoftwareCatalog, complete: bool) -> Iterator[Draft]:
    """What SW-001 checks on AWS after the stack's own tables: with a complete CUDA set the plugin and installer,
    with a complete Neuron set the installer's series; the installer against every pool's family."""
    if complete and pool_set.stack == "cuda":
        yield from efa(pool_set.software, tables)
    elif complete and pool_set.stack == "neuron":
        yield from neuron_efa(pool_set.software, tables)
    yield from efa_instances(pool_set, tables)
