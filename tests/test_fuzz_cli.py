"""Bad input never crashes: random mutations of valid blueprints end with exit 0, 1 or 2 — and exit 2 always
comes with `file:line: ...` on stderr, never a traceback."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES

BASES = [yaml.safe_load((EXAMPLES / name).read_text()) for name in
         ("onprem-dgx-h100.yaml", "aws-p5.yaml", "onprem-gb200-nvl72-row.yaml")]
LOCATED = re.compile(r"^\S+:[1-9]\d*: ", re.MULTILINE)

weird = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.just("ünïcødé ✓ 🚀"), st.just([]), st.just({}), st.just("a[01-99999999]"),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


@st.composite
def mutated(draw: st.DrawFn) -> str:
    doc = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        action = draw(st.sampled_from(["replace", "delete", "extra", "duplicate", "nest"]))
        if action == "replace":
            parent[path[-1]] = draw(weird)
        elif action == "delete":
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(weird)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
        elif action == "nest":
            value: Any = draw(weird)
            for _ in range(draw(st.integers(5, 60))):
                value = [value] if draw(st.booleans()) else {"k": value}
            parent[path[-1]] = value
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    if draw(st.integers(0, 9)) == 0:  # sometimes damage the text itself
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["", ":", "\t", "- [", "{", "&a *b", "\x00", "a: 1\na: 2\n"]))
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(mutated(), st.sampled_from([["validate"], ["check"], ["check", "-f", "json"], ["check", "-f", "sarif"]]))
def test_mutations_never_crash(tmp_path: Path, text: str, command: list[str]) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, [*command, str(path)], catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2)
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        assert LOCATED.search(result.stderr), result.stderr
