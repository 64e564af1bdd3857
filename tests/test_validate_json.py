"""`validate --format json`: one document ({ok, errors, files: [{file, ok, errors, cluster}]}), every key always
there, each error {file, line, path, message, hint}; the exit codes are text's (0 valid, 2 not)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES

GOOD = EXAMPLES / "onprem-dgx-h100.yaml"


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["validate", *map(str, args)], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_a_valid_blueprint_is_ok_with_what_it_holds() -> None:
    code, out, _ = run("--format", "json", GOOD)
    assert code == 0
    doc = json.loads(out)
    assert doc == {"ok": True, "errors": [], "files": [{
        "file": os.path.relpath(GOOD), "ok": True, "errors": [],
        "cluster": {"name": "vision-h100", "target": "onprem", "nodes": 16, "pools": 1, "racks": 6}}]}


def test_each_problem_is_located_and_the_exit_code_is_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.read_text().replace("team: vision", "team: vision\ntem: typo"))
    code, out, _ = run("-f", "json", GOOD, bad)
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False and [f["ok"] for f in doc["files"]] == [True, False]
    [error] = doc["files"][1]["errors"]
    assert set(error) == {"file", "line", "path", "message", "hint"}
    assert error["path"] == "tem" and error["line"] == 7 and "unknown key" in error["message"]
    assert error["file"].endswith("bad.yaml") and not os.path.isabs(error["file"])
    assert doc["files"][1]["cluster"] is None


def test_an_error_in_an_included_file_names_that_file(hall: Path) -> None:
    site = hall / "site-dc1.yaml"
    site.write_text(site.read_text().replace("pue: 1.3", "pue: 1.3\npeu: 1"))
    code, out, _ = run("--format", "json", hall / "team-nlp.yaml")
    assert code == 2
    [error] = json.loads(out)["files"][0]["errors"]
    assert error["file"].endswith("site-dc1.yaml") and error["path"] == "site.peu"


def test_a_bad_catalog_is_a_document_too(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("kind: Catalog\nhardwar: {}\n")
    code, out, _ = run("--format", "json", "--catalog", catalog, GOOD)
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False and doc["files"] == []
    assert doc["errors"][0]["path"] == "hardwar" and doc["errors"][0]["line"] == 2


def test_text_is_unchanged(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.read_text().replace("team: vision", "team: vision\ntem: typo"))
    code, out, err = run(GOOD, bad)
    assert code == 2
    assert out == f"{GOOD}: valid (vision-h100, target onprem, 16 nodes in 1 pool, 6 racks)\n"
    assert err.startswith(f"{bad}:7: tem: unknown key 'tem'")
