"""The "Adding a qualified software set" section of docs/policies.md: how a site extends SW-001's tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from clusterforge.accelerator_kernel import registered

# The section's two examples, as files a test loads: a site's qualified set (a catalog file) and the pools and
# software of a cluster of two vendors (a blueprint's part).
EXAMPLES = Path(__file__).parent / "data"
SITE_SET = EXAMPLES / "site-software.yaml"
MIXED_VENDORS = EXAMPLES / "mixed-vendors.yaml"


# What the rules check with each shared table; a vendor's or a target's own table says it in its row class
# (`Row.DOC`).
TABLES = {
    "gpu_model": ("`gpu_model`, `architecture`", "SW-005: maps the catalog's `gpus.model` to an architecture"),
    "gpu_architecture": ("`architecture`, `min_driver` or `min_rocm`", "SW-005: the release of the pool's vendor's "
                         "stack (its driver, or its platform release) is no older than the oldest that supports the "
                         "architecture"),
}


def tables() -> list[tuple[str, str, str]]:
    """(table, row keys, what the rules check) of every software table the docs describe, in the catalog's order:
    the shared ones and the registered vendors' and targets' (SW-003's `slurm` table has a section of its own)."""
    from clusterforge.catalog.parts import file_model
    from clusterforge.target_kernel import catalog_parts

    composed: Any = file_model(catalog_parts()).model_fields["software"].annotation
    out = []
    for name, info in composed.model_fields.items():
        (row,) = get_args(info.annotation)
        keys, checks = TABLES.get(name) or row.DOC
        if keys:
            out.append((f"`{name}`", keys, checks))
    return out


def software_sets() -> list[str]:
    rows = [f"| {table} | {keys} | {checks} |" for table, keys, checks in tables()]
    vendors = registered().values()
    runs = ", ".join(f"{vendor.title} runs {vendor.stack_title}" for vendor in vendors)
    stacks = ", ".join(f"`{stack}`" for stack in dict.fromkeys(vendor.stack for vendor in vendors))
    return [
        "## Adding a qualified software set", "",
        "SW-001 decides from tables, not code: the built-in rows are catalog data in "
        "`clusterforge/catalog/data/software.yaml` (a vendor's or a target's own tables in its folder's "
        "`data/software.yaml`, under `clusterforge/accelerators/` or `clusterforge/targets/`), one "
        "row per release with the source it was read in (`[U]` "
        "marks a pairing not confirmed in a primary source). A site that has qualified a newer or different set "
        "adds rows in the same format in its own catalog file and passes it to every command with `--catalog` "
        "(the stack config's `catalogs`, the CrossGuard pack's `catalogs`), so the set passes on its merits instead "
        "of being waived:", "",
        "```yaml", *SITE_SET.read_text(encoding="utf-8").splitlines(), "```", "",
        "| Table | Row keys (all need `source`) | What the rules check |", "|---|---|---|", *rows, "",
        "A release newer than every row of its table (or a minor release newer than every row of its major, where "
        "a table keeps a minimum per major version) is a **warning** that says the tables are behind, with what "
        "could still be checked; a release inside the known range that no row lists, and a set the rows show to be "
        "incompatible (a driver older than its toolkit's minimum, a collective library without a build for the "
        "toolkit's major, an installer older than the instance family's minimum), are errors. "
        "A site row cannot redefine a release the built-in tables list (exit 2, naming both files): a wrong built-in "
        "pairing is a bug to report, not something to shadow. `clusterforge catalog software` lists every row "
        "with its origin.", "",
        f"Each pool is checked against the pins of its own accelerators' vendor (the catalog's `gpus.vendor`: {runs}), "
        "so partitions of several vendors share one cluster: the `software` "
        "block holds the vendors' pins side by side, and a pool's own `software:` (version pins only) overrides "
        "the cluster's for that pool. Pools on the same pins are checked once; with more than one set the messages "
        "name the pools. SW-004 reports a pool whose vendor has no pins; `render` writes all.yml with the cluster's "
        "pins and `inventory/group_vars/pool_<name>.yml` for each pool whose vendor or pins differ. "
        f"`software.stack` ({stacks}) is optional: set, it declares that every accelerator pool runs "
        "that one stack (SW-004 fails a pool of another vendor) and SW-002 requires its versions:", "",
        "```yaml", *MIXED_VENDORS.read_text(encoding="utf-8").splitlines(), "```", "",
    ]
