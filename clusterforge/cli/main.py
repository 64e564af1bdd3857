"""Entry point: registers every command module on the root group."""

from __future__ import annotations

from clusterforge.cli import (  # noqa: F401  (commands register on import)
    blueprint_cmds,
    catalog_cmds,
    check_cmds,
    lab_cmds,
    plan_cmds,
    provision_cmds,
    rules_cmds,
)
from clusterforge.cli.app import app


def main() -> None:
    app(prog_name="clusterforge")


if __name__ == "__main__":
    main()
