"""The editor schema (`clusterforge schema`) takes every file the tool takes, as the user wrote it, and refuses
what the loader refuses: examples, template outputs, the compact hall, the YAML in the docs, and a few bad files.

Files are read as an editor reads them: `!include FILE` is the text FILE (`yaml.customTags: ["!include scalar"]`)
and dates stay text."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from clusterforge.blueprint.templating import discover
from clusterforge.schema import blueprint_schema
from tests.conftest import EXAMPLES, ROOT, example_files


class EditorLoader(yaml.SafeLoader):
    """YAML as the editor's language server hands it to the schema."""


EditorLoader.add_constructor("!include", lambda loader, node: str(node.value))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def read(text: str) -> Any:
    return _plain(yaml.load(text, EditorLoader))  # a SafeLoader plus one tag


@lru_cache(maxsize=1)
def validator() -> jsonschema.Draft202012Validator:
    schema = blueprint_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """The errors under an anyOf/oneOf (an include or the mapping itself): what the user must fix is among them."""
    return [leaf for child in error.context for leaf in _leaves(child)] if error.context else [error]


def errors(data: Any, schema: dict[str, Any] | None = None) -> list[str]:
    checker = validator() if schema is None else jsonschema.Draft202012Validator(schema)
    return [f"{'.'.join(map(str, leaf.absolute_path)) or '(top)'}: {leaf.message[:300]}"
            for error in checker.iter_errors(data) for leaf in _leaves(error)]


def written_files() -> list[Path]:
    found = set(example_files()) | set(EXAMPLES.glob("**/*.yaml"))
    return sorted(found)


@pytest.mark.parametrize("path", written_files(), ids=lambda p: str(p.relative_to(ROOT.parent)))
def test_every_example_fits_the_schema(path: Path) -> None:
    assert errors(read(path.read_text())) == []


@pytest.mark.parametrize("name", sorted(discover()))
def test_every_template_output_fits_the_schema(name: str) -> None:
    assert errors(read(discover()[name].render({}))) == []


def test_the_compact_100k_hall_fits_the_schema(tmp_path: Path) -> None:
    out = tmp_path / "hall.yaml"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--gpus", "100000", "--compact",
                    "-o", str(out)], check=True, capture_output=True)
    data = read(out.read_text())
    assert "[" in data["site"]["rows"][0]["name"]  # written as groups
    assert errors(data) == []


_FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)


def _snippets() -> list[tuple[str, str]]:
    found = []
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        text = doc.read_text()
        for match in _FENCE.finditer(text):
            found.append((f"{doc.name}:{text[: match.start()].count(chr(10)) + 1}", match.group(1)))
    return found


def _unrequired(node: Any) -> Any:
    """The schema of a fragment: every key optional, everything else as strict."""
    if isinstance(node, dict):
        return {k: _unrequired(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [_unrequired(v) for v in node]
    return node


def _kind_defs() -> dict[str, str]:
    return {branch["if"]["properties"]["kind"]["const"]: branch["then"]["$ref"].rsplit("/", 1)[-1]
            for branch in blueprint_schema()["allOf"] if "properties" in branch["if"]}


def test_the_yaml_in_the_docs_fits_the_schema() -> None:
    """A snippet with `kind:` is a whole file; one without is a fragment of some kind's file (`slurm:` of a
    blueprint or of a policy config), checked with every key optional. YAML that is no clusterforge file
    (group vars, CI steps) names no key of any kind and is left alone."""
    schema = blueprint_schema()
    loose = _unrequired(schema)
    kinds = {kind: {**loose, "$ref": f"#/$defs/{name}", "allOf": []} for kind, name in _kind_defs().items()}
    keys = {key for name in _kind_defs().values() for key in schema["$defs"][name]["properties"]}
    checked, failures = 0, []
    for where, text in _snippets():
        data = read(text)
        if not isinstance(data, dict):
            continue
        if "kind" in data:
            problems = errors(data)
        elif set(data) & keys:
            tries = [errors(data, fragment) for fragment in kinds.values()]
            problems = [] if any(not t for t in tries) else min(tries, key=len)
        else:
            continue
        checked += 1
        failures += [f"{where}: {p}" for p in problems]
    assert failures == []
    assert checked >= 10


def test_name_ranges_counts_unnamed_feeds_and_numbers_fit() -> None:
    data = read((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    rows = data["site"]["rows"]
    rows[0]["name"] = "su[01-08]"
    rack = rows[0]["racks"][0]
    rack["name"] = "{row}-r[01-04]"
    for feed in rack["feeds"]:
        feed.pop("name", None)
    rows[0]["racks"].append({**rack, "name": "spare", "count": 2})
    data.setdefault("slurm", {})["settings"] = {"SlurmctldTimeout": 10, "SchedulerParameters": "bf_continue"}
    assert errors(data) == []


def _bad(text: str) -> list[str]:
    return errors(read(text))


def _loader_refuses(text: str, tmp_path: Path) -> None:
    from clusterforge.blueprint.load import load_blueprint
    from clusterforge.core.errors import ClusterforgeError

    path = tmp_path / "bp.yaml"
    path.write_text(text)
    with pytest.raises(ClusterforgeError):
        load_blueprint(path)


BASE = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()


@pytest.mark.parametrize(("change", "path"), [
    (lambda d: d.update(tem="vision"), "(top)"),                                   # unknown key
    (lambda d: d["site"]["rows"][0]["racks"][0].update(u_heigth=42), "site"),      # unknown key, deep
    (lambda d: d["site"]["rows"][0].update(name="a[01-]"), "site"),                # not a range
    (lambda d: d["site"]["rows"][0].update(name="a[01-04]", count=2), "site"),     # range and count
    (lambda d: d.update(slurm={"settings": {"SlurmctldTimeout": True}}), "slurm"),  # SLURM has no boolean
    (lambda d: d.update(site="site.json"), "site"),                                # includes are YAML only
    (lambda d: d.update(kind="Clustre"), "kind"),
])
def test_the_schema_refuses_what_the_loader_refuses(change: Any, path: str, tmp_path: Path) -> None:
    data = read(BASE)
    change(data)
    found = errors(data)
    assert found and any(f.startswith(path) for f in found), found
    text = yaml.safe_dump(data, sort_keys=False).replace("site: site.json", "site: !include site.json")
    (tmp_path / "site.json").write_text("{}")
    _loader_refuses(text, tmp_path)


@pytest.mark.parametrize(("text", "fragment"), [
    ("apiVersion: clusterforge/v1\nkind: Site\nname: dc1\nrows: []\npools: []\n", "pools"),
    ("kind: PolicyConfig\nrules: {PWR-999: {level: error}}\n", "PWR-999"),
    ("kind: PolicyConfig\nrules: {PWR-001: {levle: error}}\n", "levle"),
    ("kind: Waivers\nwaivers: [{rule: PWR-001, target: site, reason: because we say so, expires: 2030-01-01}]\n",
     "cluster"),
    ("kind: Catalog\nhardware: {x: {kind: toaster}}\n", "toaster"),
])
def test_each_kind_has_its_own_shape(text: str, fragment: str) -> None:
    found = _bad(text)
    assert any(fragment in f for f in found), found


def test_a_file_without_kind_is_a_policy_config_waivers_or_catalog() -> None:
    assert _bad("waivers: []\n") == []
    assert _bad("rules: {PWR-001: {level: warning}}\n") == []
    assert _bad("pools: []\n") != []
