"""The published editor schema (`clusterforge schema -o clusterforge.schema.json`) as the tools outside Python
read it: check-jsonschema (ECMA-262 patterns through regress, in `u` mode) accepts the schema and every file
users write, and yaml-language-server (VS Code's YAML extension, every editor's `yamlls`), driven headless over
stdio, reports nothing on them and exactly one problem on a mistyped key. Text the tool refuses (bidi overrides,
zero-width and tag characters) is refused by both, and still by `clusterforge validate`.

check-jsonschema comes with the dev extra; the language server is `npm install --prefix .node
yaml-language-server@<pin in .ci/run>`. Where one is missing its tests are skipped, except in CI (.ci/run
installs both), where that is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from clusterforge.blueprint.templating import discover
from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.text import LINE_CHAR
from clusterforge.schema import blueprint_schema
from clusterforge.schema.ecma import Untranslatable, ecma_pattern, ecma_patterns
from tests.conftest import EXAMPLES, ROOT, SHARED_EXAMPLES, example_files
from tests.lsp_stdio import LanguageServer

BIN = Path(sys.executable).parent
CHECK_JSONSCHEMA = shutil.which("check-jsonschema", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
SERVER = ROOT / ".node" / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"
NODE = shutil.which("node")


def _need(present: object, what: str, install: str) -> None:
    if present:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing; .ci/run installs it")
    pytest.skip(f"{what} is not installed ({install})")


def _need_check_jsonschema() -> str:
    _need(CHECK_JSONSCHEMA, "check-jsonschema", "pip install -e '.[dev]'")
    assert CHECK_JSONSCHEMA is not None
    return CHECK_JSONSCHEMA


def _need_server() -> None:
    _need(NODE, "node", "apt-get install nodejs npm")
    _need(SERVER.is_file(), "yaml-language-server", "npm install --prefix .node yaml-language-server@<pin in .ci/run>")


# --- the files users write, and text that must be refused ------------------------------------------------------

_FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.M | re.S)
_BLUEPRINT = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
_WAIVER = """apiVersion: clusterforge/v1
kind: Waivers
waivers:
  - rule: PWR-002
    cluster: vision-h100
    target: site.rows[0].racks[*].feeds
    reason: {reason}
    expires: 2027-03-31
    approver: {approver}
"""
_ORDINARY = "Vision team — 16× DGX H100 (phase 2: São Paulo, 東京; see #42) ✓ 🚀"


def _quoted(text: str) -> str:
    """YAML double-quoted, the characters as themselves (YAML reads no surrogate pair in an escape)."""
    return json.dumps(text, ensure_ascii=False)


def _described(text: str) -> str:
    return _BLUEPRINT.replace("\nteam: vision\n", f"\nteam: vision\ndescription: {_quoted(text)}\n", 1)


def _docs_files() -> dict[str, str]:
    """Every YAML block of the docs that is a whole file (it says its `kind:`)."""
    found = {}
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        text = doc.read_text()
        for match in _FENCE.finditer(text):
            data = yaml.safe_load(match.group(1).replace("!include ", ""))
            if isinstance(data, dict) and "kind" in data:
                found[f"docs-{doc.stem}-{text[: match.start()].count(chr(10)) + 1}.yaml"] = match.group(1)
    return found


def _catalog_files() -> dict[str, str]:
    """The catalogs and price tables clusterforge ships, written as a user's `--catalog` file is."""
    found = {}
    for path in sorted((ROOT / "clusterforge").glob("**/data/*.yaml")):
        data = yaml.safe_load(path.read_text())
        if isinstance(data, dict) and data.get("kind") == "Catalog":
            found["catalog-" + "-".join(path.relative_to(ROOT / "clusterforge").parts)] = path.read_text()
    return found


def good_files() -> dict[str, str]:
    """File name: text, for every kind: examples (and the shared site they include), each template's output, the
    docs' files (waivers and policy configs among them), the shipped catalogs and prices, and free text with
    ordinary punctuation and Unicode."""
    files = {f"{'shared-' if SHARED_EXAMPLES in p.parents else ''}example-{p.name}": p.read_text()
             for p in example_files()}
    files |= {f"shared-site-{p.name}": p.read_text() for p in sorted((EXAMPLES / "shared-site").glob("*.yaml"))}
    files |= {f"template-{name}.yaml": template.render({}) for name, template in sorted(discover().items())}
    files |= _docs_files() | _catalog_files()
    files["described.yaml"] = _described(_ORDINARY)
    files["waivers-unicode.yaml"] = _WAIVER.format(
        reason=_quoted("B-side whips → 60 A in the March window (ticket #4711, “phase 2”) — 確認済み ✓"),
        approver="Zoë Ångström <facilities@example.com>")
    return files


