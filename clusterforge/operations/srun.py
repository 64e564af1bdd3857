"""The srun line the `health` commands start their jobs with: the named nodes to the job alone (a neighbour's work
would slow what is measured, and DCGM's deeper levels need the GPUs idle), a job name an operator recognises in
squeue, a time limit, and the partition or maintenance reservation the nodes are held in."""

from __future__ import annotations


def exclusive_srun(nodes: str, tasks_per_node: int, job: str, minutes: int, partition: str | None,
                   reservation: str | None, *options: str) -> list[str]:
    """`srun --nodelist=NODES --ntasks-per-node=N --exclusive --job-name=JOB --time=MINUTES [OPTIONS]
    [--partition=P] [--reservation=R]`, before the command and its arguments."""
    argv = ["srun", f"--nodelist={nodes}", f"--ntasks-per-node={tasks_per_node}", "--exclusive", f"--job-name={job}",
            f"--time={minutes}", *options]
    if partition:
        argv.append(f"--partition={partition}")
    if reservation:
        argv.append(f"--reservation={reservation}")
    return argv
