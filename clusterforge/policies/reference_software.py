"""The "Adding a qualified software set" section of docs/policies.md: how a site extends SW-001's tables."""

from __future__ import annotations

from typing import Any, get_args

SITE_SET_EXAMPLE = """\
# site-software.yaml: the set this site has burned in, used as `--catalog site-software.yaml`
apiVersion: clusterforge/v1
kind: Catalog
software:
  cuda:
    - {cuda: "13.4", min_driver: "600.20.01", source: "qualified 2026-11-02, burn-in ticket OPS-4471"}
  nccl:
    - {nccl: "2.31.2", cuda: ["13.0", "13.4"], source: "NVIDIA libnccl2 2.31.2-1+cuda13.4; OPS-4471"}
"""

BLUEPRINT_EXAMPLE = """\
pools:
  - {name: h100, hardware: dgx-h100, count: 16, partition: nvidia}
  - name: mi300x
    hardware: mi300x-8gpu
    count: 16
    partition: amd
    software: {rocm: "7.1.1", rccl: "2.27.7"}   # this pool's own pins over the cluster's
software:                 # both vendors' pins side by side: each pool gets its own vendor's
  nvidia_driver: "595.91.07"
  cuda: "13.2"
  nccl: "2.30.7"
  rocm: "7.2.2"
  rccl: "2.27.7"
  amdgpu_driver: "30.30.3"
"""

# What the rules check with each shared table; a target's own table says it in its row class (`Row.DOC`).
TABLES = {
    "cuda": ("`cuda`, `min_driver`", "the driver is at least the release's minimum"),
    "cuda_major": ("`cuda_major`, `min_driver`", "a CUDA release newer than the `cuda` rows of its major: the driver "
                   "is at least the major's branch minimum (minor-version compatibility); a warning that the tables "
                   "are behind when it is, an error when it is not"),
    "nccl": ("`nccl`, `cuda` (list)", "NCCL has a build for the pinned CUDA (same major, not newer)"),
    "rocm": ("`rocm`, `rccl`, `amdgpu` (driver series)", "AMD pools: RCCL is the one ROCm ships, the amdgpu driver is "
             "of a listed series"),
    "gpu_model": ("`gpu_model`, `architecture`", "SW-005: maps the catalog's `gpus.model` to an architecture"),
    "gpu_architecture": ("`architecture`, `min_driver` or `min_rocm`", "SW-005: the pool's NVIDIA driver (or ROCm "
                         "release) is no older than the oldest that supports the architecture"),
}


def tables() -> list[tuple[str, str, str]]:
    """(table, row keys, what the rules check) of every software table the docs describe, in the catalog's order:
    the shared ones and the registered targets' (SW-003's `slurm` table has a section of its own)."""
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
    return [
        "## Adding a qualified software set", "",
        "SW-001 decides from tables, not code: the built-in rows are catalog data in "
        "`clusterforge/catalog/data/software.yaml` (a target's own tables in its folder's `data/software.yaml`), one "
        "row per release with the source it was read in (`[U]` "
        "marks a pairing not confirmed in a primary source). A site that has qualified a newer or different set "
        "adds rows in the same format in its own catalog file and passes it to every command with `--catalog` "
        "(the stack config's `catalogs`, the CrossGuard pack's `catalogs`), so the set passes on its merits instead "
        "of being waived:", "",
        "```yaml", *SITE_SET_EXAMPLE.splitlines(), "```", "",
        "| Table | Row keys (all need `source`) | What the rules check |", "|---|---|---|", *rows, "",
        "A release newer than every row of its table (a CUDA minor newer than its major's rows, an NCCL, plugin, "
        "installer, ROCm, Neuron or SLURM release newer than the newest listed) is a **warning** that says the tables "
        "are behind, with what could still be checked; a release inside the known range that no row lists, and a set "
        "the rows show to be incompatible (a driver older than the CUDA major's minimum, NCCL without a build for the "
        "CUDA major, an installer older than the instance family's minimum), are errors. "
        "A site row cannot redefine a release the built-in tables list (exit 2, naming both files): a wrong built-in "
        "pairing is a bug to report, not something to shadow. `clusterforge catalog software` lists every row "
        "with its origin.", "",
        "Each pool is checked against the pins of its own accelerators' vendor (the catalog's `gpus.vendor`: NVIDIA "
        "runs CUDA, AMD ROCm, Trainium Neuron), so NVIDIA and AMD partitions share one cluster: the `software` "
        "block holds both vendors' pins side by side, and a pool's own `software:` (version pins only) overrides "
        "the cluster's for that pool. Pools on the same pins are checked once; with more than one set the messages "
        "name the pools. SW-004 reports a pool whose vendor has no pins; `render` writes all.yml with the cluster's "
        "pins and `inventory/group_vars/pool_<name>.yml` for each pool whose vendor or pins differ. "
        "`software.stack` (`cuda`, `rocm`, `neuron`) is optional: set, it declares that every accelerator pool runs "
        "that one stack (SW-004 fails a pool of another vendor) and SW-002 requires its versions:", "",
        "```yaml", *BLUEPRINT_EXAMPLE.splitlines(), "```", "",
    ]
