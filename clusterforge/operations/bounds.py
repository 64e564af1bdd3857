"""How much the `health` commands read of a saved file (`--from`) and of the output of the commands they run (srun,
scontrol, ssh), and how: streamed, a line at a time, each line and the whole bounded. Past a bound the command
stops with an input problem at `FILE:LINE` (exit 2), never a verdict made from part of the input.

Why these figures:
- A line, 1 MiB (`MAX_LINE_BYTES`). The longest line a health tier prints is one node's perf result, about 200
  bytes a GPU (1.6 KB for 8 GPUs, 15 KB for 72); all_reduce_perf's lines are under 200 bytes. A megabyte is far
  above both, and every parser here reads one in milliseconds (benchmarks/health_bounds.py).
- A `--from` file, 256 MiB (`MAX_SAVED_BYTES`), and the output of one command, 256 MiB (`MAX_CAPTURED_BYTES`).
  The perf results of the node limit (limits.NODES, 100,000 nodes of 8 GPUs, ~2 KB each with its `NODE: `
  prefix) are about 200 MB: a saved run of the largest fleet clusterforge accepts fits, and a file `--save`
  wrote can always be read back. Past it is no health run's output but a flood (a node printing without end),
  and holding it would only cost memory: the command stops (the process is killed) and says where.

A line's bytes are decoded as UTF-8 with bad bytes replaced: the parsers look for ASCII structure, and a node's
stray bytes must not stop the reading of every other node's lines.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import IO

from clusterforge.core.errors import ClusterforgeError, Problem

MAX_LINE_BYTES = 1 << 20
MAX_SAVED_BYTES = 256 << 20
MAX_CAPTURED_BYTES = 256 << 20


def _size(count: int) -> str:
    return f"{count >> 20:,} MiB" if count >= 1 << 20 and count % (1 << 20) == 0 else f"{count:,} bytes"


class Budget:
    """Bytes left to read, shared by the readers of one input (a process's stdout and stderr count together)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def take(self, count: int) -> bool:
        """Count `count` more bytes; False once the total passes the limit."""
        with self._lock:
            self.used += count
            return self.used <= self.limit


def bounded_lines(stream: IO[bytes], file: str, budget: Budget | None = None, hint: str = "") -> Iterator[str]:
    """The lines of STREAM as text (each with its newline), read one at a time: a line longer than MAX_LINE_BYTES
    or a total past the budget (MAX_SAVED_BYTES by default) raises a problem at FILE:LINE. Never reads more than a
    line's bound past what it has checked."""
    budget = budget or Budget(MAX_SAVED_BYTES)
    max_line = MAX_LINE_BYTES
    number = 0
    while raw := stream.readline(max_line + 1):
        number += 1
        if not budget.take(len(raw)):
            raise ClusterforgeError(Problem(f"more than {_size(budget.limit)} in all: not a health run's output",
                                            file=file, line=number, hint=hint))
        if len(raw) > max_line and not raw.endswith(b"\n"):
            raise ClusterforgeError(Problem(f"a line longer than {_size(max_line)}: not a health run's output",
                                            file=file, line=number, hint=hint))
        yield raw.decode("utf-8", "replace")


def run_bounded(argv: Sequence[str], what: str) -> tuple[str, str, int]:
    """Run ARGV with no input and return its stdout, its stderr and its exit status, both streams read as they come,
    together at most MAX_CAPTURED_BYTES and each line at most MAX_LINE_BYTES. Past either the process is killed and
    the problem raised at `WHAT:LINE` (WHAT names the output: "srun's output on login-0001")."""
    budget = Budget(MAX_CAPTURED_BYTES)
    failed: list[ClusterforgeError] = []
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    hint = "a node or the command printed without end; run it on fewer nodes to find which"

    def read(stream: IO[bytes], into: list[str]) -> None:
        try:
            for line in bounded_lines(stream, what, budget, hint=hint):
                if failed:
                    return
                into.append(line)
        except ClusterforgeError as error:
            failed.append(error)
            proc.kill()

    out: list[str] = []
    err: list[str] = []
    reader = threading.Thread(target=read, args=(proc.stderr, err), daemon=True)
    with proc:  # closes the pipes; an interrupt (Ctrl-C) kills the process rather than leaving it running
        try:
            reader.start()
            read(proc.stdout, out)
            reader.join(timeout=5 if failed else None)  # killed: a grandchild may still hold the pipe open
            status = proc.wait()
        except BaseException:
            proc.kill()
            raise
    if failed:
        raise failed[0]
    return "".join(out), "".join(err), status
