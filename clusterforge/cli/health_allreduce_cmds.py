"""`health allreduce`: NCCL all-reduce across chosen nodes (or pairs of them), judged against a bus bandwidth
floor."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import EXIT_POLICY, catalog_option, format_option
from clusterforge.cli.health_common import asked_nodes, from_saved, perf_tolerances, run_on_cluster
from clusterforge.core.errors import ClusterforgeError, Problem

if TYPE_CHECKING:
    from clusterforge.operations.allreduce import Floor, Measurement

@click.command("allreduce")
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
              help="The all-reduce test's all_reduce_perf, built with MPI=1, as the nodes find it.")
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
    wrong, failed or timed out, 2 on bad input (a bad --from line as FILE:LINE: message; a line past 1 MiB, or a
    file or srun's output past 256 MiB, the same). A bad verdict ends with what to do next.
    """
    from concurrent.futures import ThreadPoolExecutor

    from clusterforge.cli.allreduce_view import as_json, text
    from clusterforge.operations import allreduce as ar
    from clusterforge.operations.transport import check_destination, raise_for_transport

    if pairs and saved is not None:
        raise ClusterforgeError(Problem("--pairs runs the pairs; a saved file holds one run", path="--pairs",
                                        hint="leave out --pairs to judge the saved run"))
    expected = asked_nodes(nodes, saved, "test", "--nodes gpu-[0001-0064], or --from FILE to read a saved run")
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
            return (members, *run_on_cluster(argv, via, lab))

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
    share = perf_tolerances(policy_config, None).allreduce_floor
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

    return from_saved(saved, read_saved)
