"""Storage rules every target shares: the checkpoint window."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("storage", "Storage", 50)

def write_gb_s(ctx: Context) -> float | None:
    """Aggregate file-system write bandwidth: what an existing Lustre's blueprint says, or what a target's managed
    Lustre works out from its provisioned throughput (each form's own `write_gb_s`)."""
    lustre = ctx.cluster.storage.lustre
    return None if lustre is None else lustre.write_gb_s


@rule("STO-003", "warning", DOMAIN, "Checkpoint window",
      "ZeRO (Rajbhandari et al. 2020): bf16 weights 2 B + Adam fp32 states 12 B per parameter",
      inputs=Inputs(("workload.{model_params_b,bytes_per_param,max_checkpoint_s}",
             "storage.lustre.{capacity_gib,throughput_mb_s_per_tib,throughput_capacity_mb_s,write_gb_s}")))
def checkpoint_window(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A full checkpoint (params × 14 B) written at the file system's bandwidth takes ≤ max_checkpoint_s."""
    workload = ctx.cluster.workload
    bandwidth = write_gb_s(ctx)
    if workload is None or bandwidth is None:
        return
    size_gb = workload.model_params_b * workload.bytes_per_param
    seconds = size_gb / bandwidth
    if seconds > workload.max_checkpoint_s:
        need = size_gb / workload.max_checkpoint_s
        yield Draft(("workload", "max_checkpoint_s"),
                    f"a {workload.model_params_b:g}B-parameter checkpoint ({size_gb:,.0f} GB) takes {seconds:.0f} s "
                    f"at {bandwidth:.1f} GB/s; the target is {workload.max_checkpoint_s:g} s",
                    f"raise file-system throughput to {need:.1f} GB/s (more capacity or a higher tier)",
                    seconds, workload.max_checkpoint_s, "s")
