"""What the `health` commands share: running a command here, over ssh or on a lab's controller (bounded), running
one task per node and reading back what each node printed, `--save` and `--from` files, and the policy config's
perf tolerances. The group is health_cmds.py's; each command lives in its own module
(health_diag_cmds.py, health_perf_cmds.py, health_allreduce_cmds.py)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from clusterforge.core.errors import ClusterforgeError, Problem

_Read = TypeVar("_Read")
_F = TypeVar("_F", bound=Callable[..., object])

if TYPE_CHECKING:
    from clusterforge.operations.node_lines import TaskOutput
    from clusterforge.policies.config import PerfTolerances


def from_saved(saved: str, reader: Callable[[Iterable[str], str], _Read]) -> _Read:
    """What READER makes of the lines of `--from` FILE, or of standard input for `-`, read streamed and bounded
    (operations/bounds.py: a line past 1 MiB or a file past 256 MiB is exit 2 at FILE:LINE); an unreadable file is
    an input error naming it."""
    from clusterforge.operations.bounds import bounded_lines

    if saved == "-":
        return reader(bounded_lines(click.get_binary_stream("stdin"), "<stdin>"), "<stdin>")
    try:
        with open(saved, "rb") as stream:
            return reader(bounded_lines(stream, saved), saved)
    except OSError as error:
        raise ClusterforgeError(Problem(f"cannot read it: {error.strerror}", file=saved, path="--from")) from None


def asked_nodes(nodes: str | None, saved: str | None, what: str, example: str) -> list[str]:
    """The nodes `--nodes` names, expanded (none with `--from` alone); neither given, or a hostlist that does not
    parse, is bad input at --nodes."""
    from clusterforge.core.hostlist import expand

    if nodes is None and saved is None:
        raise ClusterforgeError(Problem(f"name the nodes to {what}", path="--nodes", hint=example))
    try:
        return expand(nodes) if nodes is not None else []
    except ClusterforgeError as error:
        raise ClusterforgeError(Problem(error.problems[0].message, path="--nodes")) from None


def run_on_cluster(argv: list[str], via: str | None, lab: str | None) -> tuple[str, str, int]:
    """The command's (srun's, scontrol's) stdout, stderr and exit status: run here, on HOST over ssh, or on a
    lab's controller, its output read as it comes and bounded (operations/bounds.run_bounded: past 256 MiB, or a
    line past 1 MiB, it is stopped and the run is exit 2)."""
    from clusterforge.operations.bounds import run_bounded

    if lab:
        from clusterforge.lab import state
        from clusterforge.lab.paths import LabPaths

        paths = LabPaths.of(lab)
        controller = state.require(paths).controller
        ssh = ["ssh", "-F", str(paths.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", controller]
        return run_bounded([*ssh, shlex.join(argv)], f"{argv[0]}'s output on the controller of lab {lab}")
    if via:
        return run_bounded(["ssh", "-o", "BatchMode=yes", "--", via, shlex.join(argv)], f"{argv[0]}'s output on {via}")
    try:
        return run_bounded(argv, f"{argv[0]}'s output")
    except FileNotFoundError:
        raise ClusterforgeError(Problem(f"{argv[0]} is not installed here", argv[0],
                                        hint="run on a login node, or pass --ssh LOGIN_NODE")) from None


def from_option() -> Callable[[_F], _F]:
    """`--from FILE`: judge the `NODE: {...}` lines a run saved with --save, running nothing."""
    return click.option("--from", "saved", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True),
                        help="Judge a run saved with --save (`NODE: {...}` lines, `-` for standard input) instead of "
                        "running anything.")


def save_option(command: str) -> Callable[[_F], _F]:
    """`--save FILE`: keep what a run's nodes printed, as the `NODE: {...}` lines `--from` reads back."""
    return click.option("--save", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
                        help="Write each node's result as `NODE: {...}` lines (NODE: the node srun ran its task on), "
                        f"for `clusterforge health {command} --from FILE` to judge again.")


def check_save(path: Path | None, saved: str | None, *inputs: Path | str | None) -> None:
    """`--save` keeps a run's output: with `--from` there is no run; and it must not overwrite an input."""
    from clusterforge.files.atomic import refuse_inputs

    if path is None:
        return
    if saved is not None:
        raise ClusterforgeError(Problem("--save keeps what a run's nodes printed; --from runs nothing",
                                        path="--save", hint="leave out --save, or --from to run the nodes"))
    refuse_inputs(path, [i for i in inputs if i is not None])

def perf_tolerances(policy_config: Path | None, tolerance: float | None) -> PerfTolerances:
    """The policy config's health.perf (its defaults without one), the fleet tolerance replaced by --tolerance."""
    from clusterforge.policies.config_file import load_policy_config

    tolerances = load_policy_config(policy_config).health.perf
    if tolerance is None:
        return tolerances
    if not 0 < tolerance < 1:  # NaN fails this too
        raise ClusterforgeError(Problem(f"{tolerance:g} is not a tolerance", path="--tolerance",
                                        hint="a share of the fleet median between 0 and 1, e.g. 0.10 for 10 %"))
    return tolerances.model_copy(update={"fleet_tolerance": tolerance})


def run_per_node(argv: list[str], order: list[str], via: str | None, lab: str | None, command: str,
                 save: Path | None) -> tuple[dict[str, TaskOutput], int]:
    """Run a per-node srun (operations/srun.per_node_srun, task N on ORDER[N]) and return what each node's task
    printed, by the node SLURM ran it on, and srun's exit status. ssh failing before any node printed anything is
    exit 2 (operations/transport.py); `--save` writes the nodes' lines as `NODE: {...}`."""
    from clusterforge.core.hostlist import compress
    from clusterforge.files.atomic import write_text
    from clusterforge.operations.node_lines import by_node
    from clusterforge.operations.own_results import saved_text
    from clusterforge.operations.transport import raise_for_transport

    stdout, stderr, status = run_on_cluster(argv, via, lab)
    printed = by_node(stdout, order)
    if via is not None or lab:  # ssh failing is not the nodes failing
        raise_for_transport(status, stderr, bool(printed), via or f"the controller of lab {lab}",
                            "--ssh" if via is not None else "--lab", "srun")
    if save is not None:
        write_text(save, saved_text(printed, order, f"clusterforge health {command}", compress(order)))
    return printed, status
