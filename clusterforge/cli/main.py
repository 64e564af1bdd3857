"""Entry point: registers every command module on the root group."""

from __future__ import annotations

import signal

from clusterforge.cli import (  # noqa: F401  (commands register on import)
    aws_cmds,
    blueprint_cmds,
    catalog_cmds,
    check_cmds,
    lab_cmds,
    new_cmds,
    plan_cmds,
    provision_cmds,
    report_cmds,
    rules_cmds,
)
from clusterforge.cli.app import app


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
