"""The `health` commands' own inputs: a saved run (`--from`) whose lines one node forged, an older bare-JSON file,
lines past the line bound, and a line built to make a backtracking pattern quadratic.

Each runs the command a user would (`clusterforge health perf|diag|allreduce --from FILE`), with nothing run on any
node; the harness holds every run to its usual bounds (no hang, memory, no traceback, exit 0/1/2)."""

from __future__ import annotations

import json

from tests.hostile.harness import Case

ONE, TWO = frozenset({1}), frozenset({2})
ABORTED = "Job step aborted " * ((1 << 20) // 17 - 8)  # under the 1 MiB line bound: read, not refused
TABLE = "\n".join([  # all_reduce_perf's table, one space between columns
    "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
    "  8589934592 2147483648 float sum -1 47535 180.71 338.82 0 47743 179.92 337.35 0",
    "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 338.09", ""])


def _perf(node: str, checksum: str = "9f2c0a5b7e1d3c48") -> str:
    return json.dumps({"node": node, "status": "pass", "seconds": 2.1, "codes": [], "detail": "",
                       "gpus": [{"index": i, "name": "NVIDIA H100 80GB HBM3", "gemm_tflops": 793.1, "hbm_gbps": 3030.5,
                                 "checksum": checksum, "checksum_ok": True} for i in range(8)]})


def _diag(node: str, status: str = "pass") -> str:
    return json.dumps({"node": node, "level": 2, "status": status, "seconds": 90.5, "detail": "dcgmi"})


FORGED_PERF = "".join(f"gpu-000{n}: {_perf(f'gpu-000{n}', 'deadbeef' if n == 3 else '9f2c0a5b7e1d3c48')}\n"
                      for n in range(1, 5))
FORGED_PERF += f"gpu-0002: {_perf('gpu-0003')}\ngpu-0002: {_perf('gpu-0001', 'deadbeef')}\n"
FORGED_DIAG = (f"gpu-0001: {_diag('gpu-0001')}\ngpu-0002: {_diag('gpu-0002')}\ngpu-0003: {_diag('gpu-0003', 'fail')}\n"
               f"gpu-0002: {_diag('gpu-0003')}\ngpu-0002: {_diag('gpu-0001', 'fail')}\n")

CASES = [
    Case("health-perf-forged-saved-lines", "a saved perf run where gpu-0002's task printed gpu-0003's result (a pass, "
         "hiding its wrong checksum) and gpu-0001's (a wrong checksum): gpu-0003 and gpu-0002 are named, never "
         "gpu-0001", {"perf.lines": FORGED_PERF},
         argv=[["health", "perf", "--from", "tree/perf.lines", "-f", "json"]], exits={"*": ONE},
         says={"health#0": '"detail": "printed 3 results naming gpu-0001, gpu-0002, gpu-0003 (lines 2, 5, 6)'}),
    Case("health-diag-forged-saved-lines", "a saved diag run where gpu-0002's task printed a pass for the failing "
         "gpu-0003 and a failure for gpu-0001", {"diag.lines": FORGED_DIAG},
         argv=[["health", "diag", "--from", "tree/diag.lines"]], exits={"*": ONE},
         says={"health#0": "gpu-0001  pass"}),
    Case("health-perf-bare-json-lines", "the older format, where each line's own `node` was its identity: refused "
         "with how to save a run", {"perf.jsonl": f"{_perf('gpu-0001')}\n{_perf('gpu-0002')}\n"},
         argv=[["health", "perf", "--from", "tree/perf.jsonl"]], exits={"*": TWO},
         says={"health#0": "tree/perf.jsonl:1: a result without the node that printed it"}),
    Case("health-perf-missing-status", "a saved result without its status: exit 2 at its line, not five healthy "
         "nodes called failed", {"perf.lines": 'gpu-0001: {"node": "gpu-0001", "gpus": []}\n'},
         argv=[["health", "perf", "--from", "tree/perf.lines"]], exits={"*": TWO},
         says={"health#0": "tree/perf.lines:1: status: missing"}),
    Case("health-2mb-lines", "a 2 MB line in each command's saved file: past the 1 MiB line bound, exit 2 at it",
         {"big.lines": f"gpu-0001: {_perf('gpu-0001')}\ngpu-0002: " + "{" * 2_000_000 + "\n",
          "big.out": TABLE + "Job step aborted " * 120_000 + "\n"},
         argv=[["health", "perf", "--from", "tree/big.lines"], ["health", "diag", "--from", "tree/big.lines"],
               ["health", "allreduce", "--from", "tree/big.out", "--min-busbw", "300"]], exits={"*": TWO},
         says={"health#0": "tree/big.lines:2: a line longer than 1 MiB", "health#2": "tree/big.out:5: a line longer"}),
    Case("health-allreduce-repeated-abort-line", "a line just under 1 MiB repeating `Job step aborted` (a pattern "
         "`Job step aborted.*time` scanned to its end from each: minutes): read in one pass, the table judged",
         {"allreduce.out": TABLE + ABORTED + "\n"},
         argv=[["health", "allreduce", "--from", "tree/allreduce.out", "--min-busbw", "300"],
               ["health", "allreduce", "--from", "tree/allreduce.out", "--min-busbw", "350"]],
         exits={"health#0": frozenset({0}), "health#1": ONE},
         says={"health#0": "verdict: ok: bus bandwidth 337.4 GB/s", "health#1": "next (below-floor)"}),
]
