"""Entry point: registers every command module on the root group."""

from __future__ import annotations

import signal

from clusterforge.cli.app import app  # commands register when first looked up (COMMAND_MODULES)


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM and SIGHUP (a closed terminal or CI runner) unwind like Ctrl-C, so atomic writers remove their
    temporary files and keep the old output."""
    raise SystemExit(128 + signum)


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    app(prog_name="clusterforge")


if __name__ == "__main__":
    main()
