"""The "Adding a qualified software set" section of docs/policies.md: how a site extends SW-001's tables."""

from __future__ import annotations

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
software:                 # in the blueprint: an AMD cluster pins its ROCm set
  stack: rocm
  rocm: "7.2.2"
  rccl: "2.27.7"
  amdgpu_driver: "30.30.3"
"""

TABLES = (
    ("`cuda`", "`cuda`, `min_driver`", "the driver is at least the release's minimum"),
    ("`nccl`", "`nccl`, `cuda` (list)", "NCCL has a build for the pinned CUDA (same major, not newer)"),
    ("`aws_ofi_nccl`", "`aws_ofi_nccl`, `min_nccl`, `cuda_majors`", "on AWS: NCCL is new enough and the plugin "
     "supports the CUDA major (13 needs 1.17.0 or later)"),
    ("`efa_installer`", "`efa_installer`, `aws_ofi_nccl`", "on AWS: the pinned plugin is the one the installer "
     "bundles (major.minor)"),
    ("`rocm`", "`rocm`, `rccl`, `amdgpu` (driver series)", "`stack: rocm`: RCCL is the one ROCm ships, the amdgpu "
     "driver is of a listed series"),
    ("`neuron_sdk`", "`neuron_sdk`, `neuron_driver`, `efa_installer`", "`stack: neuron`: aws-neuronx-dkms is at "
     "least the release's, and on AWS the EFA installer is of the series the release pins"),
)


def software_sets() -> list[str]:
    rows = [f"| {table} | {keys} | {checks} |" for table, keys, checks in TABLES]
    return [
        "## Adding a qualified software set", "",
        "SW-001 decides from tables, not code: the built-in rows are catalog data in "
        "`clusterforge/catalog/data/software.yaml`, one row per release with the source it was read in (`[U]` "
        "marks a pairing not confirmed in a primary source). A site that has qualified a newer or different set "
        "adds rows in the same format in its own catalog file and passes it to every command with `--catalog` "
        "(the stack config's `catalogs`, the CrossGuard pack's `catalogs`), so the set passes on its merits instead "
        "of being waived:", "",
        "```yaml", *SITE_SET_EXAMPLE.splitlines(), "```", "",
        "| Table | Row keys (all need `source`) | What SW-001 checks |", "|---|---|---|", *rows, "",
        "A site row cannot redefine a release the built-in tables list (exit 2, naming both files): a wrong built-in "
        "pairing is a bug to report, not something to shadow. `clusterforge catalog software` lists every row "
        "with its origin. The blueprint's `software.stack` (`cuda`, the default; `rocm`; `neuron`) picks the tables "
        "SW-001 checks, and SW-002 requires that stack's versions to be pinned:", "",
        "```yaml", *BLUEPRINT_EXAMPLE.splitlines(), "```", "",
    ]
