"""Each hostile command in a process forked from one that imported clusterforge once.

The suite runs a thousand commands. Started fresh, each spent most of its CPU time importing the package (about
0.45 s of a 0.5-s `validate` of a small blueprint) before it read a byte of its input: half the suite's time, spent
on the same work a thousand times. Here a fork server (multiprocessing's, started once) imports the modules
every blueprint command needs, and each command is a fresh fork of it that has run nothing: its own process,
session, working folder, environment, address-space limit and standard streams, exit code and peak RSS, as a new
`python -m clusterforge` has. What the server imported counts in a command's RSS as it would in a fresh process
that imports it.

`benchmarks/hostile.py` starts every command fresh instead (harness.FRESH): its figures are what a user's
command pays, start-up included.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext

PRELOAD = ["tests.hostile.warm"]  # the modules the blueprint commands import; the others import theirs in the fork
HASH_SEED = "0"  # fixed when an interpreter starts: the server's is every fork's

_CONTEXT = multiprocessing.get_context("forkserver")
_STARTING = threading.Lock()  # the harness runs two cases at a time: one thread at a time changes the environment


@contextlib.contextmanager
def _hash_seed(seed: str) -> Iterator[None]:
    before = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = seed
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = before


def context() -> ForkServerContext:
    """The fork server's context, the server started (once per process) with the modules loaded."""
    with _STARTING:
        _CONTEXT.set_forkserver_preload(PRELOAD)
        with _hash_seed(HASH_SEED):
            forkserver.ensure_running()
    return _CONTEXT


def command(argv: Sequence[str], cwd: str, env: Mapping[str, str], log: str, report: str, limit: int) -> None:
    """Run in the fork: a session of its own (the caller stops a hung command by its process group), then the
    command in a child of it, as harness.LAUNCHER does: its peak RSS and CPU time are the command's alone. Exits
    with the command's exit code, or dies of its signal."""
    os.setsid()
    pid = os.fork()
    if pid == 0:
        _clusterforge(argv, cwd, env, log, limit)
    report_and_exit(pid, report)


def report_and_exit(pid: int, report: str) -> None:
    """Wait for the command `pid`, write its peak RSS (KiB), CPU seconds and exit code (minus its signal's number
    when a signal ended it) to `report`, and end as it ended.

    The caller reads the exit code from the report: a forked process's own exit code can read 255 when two threads
    ask after processes at once (multiprocessing's `Process.start` polls every other child it started, and two
    reads of one child's status pipe race: the second finds it closed)."""
    _, status, usage = os.wait4(pid, 0)
    with open(report, "w") as sink:
        sink.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime:.3f} {os.waitstatus_to_exitcode(status)}")
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status))


def _clusterforge(argv: Sequence[str], cwd: str, env: Mapping[str, str], log: str, limit: int) -> None:
    """`clusterforge ARGV` as its entry point runs it. main() never returns: every way out of it, a crash
    included, ends the process through os._exit with its exit code and the streams flushed (cli.main._leave).
    What is left here is a set-up that failed: its traceback, and exit 1."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own streams
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        sys.argv = ["clusterforge", *argv]
        from clusterforge.cli.main import main

        main()
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(1)
