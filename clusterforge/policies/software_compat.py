"""What every compatibility check shares: a release looked up in the software tables (catalog data, a source per
row), and the drafts for a release they lack or that is newer than every row.

Each accelerator vendor checks its own stack's pins against its own tables (its `software_checks.py` in
clusterforge/accelerators/<vendor>/), and a target the software its own nodes need beyond the stack (its
`software_checks.py`), both with the helpers here; every GPU architecture has an oldest release of its vendor's
stack that supports it (`pool_architectures` finds the pools' architectures for the vendor's SW-005 check).

A release newer than every row of its table is a warning that the tables are behind (a site adds the row with
`--catalog` once it has qualified the set); a release inside the known range that no row lists, and a set the rows
show to be incompatible, are errors. Each function checks one set of pins and writes its drafts against the
cluster's
`software` block; the rule moves them to where a pool set's pins are (policies/pool_software.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from clusterforge.accelerator_kernel import accelerator
from clusterforge.catalog.software import ArchitectureRow, GpuModelRow, RequiresRow, Row, SoftwareCatalog, version_tuple
from clusterforge.core.hints import did_you_mean
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


def requirements(row: RequiresRow, what: str, tables: SoftwareCatalog, software: Software) -> Iterator[Draft]:
    """What a component's row (`what`, its release) asks of the set's other pins: each no older than its `min_`,
    each of a major its `_majors` lists (the hint names the oldest release of the component that supports the
    pinned major, where the table has one). A pin the set leaves unset is not checked."""
    path = ("software", row.KEY)
    named = set(type(software).model_fields)
    for pin in sorted({*row.requires(), *row.majors()} - named):
        yield Draft(path, f"the {what} {row.key} row names a pin `software:` does not have: {pin}",
                    "its keys are min_<pin> and <pin>_majors of a `software:` pin: "
                    + did_you_mean(pin, sorted(named - {"stack"})))
    for pin, oldest in row.requires().items():
        if pin in named and (have := software.version(pin)) and older(have, oldest):
            yield Draft(path, f"{what} {row.key} needs {pin} ≥ {oldest}, not {have}",
                        f"upgrade {pin} or pin an older {what}")
    for pin, majors in row.majors().items():
        if pin in named and (have := software.version(pin)) and version_tuple(have)[0] not in majors:
            major = version_tuple(have)[0]
            able = [v for v in tables.versions(row.table())
                    if (other := tables.row(type(row), v)) is not None and major in other.majors().get(pin, [])]
            hint = (f"pin {what} ≥ {able[0]}, the oldest that supports {pin} {major}" if able
                    else f"no {what} release in the tables supports {pin} {major}: pin another {pin}")
            yield Draft(path, f"{what} {row.key} supports {pin} {'/'.join(str(m) for m in majors)}.x, not {have}",
                        hint)


def pool_architectures(pool_set: PoolSet, tables: SoftwareCatalog) -> Iterator[tuple[ArchitectureRow, str]]:
    """Each GPU architecture among the set's pools that the tables know, with how a message names its GPUs
    ("<vendor> <model> (<architecture>, pool <names>)"): what a vendor's SW-005 check compares its stack's oldest
    supporting release with. GPU models the tables do not map are not checked."""
    seen: dict[str, list[str]] = {}
    models: dict[str, tuple[str, str]] = {}
    for _, pool, gpus in pool_set.pools:
        model = tables.row(GpuModelRow, gpus.model)
        if model is not None:
            seen.setdefault(model.architecture, []).append(pool.name)
            models.setdefault(model.architecture, (accelerator(gpus.vendor).title, gpus.model))
    for name, pools in seen.items():
        arch = tables.row(ArchitectureRow, name)
        if arch is not None:
            vendor, model_name = models[name]
            yield arch, f"{vendor} {model_name} ({name}, pool {', '.join(pools)})"
