"""`new TEMPLATE --params` as a table for people, and `new --list --format json` and `new TEMPLATE --params
--format json`: the templates and their parameters as documents, for portals and scripts that build their own forms.

    [{"name": "onprem-dev", "description": "...", "folder": "templates/onprem-dev"}]

    {"template": "aws-p6-b200", "description": "...",
     "params": [{"name": "nodes", "help": "...", "type": "int", "default": 8, "allowed": "1 to 1,024",
                 "min": 1, "max": 1024},
                {"name": "capacity", "type": "choice", "choices": ["on-demand", "odcr"], ...},
                {"name": "fsx_capacity_gib", ..., "multiple_of": 2400, "also_allowed": [1200]},
                {"name": "region", "type": "str", ..., "pattern": "^[a-z]{2}(-[a-z]+)+-[0-9]$"}]}

`name`, `help`, `type`, `default` and `allowed` (the rule in words, as the prompts say it) are always there; `choices`,
`min`, `max`, `pattern`, `multiple_of` and `also_allowed` only where the template sets them. Bounds of an int
parameter are integers. Folders are named as the other machine outputs name files (relative).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from clusterforge.blueprint.templating import ParamSpec, Template
from clusterforge.files.paths import machine_path


def _bound(spec: ParamSpec, value: float) -> int | float:
    return int(value) if spec.type == "int" or float(value).is_integer() else value


def param_data(name: str, spec: ParamSpec) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "help": spec.help, "type": spec.type, "default": spec.default,
                            "allowed": spec.allowed()}
    if spec.choices:
        data["choices"] = list(spec.choices)
    if spec.ge is not None:
        data["min"] = _bound(spec, spec.ge)
    if spec.le is not None:
        data["max"] = _bound(spec, spec.le)
    if spec.pattern:
        data["pattern"] = spec.pattern
    if spec.multiple_of:
        data["multiple_of"] = spec.multiple_of
        data["also_allowed"] = list(spec.also_allowed)
    return data


def _dumps(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def list_document(templates: Iterable[Template]) -> str:
    return _dumps([{"name": t.name, "description": t.description, "folder": machine_path(str(t.folder))}
                   for t in templates])


def params_document(template: Template) -> str:
    return _dumps({"template": template.name, "description": template.description,
                   "params": [param_data(name, spec) for name, spec in template.spec.params.items()]})


def print_params(template: Template) -> None:
    """One row per parameter: name, default, allowed values (in words), help; a block per parameter where the
    terminal is too narrow for the table (cli.terminal.print_table). A team's template is data: never markup,
    never a CI workflow command."""
    from rich.markup import escape
    from rich.table import Table

    from clusterforge.cli import terminal
    from clusterforge.formats.escape import log_line

    table = Table(title=f"{template.name}: parameters (--set NAME=VALUE)", title_justify="left")
    for column in ("name", "default", "allowed", "help"):
        table.add_column(column, overflow="fold")
    for name, spec in template.spec.params.items():
        table.add_row(*(escape(log_line(str(value))) for value in (name, spec.default, spec.allowed(), spec.help)))
    terminal.print_table(terminal.console(highlight=False), table)
