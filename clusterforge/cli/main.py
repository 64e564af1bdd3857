"""Entry point: registers every command module on the root group."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import NoReturn

from clusterforge.cli.app import app  # commands register when first looked up (COMMAND_MODULES)


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


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        app(prog_name="clusterforge")
    except SystemExit as done:
        _leave(done.code)
    _leave(0)


if __name__ == "__main__":
    main()
