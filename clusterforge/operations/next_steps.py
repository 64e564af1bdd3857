"""What the operator does next after each health verdict: one table for every command that judges nodes or power
(`health perf`, `health allreduce`, `health diag`, `report --measured`), so the views never word it themselves.

The words follow the runbook annotations of the alert rules that fire for the same faults when Prometheus finds
them (roles/monitoring/templates/alerts-*.yml.j2): GpuStraggler for gpu-slow, GpuWrongAnswer for gpu-sdc,
InfinibandPortErrorsClimbing and InfinibandPortDegraded for a link, RackPowerOverBudget, FeedPowerOverBudget and
InletOverLimit for the measured power. A verdict's text ends with the step of each failing class it names.

The steps that use a vendor's own tools (its clock and power commands, its diagnostic, its collectives' debug log)
are worded here without them; the vendor's words replace them (its `health_tools.py`, accelerator_kernel/health_tools).
"""

from __future__ import annotations

from clusterforge.accelerator_kernel.health_tools import health_tools
from clusterforge.operations.allreduce import WRONG

NEXT: dict[tuple[str, str], str] = {
    # health perf, by outlier class (operations/stragglers.py)
    ("perf", "corruption"): "keep the node drained (a reboot does not fix it; --drain drains it), rerun the perf "
                            "tier to confirm, then RMA the GPU; check which jobs ran on it since its last good run",
    ("perf", "error"): "drain the node (--drain), read what failed on it (`clusterforge-health --perf` there, or "
                       "the detail above), rerun `clusterforge health perf` on it; RMA the GPU if it fails again",
    ("perf", "missing"): "not drained: find why the node ran nothing (`scontrol show node <node>`: down, drained "
                         "or busy) and rerun `clusterforge health perf` on it",
    ("perf", "slow"): "look for the cause first (GpuHardwareSlowdown, GpuPcieLinkDegraded, GpuHot, the GPU's "
                      "throttle reasons on the node); drain the node, reset the GPU and rerun `clusterforge health "
                      "perf` on it; RMA the GPU if it stays slow",
    # health allreduce, by verdict (operations/allreduce.py); `-pairs`: the same verdict of a --pairs run
    ("allreduce", "below-floor"): "rerun with --pairs to name the node or link below the floor",
    ("allreduce", "below-floor-pair"): "run each of the two nodes with a third, healthy one (-w): the pair that "
                                       "stays below the floor holds the bad node; on it `ibstat` and `mlxlink -d "
                                       "<device> -c`, reseat or replace the cable or transceiver",
    ("allreduce", "below-floor-pairs"): "rerun with --shift 1, which pairs each node with its other neighbour: the "
                                        "node in two bad pairs is the bad one",
    ("allreduce", "below-floor-named"): "drain the node in two bad pairs; on it `ibstat` and `mlxlink -d <device> "
                                        "-c`, reseat or replace the cable or transceiver, check the switch port, "
                                        "then rerun the pairs",
    ("allreduce", WRONG): "drain the nodes and run `clusterforge health perf` on them: a GPU that computes wrong "
                          "answers is named gpu-sdc (RMA it)",
    ("allreduce", "timeout"): "check that the nodes are idle and their ports up (`sinfo -n <nodes>`, `ibstat`); "
                              "rerun with --pairs to find the pair that hangs",
    ("allreduce", "failed"): "read the first error above (the collective library's or srun's); check that the "
                             "nodes are idle and up (`sinfo -n <nodes>`) and rerun with its debug log on",
    # health diag, by node status (operations/diag.py)
    ("diag", "fail"): "drain the node (--drain does it), read the diagnostic's own report on it and follow its "
                      "guidance for the failed test (reset the GPU or reboot when idle, reseat, RMA if it fails "
                      "again)",
    ("diag", "missing"): "find why the node ran nothing (`scontrol show node <node>`: down, drained or busy) and "
                         "rerun `clusterforge health diag` on it",
    # report --measured (report/measured.py)
    ("measured", "feed"): "the feed may trip: shed load from the rack now (drain nodes, cap power with the GPUs' own "
                          "tool), then check the rack's feed and find why the rack draws more than planned",
    ("measured", "rack"): "either side alone no longer carries the rack: cap its nodes' power or move jobs off it, "
                          "check the rack's feeds and that it holds only what the plan put there",
    ("measured", "inlet"): "check the rack's cooling (CRAH, rear door, blanking panels, containment) and its "
                           "neighbours' inlets",
}


def next_step(command: str, verdict: str) -> str:
    """What to do after COMMAND's VERDICT (a class, status or finding of it): the default vendor's own words where
    the step uses its tools, else the table's."""
    return health_tools().next_steps.get((command, verdict)) or NEXT[command, verdict]


def next_line(command: str, verdict: str, label: str = "") -> str:
    """`next (LABEL): STEP`, the line a text view ends a failing verdict with."""
    return f"next ({label or verdict}): {next_step(command, verdict)}"
