from __future__ import annotations

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.yamlsource import format_path, parse_text


def test_lines_recorded_for_keys_and_items() -> None:
    src = parse_text("a: 1\nb:\n  - x: 2\n  - x: 3\n", "f.yaml")
    assert src.data == {"a": 1, "b": [{"x": 2}, {"x": 3}]}
    assert src.line_of(("a",)) == 1
    assert src.line_of(("b", 1, "x")) == 4
    assert src.line_of(("b", 1, "missing")) == 4  # falls back to the deepest existing prefix


def test_merge_keys_and_anchors_resolve_with_explicit_override() -> None:
    text = "base: &b {u: 42, w: 1}\nrack: {<<: *b, w: 2}\n"
    src = parse_text(text)
    assert src.data["rack"] == {"u": 42, "w": 2}
    assert src.line_of(("rack", "w")) == 2


def test_duplicate_key_is_an_error_with_both_lines() -> None:
    with pytest.raises(ClusterforgeError) as exc:
        parse_text("name: a\ncount: 1\nname: b\n", "f.yaml")
    [problem] = exc.value.problems
    assert problem.line == 3
    assert "first defined on line 1" in problem.message


def test_duplicate_key_inside_nested_mapping() -> None:
    with pytest.raises(ClusterforgeError) as exc:
        parse_text("pools:\n  - {name: a, count: 1, count: 2}\n")
    assert exc.value.problems[0].path == "pools[0].count"


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("a: [1, 2\nb: 3\n", 2, "invalid YAML"),
        ("a:\n\tb: 1\n", 2, "tab"),
        ("", 1, "empty"),
        ("a: *nope\n", 1, "invalid YAML"),
    ],
)
def test_malformed_yaml_gives_the_parser_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ClusterforgeError) as exc:
        parse_text(text, "f.yaml")
    problem = exc.value.problems[0]
    assert problem.line == line
    assert fragment in problem.message + problem.hint


def test_format_path() -> None:
    assert format_path(("site", "rows", 0, "racks", 2)) == "site.rows[0].racks[2]"
