"""What the `health` commands share: running a command here, over ssh or on a lab's controller, reading `--from`
files, and the policy config's perf tolerances. The group and `health diag` are health_cmds.py's; `health perf`
(health_perf_cmds.py) and `health allreduce` (health_allreduce_cmds.py) are added to the group there."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from clusterforge.core.errors import ClusterforgeError, Problem

_Read = TypeVar("_Read")

if TYPE_CHECKING:
    from clusterforge.policies.config import PerfTolerances


def from_saved(saved: str, reader: Callable[[Iterable[str], str], _Read]) -> _Read:
    """What READER makes of the lines of `--from` FILE, or of standard input for `-`; an unreadable file is an
    input error naming it."""
    if saved == "-":
        return reader(click.get_text_stream("stdin"), "<stdin>")
    try:
        with open(saved, encoding="utf-8", errors="replace") as lines:
            return reader(lines, saved)
    except OSError as error:
        raise ClusterforgeError(Problem(f"cannot read it: {error.strerror}", file=saved, path="--from")) from None


def run_on_cluster(argv: list[str], via: str | None, lab: str | None) -> tuple[str, str, int]:
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
