"""The Grafana dashboards (roles/monitoring/files/grafana) load by file provisioning as well as by the UI's import.

A provisioned dashboard is read as it is: the `__inputs` an export for sharing carries are resolved only by the
import dialog, so a `${DS_PROMETHEUS}` that is not a dashboard variable stays unresolved ("Datasource named
${DS_PROMETHEUS} was not found", grafana/grafana#10786). Each dashboard therefore defines DS_PROMETHEUS as a
datasource variable of type prometheus, and every variable a dashboard uses is one it defines, or Grafana's own."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

ROLE = ROOT / "roles" / "monitoring"
DASHBOARDS = sorted((ROLE / "files" / "grafana").glob("*.json"))
# $name, ${name} and ${name:format}; Grafana's global variables start with `__` ($__rate_interval, $__range)
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)(?::[\w]+)?\}|([A-Za-z_]\w*))")
DATASOURCE_VARIABLE = {"name": "DS_PROMETHEUS", "type": "datasource", "query": "prometheus"}


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def provisioned_datasource_uids() -> set[str]:
    """The uids of the data sources the role provisions (none while it ships no provisioning file)."""
    uids = set()
    for path in [*ROLE.rglob("*datasource*.yml"), *ROLE.rglob("*datasource*.yml.j2")]:
        for source in (yaml.safe_load(path.read_text()) or {}).get("datasources", []):
            uids.add(source.get("uid", ""))
    return uids


def test_there_are_dashboards() -> None:
    assert [p.name for p in DASHBOARDS] == ["cluster-overview.json", "gpu.json"]


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_every_variable_a_dashboard_uses_is_defined_in_it(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    defined = [variable["name"] for variable in dashboard["templating"]["list"]]
    used = {a or b for text in strings(dashboard) for a, b in VARIABLE.findall(text)}
    missing = sorted(name for name in used if not name.startswith("__") and name not in defined)
    assert not missing, f"{path.name} uses variables it does not define: {missing}"


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_the_data_source_is_a_variable_that_provisioning_resolves(path: Path) -> None:
    dashboard = json.loads(path.read_text())
    variables = dashboard["templating"]["list"]
    first = variables[0]  # before the query variables that use it
    assert {key: first.get(key) for key in DATASOURCE_VARIABLE} == DATASOURCE_VARIABLE
    assert "__inputs" not in dashboard  # resolved by the import dialog only: one mechanism, the variable
    uids = {ref["uid"] for ref in _datasource_refs(dashboard) if ref.get("type") == "prometheus"}
    assert uids <= {"${DS_PROMETHEUS}"} | provisioned_datasource_uids(), uids


def _datasource_refs(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        found = [value["datasource"]] if isinstance(value.get("datasource"), dict) else []
        return found + [r for v in value.values() for r in _datasource_refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _datasource_refs(v)]
    return []
