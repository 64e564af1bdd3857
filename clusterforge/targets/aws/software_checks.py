"""SW-001 on AWS: the software EFA needs fits the rest of the set, read from target aws's tables (software.py).

- The aws-ofi-nccl plugin fits the stack pins its row names (`min_<pin>`, `<pin>_majors`), and the EFA installer
  bundles that plugin.
- Each instance family has an oldest installer that drives its EFA devices.
- A vendor's SDK release whose row names an EFA installer series pins that series (the SDK's own table, in its
  vendor's folder).

The rule asks the cluster's target (this module's `software_checks`, found through the kernel) after the
accelerators' own checks, with the same
words and paths as those (clusterforge/policies/software_compat.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from clusterforge.accelerator_kernel import running
from clusterforge.catalog.software import Row, SoftwareCatalog, version_tuple
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import PIN, lookup, older, requirements
from clusterforge.targets.aws.software import AwsOfiNcclRow, EfaInstallerRow, EfaInstanceRow
from clusterforge.targets.aws.software_pins import efa_pins


def efa(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """The plugin fits the stack's pins its row names, and the installer bundles that plugin."""
    pins = efa_pins(sw)
    ofi, installer = pins.aws_ofi_nccl, pins.efa_installer
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
        yield from requirements(plugin, "aws-ofi-nccl", tables, sw)
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


def installer_series(sw: Software, tables: SoftwareCatalog, stack: Iterable[str]) -> Iterator[Draft]:
    """The EFA installer is of the series that a pinned release's row names (a vendor's SDK pins the installer its
    release was built with, in its own table; that the release fits its driver is the vendor's check)."""
    installer = efa_pins(sw).efa_installer
    for pin in stack:
        version = sw.version(pin)
        series = getattr(tables.row_in(pin, version), "efa_installer", None)
        if series and version_tuple(installer)[:2] != version_tuple(series)[:2]:
            yield Draft(("software", "efa_installer"), f"{pin} {version} pins EFA installer {series}.x, not "
                        f"{installer}", f"pin efa_installer {series}.x")


def software_checks(pool_set: PoolSet, tables: SoftwareCatalog, complete: bool) -> Iterator[Draft]:
    """What SW-001 checks on AWS after the stack's own tables: with the stack's set complete, the plugin and the
    installer against it (the plugin where its row names the stack's pins: the stack whose collectives load it);
    the installer against every pool's family."""
    if complete:
        stack = running(pool_set.stack).software_fields
        named = plugin_pins(pool_set.software, tables)
        if not named or named & set(stack) or named - set(type(pool_set.software).model_fields):
            yield from efa(pool_set.software, tables)  # a stack it serves, or a row to correct
        yield from installer_series(pool_set.software, tables, stack)
    yield from efa_instances(pool_set, tables)


def plugin_pins(sw: Software, tables: SoftwareCatalog) -> set[str]:
    """The stack pins the plugin's row names (where the table lacks the pinned release: the newest row's, so an
    unknown plugin is said on the stack it serves)."""
    row = tables.row(AwsOfiNcclRow, efa_pins(sw).aws_ofi_nccl)
    if row is None and (known := tables.versions(AwsOfiNcclRow.table())):
        row = tables.row(AwsOfiNcclRow, known[-1])
    return {*row.requires(), *row.majors()} if row is not None else set()