HOSTILE = {  # each carries one character the tool refuses in free text (core/text.py LINE_CHAR)
    "hostile-bidi-override.yaml": _described("approved \u202e by nobody"),
    "hostile-tag-character.yaml": _described("GPU \U000e0041 cluster"),
    "hostile-astral-format.yaml": _described("GPU \U000110bd cluster"),
    "hostile-waiver-zero-width.yaml": _WAIVER.format(reason=_quoted("accepted\u200b for now by facilities"),
                                                     approver="facilities"),
}
TYPO = _BLUEPRINT.replace("\nteam: vision\n", "\ntaem: vision\n", 1)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("editors")


@pytest.fixture(scope="module")
def schema_file(workdir: Path) -> Path:
    """The schema as published: what `clusterforge schema -o` writes."""
    path = workdir / "clusterforge.schema.json"
    subprocess.run([sys.executable, "-m", "clusterforge", "schema", "-o", str(path)], check=True,
                   capture_output=True, cwd=workdir)
    return path


# --- the patterns themselves ------------------------------------------------------------------------------------


def _patterns(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        yield from node.get("patternProperties", {})
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_every_pattern_compiles_in_ecma_262_with_u_and_in_python() -> None:
    """regress is check-jsonschema's engine; `re` is Python's jsonschema's."""
    regress = pytest.importorskip("regress", reason="regress comes with check-jsonschema (dev extra)")
    patterns = set(_patterns(blueprint_schema()))
    refused = []
    for pattern in patterns:
        try:
            regress.Regex(pattern, flags="u")
            re.compile(pattern)
        except (regress.RegressError, re.error) as error:
            refused.append(f"{pattern[:60]}: {error}")
    assert refused == []
    assert len(patterns) > 40


def _code_points() -> list[int]:
    return [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def test_a_line_character_reads_alike_in_the_editor_and_the_tool() -> None:
    """Every code point: the editor's pattern (regress with `u`) matches exactly where the tool's does."""
    regress = pytest.importorskip("regress", reason="regress comes with check-jsonschema (dev extra)")
    tool, editor = re.compile(f"^{LINE_CHAR}$"), regress.Regex(ecma_pattern(f"^{LINE_CHAR}$"), flags="u")
    differ = [hex(c) for c in _code_points() if bool(tool.match(chr(c))) != bool(editor.find(chr(c)))]
    assert differ == []


def test_a_line_character_reads_alike_in_node() -> None:
    """The same, in the JavaScript engine yaml-language-server runs on (`new RegExp(pattern, 'u')`)."""
    _need(NODE, "node", "apt-get install nodejs npm")
    script = ("const p = new RegExp(require('fs').readFileSync(0, 'utf8'), 'u'); const out = [];"
              "for (let c = 0; c <= 0x10ffff; c++) { if (c >= 0xd800 && c <= 0xdfff) continue;"
              " if (p.test(String.fromCodePoint(c))) out.push(c); } console.log(JSON.stringify(out));")
    assert NODE is not None
    done = subprocess.run([NODE, "-e", script], input=ecma_pattern(f"^{LINE_CHAR}$"), capture_output=True,
                          text=True, check=True, timeout=120)
    tool = re.compile(f"^{LINE_CHAR}$")
    assert json.loads(done.stdout) == [c for c in _code_points() if tool.match(chr(c))]


@pytest.mark.parametrize(("python", "ecma"), [
    (r"^[^\x00\U000e0020-\U000e007f]$", "^[^\\x00\U000e0020-\U000e007f]$"),  # astral: the character itself
    (r"\U00000041\u00e9", "\\u0041\\u00e9"),
    (r"^[a-z\#\ ]{,3}$", "^[a-z\\u0023\\u0020]{0,3}$"),  # punctuation `re` alone takes escaped; {,3} is {0,3}
    (r"a{x}]", "a\\{x\\}\\]"),  # braces and brackets that `re` reads as themselves
    (r"[]a]", "[\\]a]"),  # `]` first in a class: a literal in `re`, an empty class in ECMA-262
    (r"(?:a|b)(?!c)\[\-\]", r"(?:a|b)(?!c)\[\u002d\]"),
])
def test_patterns_are_rewritten_into_what_both_read(python: str, ecma: str) -> None:
    assert ecma_pattern(python) == ecma


@pytest.mark.parametrize("python", [r"^\d{4}$", r"\w+", r"\s", r"\Aa\Z", r"(?P<x>a)", r"(?i)a", r"(a)\1"])
def test_what_reads_otherwise_in_ecma_262_is_refused(python: str) -> None:
    with pytest.raises(Untranslatable):
        ecma_pattern(python)
    with pytest.raises(ClusterforgeError, match="ECMA-262"):
        ecma_patterns({"properties": {"x": {"type": "string", "pattern": python}}})


# --- check-jsonschema -------------------------------------------------------------------------------------------


def _check_jsonschema(schema: Path, files: dict[str, str], folder: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema over the files; it reads YAML without custom tags, so `!include FILE` is its file name,
    as an editor told `yaml.customTags: ["!include scalar"]` reads it."""
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text.replace("!include ", ""))
    return subprocess.run([_need_check_jsonschema(), "--schemafile", str(schema),
                           *(str(folder / name) for name in files)], capture_output=True, text=True, timeout=300)


def test_check_jsonschema_accepts_the_schema(schema_file: Path) -> None:
    done = subprocess.run([_need_check_jsonschema(), "--check-metaschema", str(schema_file)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_jsonschema_accepts_every_file_users_write(schema_file: Path, workdir: Path) -> None:
    files = good_files()
    assert {"Cluster", "Site", "Waivers", "PolicyConfig", "Catalog"} <= {
        yaml.safe_load(text.replace("!include ", "")).get("kind") for text in files.values()}
    done = _check_jsonschema(schema_file, files, workdir / "good")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


def test_check_jsonschema_refuses_what_the_tool_refuses(schema_file: Path, workdir: Path) -> None:
    done = _check_jsonschema(schema_file, {**HOSTILE, "typo.yaml": TYPO}, workdir / "hostile")
    assert done.returncode == 1
    assert [name for name in [*HOSTILE, "typo.yaml"] if f"{name}::" not in done.stdout] == []


def test_the_tool_still_refuses_the_hostile_text(cli: Callable[..., Result], workdir: Path) -> None:
    for name, text in HOSTILE.items():
        path = workdir / name
        path.write_text(text)
        if "waiver" in name:
            result = cli("check", str(EXAMPLES / "onprem-dgx-h100.yaml"), "--waivers", str(path))
        else:
            result = cli("validate", str(path))
        assert result.exit_code == 2, (name, result.output)


# --- yaml-language-server, headless -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def published(schema_file: Path, workdir: Path) -> dict[str, list[dict[str, Any]]]:
    """One server for the module: every file opened at once, the diagnostics it published for each, by name.
    The schema is mapped to `*.yaml` in the settings; the typo'd blueprint (`.yml`) names it in a modeline."""
    _need_server()
    folder = workdir / "lsp"
    folder.mkdir()
    files = {**good_files(), **HOSTILE}
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "typo.yml").write_text(f"# yaml-language-server: $schema={schema_file.as_uri()}\n{TYPO}")
    settings = {"yaml": {"schemas": {schema_file.as_uri(): ["*.yaml"]}, "customTags": ["!include scalar"],
                         "validate": True, "schemaStore": {"enable": False}, "kubernetesCRDStore": {"enable": False}}}
    assert NODE is not None
    server = LanguageServer([NODE, str(SERVER), "--stdio"], folder, settings)
    try:
        server.start(folder)
        found = server.diagnostics({(folder / name).as_uri(): (folder / name).read_text()
                                    for name in [*files, "typo.yml"]})
    finally:
        server.close()
    return {uri.rsplit("/", 1)[-1]: diagnostics for uri, diagnostics in found.items()}


def _said(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [f"line {d['range']['start']['line'] + 1}: {d['message'][:160]}" for d in diagnostics]


def test_the_editor_reports_nothing_on_files_users_write(published: dict[str, list[dict[str, Any]]]) -> None:
    good = good_files()
    assert {name: _said(found) for name, found in published.items() if name in good and found} == {}
    assert set(good) <= set(published)


def test_the_editor_reports_a_typo_once(published: dict[str, list[dict[str, Any]]]) -> None:
    found = published["typo.yml"]
    assert len(found) == 1, _said(found)
    assert "taem" in found[0]["message"]
    assert found[0]["range"]["start"]["line"] == TYPO.splitlines().index("taem: vision") + 1  # after the modeline


def test_the_editor_refuses_what_the_tool_refuses(published: dict[str, list[dict[str, Any]]]) -> None:
    assert {name: _said(published[name]) for name in HOSTILE if not any(
        "pattern" in d["message"] for d in published[name])} == {}
