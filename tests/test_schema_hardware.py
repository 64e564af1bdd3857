"""Hardware names in the editor schema (clusterforge/schema/hardware.py): a pool's `hardware:` and a fabric's
`switch:` are the catalog's names, the built-in ones and those of the `--catalog` files the schema is written with.
yaml-language-server (headless, as tests/test_schema_editors.py drives it) and check-jsonschema mark a misspelt name
at its line and nothing else; a correct name, and a site's own hardware under a schema written with that site's
catalog, are not marked, and `validate` with the same catalog agrees. The server completes the names."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from clusterforge.catalog import Instance, Server, Switch
from clusterforge.schema import blueprint_schema
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES
from tests.lsp_stdio import LanguageServer
from tests.test_schema_editors import NODE, SERVER, _check_jsonschema, _need_server

SITE_CATALOG = """apiVersion: clusterforge/v1
kind: Catalog
hardware:
  acme-h200-8u:
    kind: server
    description: ACME 8U, 8x H200
    gpus: {model: H200-SXM5, count: 8, memory_gib: 141}
    max_power_kw: 10.5
    psus: {count: 6, watts: 3000}
    u_height: 8
    weight_kg: 135
    depth_mm: 900
    airflow: front-to-rear
    max_inlet_c: 30
    nics: {compute: 8, speed_gbps: 400, protocols: [infiniband, ethernet]}
    sources: {gpus: a, max_power_kw: b, psus: c, u_height: d, weight_kg: e, depth_mm: f, airflow: g,
              max_inlet_c: h, nics: i}
"""
BLUEPRINT = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
POOL = "  - {name: gpu, hardware: dgx-h100, count: 16, role: compute, partition: train}"
SWITCH = "fabric: {kind: infiniband, switch: qm9700, oversubscription: 1.0, rail_optimized: true}"
assert POOL in BLUEPRINT.splitlines() and SWITCH in BLUEPRINT.splitlines()

# name: (blueprint text, the schema it is held to, the 1-based line a diagnostic must point at or None)
CASES: dict[str, tuple[str, str, int | None]] = {
    "correct.yaml": (BLUEPRINT, "site", None),
    "correct-built-in-schema.yaml": (BLUEPRINT, "built-in", None),
    "misspelt.yaml": (BLUEPRINT.replace("hardware: dgx-h100,", "hardware: dgx-h10,", 1), "site",
                      BLUEPRINT.splitlines().index(POOL) + 1),
    "misspelt-switch.yaml": (BLUEPRINT.replace("switch: qm9700", "switch: qm970", 1), "site",
                             BLUEPRINT.splitlines().index(SWITCH) + 1),
    "site-hardware.yaml": (BLUEPRINT.replace("hardware: dgx-h100,", "hardware: acme-h200-8u,", 1), "site", None),
    # the one disagreement: a schema written without the site's catalog does not know its hardware
    "site-hardware-built-in-schema.yaml": (BLUEPRINT.replace("hardware: dgx-h100,", "hardware: acme-h200-8u,", 1),
                                           "built-in", BLUEPRINT.splitlines().index(POOL) + 1),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site catalog and the two schemas, as a team writes them with the CLI."""
    here = tmp_path_factory.mktemp("hardware")
    (here / "site-catalog.yaml").write_text(SITE_CATALOG)
    for name, extra in (("built-in", []), ("site", ["--catalog", "site-catalog.yaml"])):
        subprocess.run([sys.executable, "-m", "clusterforge", "schema", *extra, "-o", f"{name}.schema.json"],
                       check=True, capture_output=True, cwd=here)
    return here


def _names(schema: dict[str, Any]) -> tuple[list[str], list[str]]:
    defs = schema["$defs"]
    return defs["Pool"]["properties"]["hardware"]["enum"], defs["SwitchedFabric"]["properties"]["switch"]["enum"]


def test_the_names_are_the_catalogs_and_the_site_files(tmp_path: Path) -> None:
    """Exactly the names `validate --catalog` takes: servers and instance types for pools, switches for fabrics."""
    site = tmp_path / "site-catalog.yaml"
    site.write_text(SITE_CATALOG)
    for extra in ((), (site,)):
        catalog = load_catalog(extra)
        machines, switches = _names(blueprint_schema(catalog))
        assert set(machines) == {k for k, e in catalog.items() if isinstance(e, Server | Instance)}
        assert set(switches) == {k for k, e in catalog.items() if isinstance(e, Switch)}
    assert {"dgx-h100", "p5.48xlarge", "cpu-1u", "acme-h200-8u"} <= set(machines) and "qm9700" in switches
    assert "qm9700" not in machines and "dgx-h100" not in switches


