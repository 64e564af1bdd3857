"""`health diag`: a DCGM diagnostic of a chosen level on chosen nodes, through SLURM, with a verdict per node;
`health perf`: the GPU perf tier on chosen nodes, its stragglers and wrong answers named against the fleet;
`health allreduce`: NCCL all-reduce across chosen nodes (or pairs of them), judged against a bus bandwidth floor."""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from clusterforge.cli.app import EXIT_POLICY, app, catalog_option, format_option
from clusterforge.core.errors import ClusterforgeError, Problem

_Read = TypeVar("_Read")

if TYPE_CHECKING:
    from clusterforge.catalog.software import GpuModelRow
    from clusterforge.operations.allreduce import Floor, Measurement
    from clusterforge.operations.perf_run import NodeResult
    from clusterforge.policies.config import PerfTolerances


@app.group("health")
def health_group() -> None:
    """The node health check's deeper tiers, on demand.

    \b
    The periodic check (HealthCheckProgram), the prolog and the epilog run by themselves on every compute node
    (roles/health); a failing check drains the node with a reason code (docs/operations.md). These commands run
    what is too long for them, or what needs the whole fleet to judge:
      clusterforge health diag --level 2 --nodes gpu-[0001-0004] --ssh login-0001
      clusterforge health diag --level 3 --nodes gpu-0007 --drain --lab clusterforge
      clusterforge health perf --nodes gpu-[00001-12500] --reservation maint --ssh login-0001 --drain
      clusterforge health allreduce --nodes gpu-[0001-0064] --pairs --min-busbw 300 --ssh login-0001
    """


@health_group.command("diag")
@click.option("--level", "-r", type=int, default=2, show_default=True,
              help="DCGM diagnostic level: 1 seconds, 2 about 2 min, 3 about 15 min, 4 hours (GPUs must be idle).")
@click.option("--nodes", "-w", required=True, help="Nodes as a SLURM hostlist, e.g. gpu-[0001-0004].")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes.")
@click.option("--drain", is_flag=True, help="Drain a node that fails, with reason code dcgm-diag.")
@click.option("--ssh", "via", metavar="HOST", help="Run srun on HOST (a login node) over ssh; default: here.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def diag(level: int, nodes: str, partition: str | None, reservation: str | None, drain: bool, via: str | None,
         lab: str | None, fmt: str) -> None:
    """Run `dcgmi diag -r LEVEL` on NODES as one SLURM job (each node to itself) and report each node's verdict.

    Exit status 0 when every node passed or had nothing to diagnose (no DCGM: `skipped`), 1 when one failed or
    gave no result, 2 on bad input. Nodes without DCGM installed, such as the lab's, report `skipped`.
    """
    from clusterforge.core.hostlist import expand
    from clusterforge.operations.diag import check_level, parse, srun_command
    from clusterforge.operations.transport import check_destination, raise_for_transport

    check_level(level)
    try:
        expected = expand(nodes)
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="--nodes")) from None
    if via is not None:
        check_destination(via, "--ssh")
    argv = srun_command(level, nodes, partition, reservation, drain)
    started = time.monotonic()
    stdout, stderr, status = _run(argv, via, lab)
    verdicts = parse(stdout + stderr, expected)
    if via is not None or lab:  # ssh failing is not the nodes failing
        answered = any(v.status != "missing" for v in verdicts)
        raise_for_transport(status, stderr, answered, via or f"the controller of lab {lab}",
                            "--ssh" if via is not None else "--lab", "srun")
    elapsed = time.monotonic() - started
    failed = [v for v in verdicts if v.status in ("fail", "missing")]
    if fmt == "json":
        click.echo(json.dumps({"level": level, "nodes": [v.__dict__ for v in verdicts], "srun_exit": status,
                               "seconds": round(elapsed, 1), "ok": not failed}, indent=2))
    else:
        width = max(len(v.node) for v in verdicts)
        for v in verdicts:
            click.echo(f"{v.node:<{width}}  {v.status:<7}  {v.seconds:7.1f} s  {v.detail}")
        click.echo(f"level {level} on {len(verdicts)} nodes in {elapsed:.1f} s: "
                   f"{len(verdicts) - len(failed)} passed or skipped, {len(failed)} failed")
        if status != 0 and not failed:
            click.echo(f"srun exited {status}", err=True)
    if failed:
        raise click.exceptions.Exit(EXIT_POLICY)


