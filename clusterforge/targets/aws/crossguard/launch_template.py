"""NET-005 at preview: a launch template's EFA interface layout against its instance type's limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterforge.catalog import Catalog
from clusterforge.target_kernel import load_catalog
from clusterforge.targets.aws.crossguard.props import UNKNOWN, as_int, as_text, elements, read
from clusterforge.targets.aws.efa import Interface, efa_layout_problems
from clusterforge.targets.aws.instance import Ec2Instance


def interfaces(props: Mapping[str, Any]) -> list[Interface] | None:
    """The template's interfaces with AWS defaults filled in; None when any part is not known yet."""
    raw = read(props, "networkInterfaces")
    if raw is UNKNOWN:
        return None
    found: list[Interface] = []
    for nic in elements(raw):
        values = [read(nic, "networkCardIndex"), read(nic, "deviceIndex"), read(nic, "interfaceType")]
        if nic is UNKNOWN or UNKNOWN in values:
            return None
        card, device, kind = values
        found.append(Interface(_index(card), _index(device), as_text(kind) or "interface"))
    return found


def _index(value: Any) -> int:
    """An omitted index is 0 (AWS's default); a malformed one becomes -1 so the range check reports it."""
    if value is None:
        return 0
    number = as_int(value)
    return -1 if number is None else number


def instance_of(instance_type: Any, catalog: Catalog) -> Ec2Instance | None:
    """The catalog's instance entry, or None for a type the catalog does not know (nothing to check). A type the
    catalog knows only as an UltraServer's instances (p6e-gb200.36xlarge) is read from that UltraServer's entry,
    whose figures are one instance's."""
    name = as_text(instance_type)
    if name is None:
        return None
    if name in catalog:
        entry = catalog.get(name)
        return entry if isinstance(entry, Ec2Instance) else None
    return next((entry for key, entry in catalog.items()
                 if isinstance(entry, Ec2Instance) and entry.launched_as(key) == name), None)


def launch_template_problems(props: Mapping[str, Any], catalog: Catalog | None = None) -> list[str]:
    """EFA layout problems of one launch template's props (empty when fine, unknown or not checkable)."""
    instance_type = read(props, "instanceType")
    instance = instance_of(instance_type, catalog if catalog is not None else load_catalog())
    listed = interfaces(props)
    if instance is None or not listed:
        return []
    return efa_layout_problems(str(instance_type), instance, listed)
