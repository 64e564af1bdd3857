"""Running git on a repository whose content is untrusted: bounded in time and output, and unable to run programs.

A revision named on the command line comes from a pull request: its trees and blobs can be built to make git
produce terabytes (one blob reached through millions of paths) or to hold links and odd names. So git is run
only for commands that print what was asked and nothing more (rev-parse, ls-tree of one path, cat-file of one
blob), with a wall-clock limit, and its output is read up to a bound fixed by the caller: past it git is killed.

git can start other programs: the fsmonitor hook, hooks, pagers, textconv and diff drivers, the lazy fetch of
a partial clone, and an askpass helper. None of the commands used runs a hook, a filter or a driver; the
settings below also turn off the fsmonitor, the pager, lazy fetching, prompts and the system-wide config, and
pathspecs are literal (no `:(glob)` magic). The user's own repository config is trusted (it is their checkout).
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass

from clusterforge.core.errors import ClusterforgeError, Problem, shown

TIMEOUT_S = 30
_STDERR_MAX = 16 * 1024
_CHUNK = 1 << 16
_SETTINGS = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat",
             "-c", "core.askPass=", "-c", "credential.helper=", "-c", "protocol.allow=never")
_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1", "GIT_PAGER": "cat",
        "GIT_LITERAL_PATHSPECS": "1", "GIT_OPTIONAL_LOCKS": "0", "GIT_ATTR_NOSYSTEM": "1"}
_DROPPED = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND",
            "GIT_EXEC_PATH", "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT")


@dataclass(frozen=True)
class Result:
    """What one git command answered: its exit status, its output (at most the bound asked for) and the last
    line of its error output."""

    returncode: int
    stdout: bytes
    error: str


def environment() -> dict[str, str]:
    """The caller's environment without what could make git start a program, with the settings above."""
    env = {name: value for name, value in os.environ.items() if name not in _DROPPED}
    return env | _ENV


def git(where: str, *args: str, limit: int, stdin: bytes = b"") -> Result:
    """Run `git ARGS` in the current directory; more than `limit` bytes of output, more than TIMEOUT_S seconds
    or a missing git is an input problem located at `where` (the argument that named the revision)."""
    try:
        proc = subprocess.Popen(["git", *_SETTINGS, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=environment(), close_fds=True)
    except FileNotFoundError:
        raise ClusterforgeError(Problem("git is not installed", where)) from None
    try:
        out, err = _collect(proc, args[0], where, limit, stdin)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    lines = err.decode(errors="replace").strip().splitlines()
    error = shown(lines[-1], 160) if lines else f"exit {proc.returncode}"
    return Result(proc.returncode, out, error)


def _collect(proc: subprocess.Popen[bytes], command: str, where: str, limit: int, stdin: bytes) -> tuple[bytes, bytes]:
    """Read git's output and errors until it closes them, within the time limit and `limit` bytes of output."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(stdin)  # a line or two: far below a pipe's buffer
        proc.stdin.close()
    except BrokenPipeError:
        pass
    deadline = time.monotonic() + TIMEOUT_S
    out, err = bytearray(), bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise ClusterforgeError(Problem(f"git {command} took more than {TIMEOUT_S} s", where))
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > limit:
                        raise ClusterforgeError(Problem(f"git {command} printed more than {limit:,} bytes", where))
                elif len(err) < _STDERR_MAX:
                    err += chunk
    return bytes(out), bytes(err)