@health_group.command("perf")
@click.option("--nodes", "-w", help="Nodes as a SLURM hostlist, e.g. gpu-[00001-12500] (with --from: the nodes "
              "expected in the file, those without a line are missing).")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes (they must be idle).")
@click.option("--drain", is_flag=True, help="Drain the outliers: one scontrol per reason code (gpu-sdc, gpu-perf, "
              "gpu-slow), its nodes as one hostlist.")
@click.option("--from", "saved", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True),
              help="Read saved JSON lines (one per node, `-` for standard input) instead of running anything.")
@click.option("--tolerance", type=float, help="How far below its fleet median a GPU may measure, 0 < t < 1 "
              "(default: the policy config's health.perf.fleet_tolerance, 0.10).")
@click.option("--policy-config", "policy_config", type=click.Path(path_type=Path, dir_okay=False),
              help="Policy config YAML whose `health: {perf: {...}}` sets the tolerance and the floors.")
@catalog_option
@click.option("--ssh", "via", metavar="HOST", help="Run srun (and scontrol) on HOST (a login node) over ssh.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def perf(nodes: str | None, partition: str | None, reservation: str | None, drain: bool, saved: str | None,
         tolerance: float | None, policy_config: Path | None, catalog: tuple[Path, ...], via: str | None,
         lab: str | None, fmt: str) -> None:
    """Run the GPU perf tier on NODES and name the stragglers and wrong answers against the fleet.

    \b
    Each node runs `clusterforge-health --perf --json` in one SLURM job, the nodes to itself: a bf16 GEMM and a
    device-to-device copy on every GPU, and a checksum from exact integer arithmetic. Per GPU model (the catalog
    model of the name nvidia-smi or amd-smi reports), a GPU is
      slow (gpu-slow)        below the fleet median by more than the tolerance (10 %), or below the floor
                             (policy config health.perf.gemm_floor / hbm_floor) of its datasheet peak;
      corruption (gpu-sdc)   its checksum is not the fleet's, or its node found it wrong, however fast it is;
      error (gpu-perf)       the test failed on it; a node that printed nothing is `missing`.
    Healthy GPUs spread a few percent and are never named.

    \b
    Examples:
      clusterforge health perf -w gpu-[00001-12500] --reservation maint --ssh login-0001
      clusterforge health perf -w gpu-[00001-12500] --reservation maint --ssh login-0001 --drain
      clusterforge health perf --from perf-2026-11-30.jsonl -f json > outliers.json
      ssh login-0001 srun -w gpu-[0001-0064] --exclusive /usr/local/sbin/clusterforge-health --perf --json \\
          | clusterforge health perf --from - -w gpu-[0001-0064] --tolerance 0.05
      clusterforge health perf -w gpu-0001,gpu-0002 --lab clusterforge

    Exit status 0 when no GPU is named, 1 when one is slow, wrong, failed or missing (or a drain failed), 2 on bad
    input (a bad --from line as FILE:LINE: field: message).
    """
    from clusterforge.cli.perf_view import DrainResult, as_json, text
    from clusterforge.core.hostlist import expand
    from clusterforge.operations.perf_run import read_output, srun_command, with_missing
    from clusterforge.operations.stragglers import analyse, catalog_peaks, drains
    from clusterforge.operations.transport import check_destination, raise_for_transport

    tolerances = _tolerances(policy_config, tolerance)
    if nodes is None and saved is None:
        raise ClusterforgeError(Problem("name the nodes to test", path="--nodes",
                                        hint="--nodes gpu-[0001-0064], or --from FILE to read saved results"))
    try:
        expected = expand(nodes) if nodes is not None else []
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="--nodes")) from None
    if via is not None:
        check_destination(via, "--ssh")
    peaks = catalog_peaks(_gpu_model_rows(catalog))
    started = time.monotonic()
    srun_exit: int | None = None
    if saved is not None:
        results = _read_saved(saved)
        if expected:
            results = with_missing(results, expected)
    else:
        assert nodes is not None
        stdout, stderr, srun_exit = _run(srun_command(nodes, partition, reservation), via, lab)
        results = with_missing(read_output(stdout + stderr), expected)
        if via is not None or lab:  # ssh failing is not the nodes failing
            answered = any(r.status != "missing" for r in results)
            raise_for_transport(srun_exit, stderr, answered, via or f"the controller of lab {lab}",
                                "--ssh" if via is not None else "--lab", "srun")
    report = analyse(results, peaks, tolerances)
    drained: list[DrainResult] = []
    if drain:
        for planned in drains(report.outliers):
            out, err, status = _run(planned.argv(), via, lab)
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


