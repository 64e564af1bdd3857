"""What the comparison of two renders shares: a setting's value as text, the keys of two mappings in order, and
the scope that turns the effect table's host selectors into the new render's hosts."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import clusterforge.accelerator_kernel as accelerators
from clusterforge.day2.changes import Change
from clusterforge.day2.rendered import Rendered
from clusterforge.render.change_classes import COMPUTE_GROUP, CONTROLLER_GROUP, Effect, FabricHosts, Hosts, VendorGpus
from clusterforge.render.manifest import FileEntry


def text(value: Any) -> str:
    """A setting's value as one string: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


class Scope:
    """Resolves the table's host selectors on the new render, and looks a change's effects up in the renders'
    manifests: NEW's, else OLD's (a key or file only OLD wrote). What neither declares takes `fallback`."""

    def __init__(self, new: Rendered, old: Rendered | None = None) -> None:
        self.new = new
        self.old = old

    def entry(self, path: str) -> FileEntry | None:
        found = self.new.manifest.entry(path)
        return found if found is not None or self.old is None else self.old.manifest.entry(path)

    def effects(self, path: str, table: str, key: str, fallback: Effect, old: str | None = None,
                new: str | None = None) -> tuple[Effect, ...]:
        """The effects a manifest declares for `key` of the file at `path` (`table`: keys, host_keys, nodes,
        hosts; `whole` for the file itself), for a change from `old` to `new`."""
        for side in (self.new, self.old):
            entry = side.manifest.entry(path) if side is not None else None
            if entry is None:
                continue
            found = entry.whole if table == "whole" else getattr(entry, table).get(key)
            if found is not None:
                return found.for_values(old, new)
        return (fallback,)

    def gpu(self, vendor: str | None = None) -> tuple[str, ...]:
        """Hosts with GPUs (of a vendor), and hosts an inventory says run the vendor's driver role anyway (its
        `enable_var`, the default vendor's for any GPU: the lab's GPU-less compute nodes set `nvidia_driver_enabled`
        to exercise the role)."""
        default = self.new.group_vars.get("gpu_vendor") or accelerators.default().name
        forced = accelerators.accelerator(vendor).enable_var
        return tuple(name for name, host in self.new.hosts.items()
                     if (number(host.vars.get("gpu_count")) > 0
                         and (vendor is None or (host.vars.get("gpu_vendor") or default) == vendor))
                     or (forced and host.vars.get(forced) is True))

    def dbd(self) -> tuple[str, ...]:
        host = self.new.dbd_host
        return (host,) if host else self.new.members(CONTROLLER_GROUP)[:1]

    def fabric(self, kind: str) -> tuple[str, ...]:
        """The hosts on a fabric's own interfaces: those the inventory gives `<kind>_interfaces`, else every
        compute node where the fabric is the cluster's (`<kind>_enabled`)."""
        hosts = tuple(name for name, host in self.new.hosts.items() if host.vars.get(f"{kind}_interfaces"))
        return hosts or (self.new.members(COMPUTE_GROUP) if self.new.group_vars.get(f"{kind}_enabled") else ())

    def hosts(self, selector: Hosts, changed: Sequence[str] = ()) -> tuple[str, ...]:
        if selector == "changed":
            return tuple(changed)
        if selector in ("controllers", "compute"):
            return self.new.members(CONTROLLER_GROUP if selector == "controllers" else COMPUTE_GROUP)
        if isinstance(selector, VendorGpus):
            return self.gpu(selector.vendor)
        if isinstance(selector, FabricHosts):
            return self.fabric(selector.kind)
        if selector == "gpu":
            return self.gpu()
        picks = {"all": lambda: tuple(self.new.hosts), "dbd": self.dbd, "none": tuple}
        return picks[selector]()

    def changes(self, file: str, key: str, old: str | None, new: str | None, effects: Iterable[Effect],
                changed: Sequence[str] = ()) -> Iterator[Change]:
        for effect in effects:
            yield Change(file, key, old, new, effect.action, self.hosts(effect.hosts, changed), effect.daemon,
                         effect.why)


def number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def keys(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The keys of both, OLD's order first."""
    return list(dict.fromkeys([*old, *new]))


def value_text(values: dict[str, Any], key: str) -> str | None:
    """A var's value as text, None when it is absent."""
    return text(values[key]) if key in values else None
