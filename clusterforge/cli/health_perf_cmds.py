"""`health perf`: the GPU perf tier on chosen nodes, its stragglers and wrong answers named against the fleet."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, catalog_option, format_option
from clusterforge.cli.health_common import (
    asked_nodes,
    check_save,
    from_option,
    from_saved,
    perf_tolerances,
    run_on_cluster,
    run_per_node,
    save_option,
)

if TYPE_CHECKING:
    from clusterforge.catalog.software import GpuModelRow
    from clusterforge.operations.perf_run import NodeResult

@click.command("perf")
@click.option("--nodes", "-w", help="Nodes as a SLURM hostlist, e.g. gpu-[00001-12500] (with --from: the nodes "
              "expected in the file, those without a line are missing).")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes (they must be idle).")
@click.option("--drain", is_flag=True, help="Drain the outliers: one scontrol per reason code (gpu-sdc, gpu-perf, "
              "gpu-slow), its nodes as one hostlist.")
@from_option()
@save_option("perf")
@click.option("--tolerance", type=float, help="How far below its fleet median a GPU may measure, 0 < t < 1 "
              "(default: the policy config's health.perf.fleet_tolerance, 0.10).")
@click.option("--policy-config", "policy_config", type=click.Path(path_type=Path, dir_okay=False),
              help="Policy config YAML whose `health: {perf: {...}}` sets the tolerance and the floors.")
@catalog_option
@click.option("--ssh", "via", metavar="HOST", help="Run srun (and scontrol) on HOST (a login node) over ssh.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def perf(nodes: str | None, partition: str | None, reservation: str | None, drain: bool, saved: str | None,
         save: Path | None, tolerance: float | None, policy_config: Path | None, catalog: tuple[Path, ...],
         via: str | None, lab: str | None, fmt: str) -> None:
    """Run the GPU perf tier on NODES and name the stragglers and wrong answers against the fleet.

    \b
    Each node runs `clusterforge-health --perf --json` in one SLURM job, the nodes to itself: a bf16 GEMM and a
    device-to-device copy on every GPU, and a checksum from exact integer arithmetic. Per GPU model (the catalog
    model of the name nvidia-smi or amd-smi reports), a GPU is
      slow (gpu-slow)        below the fleet median by more than the tolerance (10 %), or below the floor
                             (policy config health.perf.gemm_floor / hbm_floor) of its datasheet peak;
      corruption (gpu-sdc)   its checksum is not the fleet's, or its node found it wrong, however fast it is;
      error (gpu-perf)       the test failed on it; a node that printed nothing is `missing`.
    Healthy GPUs spread a few percent and are never named. A result counts only for the node whose task printed
    it (srun --label, task N on the N-th node): a node that printed several results, or one naming another node, is
    an error itself, and the node it named keeps its own result. The text ends with what to do next per class.

    \b
    Examples:
      clusterforge health perf -w gpu-[00001-12500] --reservation maint --ssh login-0001
      clusterforge health perf -w gpu-[00001-12500] --reservation maint --ssh login-0001 --drain --save perf.lines
      clusterforge health perf --from perf.lines -w gpu-[00001-12500] --tolerance 0.05 -f json > outliers.json
      clusterforge health perf -w gpu-0001,gpu-0002 --lab clusterforge

    Exit status 0 when no GPU is named, 1 when one is slow, wrong, failed or missing (or a drain failed), 2 on bad
    input (a bad --from line as FILE:LINE: field: message, a result without its status included; a line or an
    output past the bounds of docs/operations.md).
    """
    from clusterforge.cli.perf_view import DrainResult, as_json, text
    from clusterforge.operations.perf_run import read_output, srun_command, with_missing
    from clusterforge.operations.srun import task_order
    from clusterforge.operations.stragglers import analyse, catalog_peaks, drains
    from clusterforge.operations.transport import check_destination

    tolerances = perf_tolerances(policy_config, tolerance)
    expected = asked_nodes(nodes, saved, "test", "--nodes gpu-[0001-0064], or --from FILE to read saved results")
    if via is not None:
        check_destination(via, "--ssh")
    check_save(save, saved, policy_config, *catalog)
    peaks = catalog_peaks(_gpu_model_rows(catalog))
    started = time.monotonic()
    srun_exit: int | None = None
    if saved is not None:
        results = _read_saved(saved)
        if expected:
            results = with_missing(results, expected)
    else:
        order = task_order(expected)
        printed, srun_exit = run_per_node(srun_command(order, partition, reservation), order, via, lab, "perf", save)
        results = with_missing(read_output(printed, order), expected)
    report = analyse(results, peaks, tolerances)
    drained: list[DrainResult] = []
    if drain:
        for planned in drains(report.outliers):
            out, err, status = run_on_cluster(planned.argv(), via, lab)
            said = (err or out).strip().splitlines()
            drained.append(DrainResult(planned.code, planned.hostlist, planned.count, status,
                                       said[-1][:200] if said and status else ""))
    elapsed = time.monotonic() - started
    if fmt == "json":
        click.echo(as_json(report, tolerances, drained, srun_exit, elapsed))
    else:
        for line in text(report, tolerances, drained):
            click.echo(line)
    if not report.ok or any(d.exit for d in drained):
        raise click.exceptions.Exit(EXIT_POLICY)



def _gpu_model_rows(catalog: tuple[Path, ...]) -> list[GpuModelRow]:
    """The catalog's GPU models (built-in and --catalog files'), for their reported names and peaks."""
    from clusterforge.catalog.software import GpuModelRow
    from clusterforge.target_kernel import load_catalog

    return [row for _, row in load_catalog(catalog).software.rows() if isinstance(row, GpuModelRow)]


def _read_saved(saved: str) -> list[NodeResult]:
    """The node results saved in FILE (or standard input for `-`); a bad line is an input error at FILE:LINE."""
    from clusterforge.operations.perf_run import read_saved

    return from_saved(saved, read_saved)