def _tolerances(policy_config: Path | None, tolerance: float | None) -> PerfTolerances:
    """The policy config's health.perf (its defaults without one), the fleet tolerance replaced by --tolerance."""
    from clusterforge.policies.config_file import load_policy_config

    tolerances = load_policy_config(policy_config).health.perf
    if tolerance is None:
        return tolerances
    if not 0 < tolerance < 1:  # NaN fails this too
        raise ClusterforgeError(Problem(f"{tolerance:g} is not a tolerance", path="--tolerance",
                                        hint="a share of the fleet median between 0 and 1, e.g. 0.10 for 10 %"))
    return tolerances.model_copy(update={"fleet_tolerance": tolerance})


def _gpu_model_rows(catalog: tuple[Path, ...]) -> list[GpuModelRow]:
    """The catalog's GPU models (built-in and --catalog files'), for their reported names and peaks."""
    from clusterforge.catalog.software import GpuModelRow
    from clusterforge.target_kernel import load_catalog

    return [row for _, row in load_catalog(catalog).software.rows() if isinstance(row, GpuModelRow)]


def _read_saved(saved: str) -> list[NodeResult]:
    """The node results in FILE (or standard input for `-`); a bad line is an input error at FILE:LINE."""
    from clusterforge.operations.perf_run import read_saved

    return _from_saved(saved, read_saved)


def _from_saved(saved: str, reader: Callable[[Iterable[str], str], _Read]) -> _Read:
    """What READER makes of the lines of `--from` FILE, or of standard input for `-`; an unreadable file is an
    input error naming it."""
    if saved == "-":
        return reader(click.get_text_stream("stdin"), "<stdin>")
    try:
        with open(saved, encoding="utf-8", errors="replace") as lines:
            return reader(lines, saved)
    except OSError as error:
        raise ClusterforgeError(Problem(f"cannot read it: {error.strerror}", file=saved, path="--from")) from None


def _run(argv: list[str], via: str | None, lab: str | None) -> tuple[str, str, int]:
    """The command's (srun's, scontrol's) stdout, stderr and exit status: run here, on HOST over ssh, or on a
    lab's controller."""
    if lab:
        from clusterforge.lab import nodes, state
        from clusterforge.lab.paths import LabPaths

        paths = LabPaths.of(lab)
        controller = state.require(paths).controller
        proc = nodes.ssh(paths, controller, argv, timeout=None)
    elif via:
        proc = subprocess.run(["ssh", "-o", "BatchMode=yes", "--", via, shlex.join(argv)], capture_output=True,
                              text=True, check=False)
    else:
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        except FileNotFoundError:
            raise ClusterforgeError(Problem(f"{argv[0]} is not installed here", argv[0],
                                            hint="run on a login node, or pass --ssh LOGIN_NODE")) from None
    return proc.stdout, proc.stderr, proc.returncode


@health_group.command("allreduce")
@click.option("--nodes", "-w", help="Nodes as a SLURM hostlist, e.g. gpu-[0001-0064] (with --from: the nodes the "
              "saved run covered, for the report).")
@click.option("--pairs", is_flag=True, help="Run disjoint pairs of the nodes instead, each pair its own srun, "
              "--parallel at once, and name the pairs below the floor.")
@click.option("--shift", type=click.IntRange(0, None), default=0, show_default=True,
              help="With --pairs: rotate the nodes by this many before pairing neighbours (--shift 1 gives each "
              "node its other neighbour).")
@click.option("--parallel", type=click.IntRange(1, 1024), default=32, show_default=True,
              help="With --pairs: how many sruns at once.")
@click.option("--gpus-per-node", type=click.IntRange(1, 1024),
              help="Ranks per node, one per GPU (default: the blueprint's node, else 8).")
@click.option("--program", default="all_reduce_perf", show_default=True,
              help="nccl-tests' all_reduce_perf built with MPI=1, as the nodes find it.")
@click.option("--min-busbw", type=float, metavar="GBPS",
              help="Fail below this bus bandwidth, GB/s (default: the policy config's health.perf.allreduce_floor "
              "share of the fabric's line rate, with --blueprint).")
@click.option("--blueprint", type=click.Path(path_type=Path, dir_okay=False),
              help="The cluster's blueprint: its GPU nodes' catalog entry gives the fabric line rate and GPUs.")
