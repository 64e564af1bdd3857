"""Entry point: registers every command module on the root group.

Ctrl-C at any moment after this module starts to load ends the process with exit 130 and one line,
`clusterforge: interrupted`, and nothing else (no verdict, finding, error or traceback):

- while this module imports the command line (click, the root group), `_while_importing` says the line and
  exits at once: nothing has been written yet, so there is nothing to unwind;
- from then on `_on_sigint` records the interrupt (app.INTERRUPT: in the command-line process, standard output
  and error go to /dev/null from that moment) and raises KeyboardInterrupt, so what a command started is
  unwound (atomic writers remove their temporary files, children are stopped);
- where raising would be dropped (inside pydantic-core, or reported as "Exception ignored" by any native code)
  the KeyboardInterrupt is raised again when the Python frame that called the native code resumes;
- the exit (`_leave`) holds SIGINT, and reports 130 and the line whenever an interrupt was recorded, whatever
  exit status the code that ran after it chose.

A signal before this module runs (the interpreter's start-up, `import clusterforge`) meets Python's default
handler; the console script imports this module first thing, so that window is the interpreter's own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType


def _while_importing(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while this module imports the command line: nothing has been read or written yet, so the process
    says its one line (app.INTERRUPTED, not imported yet) and ends at once, instead of a KeyboardInterrupt
    escaping the console script's import with a traceback."""
    with contextlib.suppress(OSError):
        os.write(2, b"\nclusterforge: interrupted\n" if os.isatty(2) else b"clusterforge: interrupted\n")
    os._exit(130)


def _take_sigint(handler: object, instead_of: tuple[object, ...]) -> None:
    """Install `handler` for SIGINT where one of `instead_of` is installed: an ignored SIGINT (a job started in
    the background passes that down) stays ignored, and another program's handler stays its own."""
    with contextlib.suppress(ValueError):  # not the main thread: signals are not this module's to handle
        if signal.getsignal(signal.SIGINT) in instead_of:
            signal.signal(signal.SIGINT, handler)  # type: ignore[arg-type]


_take_sigint(_while_importing, (signal.default_int_handler,))

# Imported after the handler above is installed (the modules above are loaded by the interpreter's start-up), so
# that Ctrl-C during these imports is one line and exit 130.
from typing import Any, NoReturn  # noqa: E402

from clusterforge.cli.app import (  # noqa: E402
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    INTERRUPT,
    app,
    interrupted_line,
    print_problems,
    say_interrupted,
    silence,
)
from clusterforge.core.errors import ClusterforgeError  # noqa: E402

