"""The srun lines the `health` commands start their jobs with: the named nodes to the job alone (a neighbour's work
would slow what is measured, and DCGM's deeper levels need the GPUs idle), a job name an operator recognises in
squeue, a time limit, and the partition or maintenance reservation the nodes are held in.

A command that judges each node by what the node printed (`health diag`, `health perf`) also needs to know which
node printed each line, from SLURM rather than from the line: `per_node_srun` labels every line with its task
(`--label`) and puts task N on the N-th node of the list it gives (`--distribution=arbitrary` with an explicit
`--nodelist` and `--ntasks`, the form SLURM's FAQ gives for laying tasks out on chosen nodes; srun(1) 24.11
documents the distribution). Not SLURM's default block layout, which also puts one task on each node but in the
order SLURM builds the step's node list in: srun(1) does not document that order and srun's output does not show
it, and a wrong guess would put one node's result on another. Not `SLURM_HOSTFILE`, the other
documented way to give the arbitrary order: it is a file on the machine srun runs on (a login node over ssh, a
lab's controller), one more thing to write there and clean up, for the same order `--nodelist` carries.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.core.hostlist import compress, expand


def exclusive_srun(nodes: str, tasks_per_node: int, job: str, minutes: int, partition: str | None,
                   reservation: str | None, *options: str) -> list[str]:
    """`srun --nodelist=NODES --ntasks-per-node=N --exclusive --job-name=JOB --time=MINUTES [OPTIONS]
    [--partition=P] [--reservation=R]`, before the command and its arguments."""
    argv = ["srun", f"--nodelist={nodes}", f"--ntasks-per-node={tasks_per_node}", "--exclusive", f"--job-name={job}",
            f"--time={minutes}", *options]
    return _placed(argv, partition, reservation)


def task_order(nodes: Sequence[str]) -> list[str]:
    """The nodes in the order `per_node_srun` hands them to srun: task N runs on the N-th. Duplicates collapse
    (a node named twice would run two tasks) and the names are in hostlist order, the order SLURM expands the
    `--nodelist` written from them."""
    return expand(compress(nodes), limit=max(len(nodes), 1))


def per_node_srun(nodes: Sequence[str], job: str, minutes: int, partition: str | None, reservation: str | None,
                  *options: str) -> list[str]:
    """`srun --nodelist=LIST --ntasks=N --distribution=arbitrary --label --exclusive --job-name=JOB --time=MINUTES
    [OPTIONS] [--partition=P] [--reservation=R]`: one task on each node, task N on `task_order(nodes)[N]`, each line
    of its output labelled `N: ` by srun."""
    order = task_order(nodes)
    argv = ["srun", f"--nodelist={compress(order)}", f"--ntasks={len(order)}", "--distribution=arbitrary", "--label",
            "--exclusive", f"--job-name={job}", f"--time={minutes}", *options]
    return _placed(argv, partition, reservation)


def _placed(argv: list[str], partition: str | None, reservation: str | None) -> list[str]:
    if partition:
        argv.append(f"--partition={partition}")
    if reservation:
        argv.append(f"--reservation={reservation}")
    return argv