@click.option("--pool", help="With --blueprint: the pool the nodes are in, where several GPU pools differ.")
@click.option("--partition", "-p", help="Partition to run in (default: the nodes' default partition).")
@click.option("--reservation", help="A maintenance reservation holding the nodes (they must be idle).")
@click.option("--from", "saved", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True),
              help="Read a saved all_reduce_perf output (`-` for standard input) instead of running anything.")
@click.option("--policy-config", "policy_config", type=click.Path(path_type=Path, dir_okay=False),
              help="Policy config YAML whose `health: {perf: {allreduce_floor: ...}}` sets the floor's share.")
@catalog_option
@click.option("--ssh", "via", metavar="HOST", help="Run srun on HOST (a login node) over ssh.")
@click.option("--lab", metavar="NAME", help="Run on the controller of this clusterforge lab.")
@format_option("text", "json")
def allreduce(nodes: str | None, pairs: bool, shift: int, parallel: int, gpus_per_node: int | None, program: str,
              min_busbw: float | None, blueprint: Path | None, pool: str | None, partition: str | None,
              reservation: str | None, saved: str | None, policy_config: Path | None, catalog: tuple[Path, ...],
              via: str | None, lab: str | None, fmt: str) -> None:
    """Run NCCL's all-reduce across NODES, through the fabric a multi-node job uses, and judge its bus bandwidth.

    \b
    One srun starts nccl-tests' all_reduce_perf (built with MPI) as one rank per GPU on every node:
      srun --nodelist=NODES --ntasks-per-node=GPUS --exclusive --mpi=pmix all_reduce_perf -b 8G -e 8G -f 2 -g 1
    The 8 GiB row's bus bandwidth (the lower of out-of-place and in-place) is judged against the floor:
      below-floor   below --min-busbw, or the policy config's allreduce_floor (70 %) of the nodes' fabric line
                    rate: their NICs together (8 x 400 Gb/s is 400 GB/s), from the blueprint's catalog entry;
      nccl-wrong    a value counted wrong (#wrong, or `Out of bounds values` above 0), however fast;
      failed        no result table (a rank failed, NCCL could not connect); timeout: SLURM's time limit.
    Without a floor the figure is shown and not judged. A low figure says a node or link is bad, not which:
    --pairs runs disjoint pairs of the nodes in parallel and names the pairs below the floor.

    \b
    Examples:
      clusterforge health allreduce -w gpu-[0001-0064] --reservation maint --ssh login-0001 --blueprint cluster.yaml
      clusterforge health allreduce -w gpu-[0001-0064] --pairs --min-busbw 300 --ssh login-0001
      clusterforge health allreduce -w gpu-[0001-0064] --pairs --shift 1 --min-busbw 300 --ssh login-0001
      clusterforge health allreduce --from allreduce-2026-11-30.out --min-busbw 300 -f json

    Exit status 0 when every run is at or above the floor (or measured without one), 1 when one is below it,
    wrong, failed or timed out, 2 on bad input (a bad --from line as FILE:LINE: message).
    """
    from concurrent.futures import ThreadPoolExecutor

    from clusterforge.cli.allreduce_view import as_json, text
    from clusterforge.core.hostlist import expand
    from clusterforge.operations import allreduce as ar
    from clusterforge.operations.transport import check_destination, raise_for_transport

    if nodes is None and saved is None:
        raise ClusterforgeError(Problem("name the nodes to test", path="--nodes",
                                        hint="--nodes gpu-[0001-0064], or --from FILE to read a saved run"))
    if pairs and saved is not None:
        raise ClusterforgeError(Problem("--pairs runs the pairs; a saved file holds one run", path="--pairs",
                                        hint="leave out --pairs to judge the saved run"))
    try:
        expected = expand(nodes) if nodes is not None else []
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="--nodes")) from None
    if pairs and len(expected) < 2:
        raise ClusterforgeError(Problem("--pairs needs at least two nodes", path="--nodes"))
    ar.check_program(program)
    if via is not None:
        check_destination(via, "--ssh")
    floor = _allreduce_floor(min_busbw, blueprint, pool, policy_config, catalog)
    gpus = gpus_per_node or floor.gpus_per_node or 8
    started = time.monotonic()
    if saved is not None:
        verdicts = [ar.judge(expected, _read_allreduce(saved), floor.gbps)]
    else:
        sets = [list(p) for p in ar.pairs(expected, shift)] if pairs else [expected]

        def one(members: list[str]) -> tuple[list[str], str, str, int]:
            argv = ar.srun_command(",".join(members) if pairs else str(nodes), gpus, program, partition, reservation)
            return (members, *_run(argv, via, lab))

        with ThreadPoolExecutor(max_workers=min(parallel, len(sets))) as pool_:
            ran = list(pool_.map(one, sets))
        if via is not None or lab:  # ssh failing is not the nodes failing
            answered = any(ar.parse(out + err).rows for _, out, err, _ in ran)
            for _, _, err, status in ran:
                raise_for_transport(status, err, answered, via or f"the controller of lab {lab}",
                                    "--ssh" if via is not None else "--lab", "srun")
        verdicts = [ar.judge(members, ar.parse(out + err), floor.gbps, status) for members, out, err, status in ran]
    elapsed = time.monotonic() - started
    if fmt == "json":
        click.echo(as_json(verdicts, floor, gpus, pairs, elapsed))
    else:
        for line in text(verdicts, floor, gpus, pairs):
            click.echo(line)
    if any(v.status not in (ar.OK, ar.MEASURED) for v in verdicts):
        raise click.exceptions.Exit(EXIT_POLICY)


