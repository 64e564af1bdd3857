"""Entry point: registers every command module on the root group."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import NoReturn

from clusterforge.cli.app import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, app, print_problems, say_interrupted
from clusterforge.errors import ClusterforgeError

DEBUG = "CLUSTERFORGE_DEBUG"  # set (to anything but 0 or empty): an internal error prints its traceback


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP (a closed terminal or CI runner) unwind like Ctrl-C, so atomic writers remove their
    temporary files and keep the old output."""
    raise SystemExit(128 + signum)


def _leave(code: object) -> NoReturn:
    """Exit with SystemExit's meaning of `code`, without tearing the interpreter down.

    A large check holds hundreds of thousands of objects and a few hundred modules; freeing them one by one at
    exit costs tens of milliseconds for nothing (mypy leaves the same way). Every file a command writes is
    written and closed by the time it returns, so only the standard streams need flushing.
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BrokenPipeError, ValueError):  # a reader that went away (`| head`), a closed stream
            stream.flush()
    os._exit(status)


def _crash_line(error: BaseException) -> str:
    """The one line an internal error gets: what it was, and how to see more. Built defensively: memory may be
    short (MemoryError) or the exception's own `str` may fail."""
    name = type(error).__name__
    try:
        from clusterforge.formats.escape import log_line

        detail = str(error)
        said = log_line(f"{name}: {detail[:200]}" if detail else name)
    except BaseException:  # whatever went wrong, the line must still be printed
        said = name
    return f"clusterforge: internal error: {said} (please report; run with {DEBUG}=1 for the traceback)"


def _report_crash(error: BaseException) -> None:
    """An exception nothing else caught is a bug, not a verdict: exit 3 with one line, so CI never reads a
    crash as a policy failure (1) or a bad input (2). The traceback only on request."""
    if os.environ.get(DEBUG, "") not in ("", "0"):
        import traceback

        traceback.print_exception(error, file=sys.stderr)
    print(_crash_line(error), file=sys.stderr)


def main() -> None:
    """Run the command line; exit 0 ok, 1 policy failure, 2 bad input, 3 internal error (see _report_crash),
    130 interrupted."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    import clusterforge.bulk

    clusterforge.bulk.PROCESS_ENDS_WITH_COMMAND = True  # the process leaves with the command (_leave)
    try:
        app(prog_name="clusterforge")
    except SystemExit as done:
        _leave(done.code)
    except KeyboardInterrupt:  # outside a command and its parsing (_Group): the same one line and exit 130
        say_interrupted()
        _leave(EXIT_INTERRUPTED)
    except ClusterforgeError as error:  # raised outside a command's body (an option's callback)
        print_problems(error)
        _leave(EXIT_INPUT)
    except BaseException as error:  # the process edge: MemoryError and RecursionError too
        with contextlib.suppress(BaseException):  # a failing stderr must not turn exit 3 into a traceback
            _report_crash(error)
        _leave(EXIT_INTERNAL)
    _leave(0)


if __name__ == "__main__":
    main()