def test_a_site_catalog_adds_its_hardware(folder: Path) -> None:
    import json

    built_in = json.loads((folder / "built-in.schema.json").read_text())
    site = json.loads((folder / "site.schema.json").read_text())
    assert set(_names(site)[0]) - set(_names(built_in)[0]) == {"acme-h200-8u"}
    hardware = site["$defs"]["Pool"]["properties"]["hardware"]
    assert hardware["enumDescriptions"][hardware["enum"].index("acme-h200-8u")] == "ACME 8U, 8x H200"


def test_validate_with_the_same_catalog_agrees(cli: Callable[..., Result], folder: Path) -> None:
    """What the schema marks, validate refuses at the same line; what it leaves alone, validate takes."""
    for name, (text, schema, line) in CASES.items():
        path = folder / name
        path.write_text(text)
        extra = ["--catalog", str(folder / "site-catalog.yaml")] if schema == "site" else []
        result = cli("validate", path, *extra)
        if line is None:
            assert result.exit_code == 0, (name, result.stderr)
        else:
            assert result.exit_code == 2 and result.stderr.startswith(f"{path}:{line}: "), (name, result.stderr)


def test_check_jsonschema_marks_only_the_wrong_names(folder: Path) -> None:
    for schema in ("site", "built-in"):
        files = {name: text for name, (text, held_to, _) in CASES.items() if held_to == schema}
        done = _check_jsonschema(folder / f"{schema}.schema.json", files, folder / f"cj-{schema}")
        marked = {name for name in files if f"{name}::" in done.stdout}
        assert marked == {name for name in files if CASES[name][2] is not None}, done.stdout[-3000:]


@pytest.fixture(scope="module")
def server(folder: Path) -> Any:
    _need_server()
    settings = {"yaml": {"schemas": {}, "validate": True, "completion": True, "schemaStore": {"enable": False},
                         "kubernetesCRDStore": {"enable": False}}}
    assert NODE is not None
    started = LanguageServer([NODE, str(SERVER), "--stdio"], folder, settings)
    try:
        started.start(folder)
        yield started
    finally:
        started.close()


def _modeline(folder: Path, schema: str) -> str:
    return f"# yaml-language-server: $schema={(folder / f'{schema}.schema.json').as_uri()}\n"


def test_the_editor_marks_only_the_wrong_names_at_their_lines(server: Any, folder: Path) -> None:
    documents = {(folder / f"lsp-{name}").as_uri(): _modeline(folder, schema) + text
                 for name, (text, schema, _) in CASES.items()}
    found = server.diagnostics(documents)
    said = {uri.rsplit("/lsp-", 1)[-1]: [(d["range"]["start"]["line"], d["message"]) for d in diagnostics]
            for uri, diagnostics in found.items()}
    for name, (_, _, line) in CASES.items():
        if line is None:
            assert said[name] == [], name
        else:  # one diagnostic, on its line (0-based, after the modeline), in the schema's words
            assert [at for at, _ in said[name]] == [line], (name, said[name])
            assert said[name][0][1].startswith("not a "), said[name]
            assert "--catalog" in said[name][0][1]


def test_the_editor_completes_the_names(server: Any, folder: Path) -> None:
    text = _modeline(folder, "site") + BLUEPRINT.replace(POOL, "  - name: gpu\n    hardware: \n    count: 16", 1)
    uri = (folder / "complete.yaml").as_uri()
    server.diagnostics({uri: text})
    line = text.splitlines().index("    hardware: ")
    result = server.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                        "position": {"line": line, "character": 14}})
    items = result["items"] if isinstance(result, dict) else result
    labels = {item["label"] for item in items}
    assert {"dgx-h100", "p5.48xlarge", "acme-h200-8u"} <= labels and "qm9700" not in labels


def test_a_bad_catalog_file_is_refused_at_its_line(cli: Callable[..., Result], tmp_path: Path) -> None:
    bad = tmp_path / "site.yaml"
    bad.write_text(SITE_CATALOG.replace("max_power_kw: 10.5", "max_power_kw: -1"))
    result = cli("schema", "--catalog", bad)
    assert result.exit_code == 2 and result.stderr.startswith(f"{bad}:")
    assert result.stdout == ""


def test_the_schema_is_never_written_over_its_catalog(cli: Callable[..., Result], tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(SITE_CATALOG)
    result = cli("schema", "--catalog", site, "-o", site)
    assert result.exit_code == 2 and "is also an input" in result.stderr
    assert site.read_text() == SITE_CATALOG