def _allreduce_floor(min_busbw: float | None, blueprint: Path | None, pool: str | None, policy_config: Path | None,
                     catalog: tuple[Path, ...]) -> Floor:
    """The floor: --min-busbw as given, else the policy config's share of the line rate of the blueprint's GPU
    nodes; the blueprint's nodes give the GPUs per node either way."""
    from clusterforge.operations.allreduce import Floor

    if min_busbw is not None and not 0 < min_busbw < 1e6:  # NaN fails this too
        raise ClusterforgeError(Problem(f"{min_busbw:g} is not a bus bandwidth", path="--min-busbw",
                                        hint="GB/s as all_reduce_perf prints it, e.g. 300"))
    if pool is not None and blueprint is None:
        raise ClusterforgeError(Problem("--pool names a pool of the blueprint", path="--pool",
                                        hint="pass --blueprint FILE too"))
    explicit = Floor(min_busbw, "--min-busbw") if min_busbw is not None else Floor(None)
    if blueprint is None:
        return explicit
    rate = _line_rate(blueprint, pool, catalog)
    if rate is None:
        if min_busbw is None:
            raise ClusterforgeError(Problem("the catalog gives no fabric line rate for the blueprint's GPU nodes",
                                            file=str(blueprint), path="--blueprint",
                                            hint="pass --min-busbw GBPS"))
        return explicit
    gbps, gpus, said, key = rate
    if min_busbw is not None:
        return Floor(min_busbw, "--min-busbw", gbps, gpus)
    share = _tolerances(policy_config, None).allreduce_floor
    return Floor(round(share * gbps, 1), f"{share:.0%} of {gbps:,.0f} GB/s, {key}'s {said}", gbps, gpus)


def _line_rate(blueprint: Path, pool: str | None, catalog: tuple[Path, ...]) -> tuple[float, int, str, str] | None:
    from clusterforge.blueprint.load import load_blueprint
    from clusterforge.operations.allreduce import line_rate
    from clusterforge.target_kernel import load_catalog

    loaded = load_blueprint(blueprint, load_catalog(catalog))
    pools = [p for p in loaded.cluster.pools if p.role == "compute"
             and getattr(loaded.catalog.get(p.hardware), "gpu_count", False)]
    if pool is not None:
        pools = [p for p in loaded.cluster.pools if p.name == pool]
        if not pools:
            names = ", ".join(p.name for p in loaded.cluster.pools)
            raise ClusterforgeError(Problem(f"no pool {pool!r} in {blueprint}", path="--pool", hint=f"one of {names}"))
    kinds = sorted({p.hardware for p in pools})
    if len(kinds) > 1:
        raise ClusterforgeError(Problem(f"the blueprint's GPU pools differ ({', '.join(kinds)})", path="--blueprint",
                                        hint="name the nodes' pool with --pool"))
    if not kinds:
        return None
    found = line_rate(loaded.catalog.get(kinds[0]))
    return (*found, kinds[0]) if found else None


def _read_allreduce(saved: str) -> Measurement:
    """The all_reduce_perf output saved in FILE (or standard input for `-`)."""
    from clusterforge.operations.allreduce import read_saved

    return _from_saved(saved, read_saved)