DEBUG = "CLUSTERFORGE_DEBUG"  # set (to anything but 0 or empty): an internal error prints its traceback


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C: record it (app.INTERRUPT), then raise KeyboardInterrupt where that unwinds the command.

    Not raised: once the command is over (INTERRUPT.raising is off: the exit reports the record), and in
    main's own frame or the console script's, where it would escape main() as a traceback (main reads the
    record instead). Raised later: in pydantic's frames, which are calling into pydantic-core, where it would be
    dropped (`_raise_when_back`). Outside the command line (a program or a test that imports this module) nothing
    is recorded that the KeyboardInterrupt does not carry itself: only one main() would read it."""
    quiet = not INTERRUPT.raising or _calls_main(frame)
    if INTERRUPT.cli or quiet:
        INTERRUPT.record()
    if quiet:
        return
    if frame is not None and _in_pydantic(frame) and sys.gettrace() is None:
        _raise_when_back(frame)
        return
    raise KeyboardInterrupt


def _calls_main(frame: FrameType | None) -> bool:
    """Whether `frame` is main() itself or the top level of the script that calls it (`sys.exit(main())`)."""
    if frame is None:
        return False
    return frame.f_code is main.__code__ or (frame.f_code.co_name == "<module>"
                                            and frame.f_globals.get("__name__") == "__main__"
                                            and frame.f_globals.get("main") is main)


def _in_pydantic(frame: FrameType) -> bool:
    """Whether `frame` is pydantic's own code. Its frames call pydantic-core, which builds validators and
    validates in native code and calls back into Python from there; a KeyboardInterrupt raised in those calls
    is reported as "Exception ignored" and dropped, and the validator is left broken (its patterns then match
    nothing: the false errors about the built-in catalog)."""
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and name.split(".", 1)[0] in ("pydantic", "pydantic_core")


def _untraced(frame: FrameType, event: str, arg: Any) -> None:
    """The global trace function while a KeyboardInterrupt waits for its frame: it traces no new frame."""


def _raise_when_back(frame: FrameType) -> None:
    """Raise KeyboardInterrupt at `frame`'s next line, return or exception, that is as soon as the native call it
    is in has returned to it: pdb's own Ctrl-C handler stops a running frame the same way (`frame.f_trace` and
    `sys.settrace`, from within the signal handler)."""

    def resumed(at: FrameType, event: str, arg: Any) -> None:
        sys.settrace(None)
        raise KeyboardInterrupt

    frame.f_trace = resumed
    frame.f_trace_lines = True
    sys.settrace(_untraced)


def _reraise_dropped(unraisable: Any) -> None:
    """sys.unraisablehook of the command line: a KeyboardInterrupt that native code (a finaliser, a library)
    could only report as "Exception ignored" is raised again in the Python frame that called that code, instead
    of being printed and lost; everything else goes to the default hook."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)
        return
    INTERRUPT.record()
    caller = sys._getframe(0).f_back if INTERRUPT.raising and sys.gettrace() is None else None
    if caller is not None and not _calls_main(caller):
        _raise_when_back(caller)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP (a closed terminal or CI runner) unwind like Ctrl-C, so atomic writers remove their
    temporary files and keep the old output."""
    raise SystemExit(128 + signum)


def _leave(code: object) -> NoReturn:
    """Exit with SystemExit's meaning of `code`, without tearing the interpreter down.

    A large check holds hundreds of thousands of objects and a few hundred modules; freeing them one by one at
    exit costs tens of milliseconds for nothing (mypy leaves the same way). Every file a command writes is
    written and closed by the time it returns, so only the standard streams need flushing.

    SIGINT is held from here on: an interrupt recorded before (app.INTERRUPT) makes the exit 130 with its one
    line, whatever `code` the code after it chose (it may have dropped the KeyboardInterrupt, or printed a crash);
    one that comes later is never delivered, and the command's own outcome stands.
    """
    INTERRUPT.raising = False
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    if INTERRUPT.happened:
        _leave_interrupted()
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


def _leave_interrupted() -> NoReturn:
    """Exit 130 with the one line on the stderr the process started with, and nothing else: what the streams
    still buffer is dropped (a verdict printed after the interrupt), and they are silenced again (a finished
    YAML parse may have given fd 2 back)."""
    silence()
    fd = INTERRUPT.stderr if INTERRUPT.stderr is not None else 2
    with contextlib.suppress(OSError):
        os.write(fd, interrupted_line(fd))
    os._exit(EXIT_INTERRUPTED)


def _keep_stderr() -> int | None:
    """A copy of stderr for the interrupt's one line, however the streams are redirected later."""
    try:
        return os.dup(2)
    except OSError:
        return None


def main() -> None:
    """Run the command line; exit 0 ok, 1 policy failure, 2 bad input, 3 internal error (see _report_crash),
    130 interrupted."""
    INTERRUPT.raising = False  # first: nothing may raise in main's own frame before its `try` (see _on_sigint)
    INTERRUPT.stderr = _keep_stderr()
    INTERRUPT.cli = True
    _take_sigint(_on_sigint, (signal.default_int_handler, _while_importing, _on_sigint))
    sys.unraisablehook = _reraise_dropped
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    import clusterforge.core.bulk

    clusterforge.core.bulk.PROCESS_ENDS_WITH_COMMAND = True  # the process leaves with the command (_leave)
    try:
        INTERRUPT.raising = True
        try:
            if INTERRUPT.happened:  # interrupted since the import, when it was only recorded
                raise KeyboardInterrupt
            app(prog_name="clusterforge")
        finally:  # before any handler below runs: the command is over, an interrupt now is only recorded
            INTERRUPT.raising = False
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


# The command line is imported: from here on Ctrl-C unwinds (or, where the command line never runs, is Python's
# KeyboardInterrupt as before, only recorded).
_take_sigint(_on_sigint, (_while_importing,))

if __name__ == "__main__":
    main()
