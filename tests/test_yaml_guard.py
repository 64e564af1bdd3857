"""The YAML layer's bounds on untrusted input: file kind and size, nesting, expansion, includes, tags, characters."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.fastyaml import RymlLines, parse_fast
from clusterforge.files.yamlsource import load_file, parse_text, read_text


def problem(call, *args):  # type: ignore[no-untyped-def]
    with pytest.raises(ClusterforgeError) as exc:
        call(*args)
    [found] = exc.value.problems
    return found


def both_fail(text: str) -> str:
    slow = problem(parse_text, text, "f.yaml")
    fast = problem(parse_fast, text, "f.yaml", parse_text)
    assert fast == slow
    return slow.render()


# --- the file itself

def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "b.yaml")
    assert "not a regular file" in problem(read_text, tmp_path / "b.yaml").message


def test_a_device_is_refused() -> None:
    assert "not a regular file" in problem(read_text, Path("/dev/zero")).message


def test_a_file_over_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_MAX_INPUT_BYTES", "100")
    (tmp_path / "b.yaml").write_text("a: " + "x" * 200 + "\n")
    assert "CLUSTERFORGE_MAX_INPUT_BYTES" in problem(read_text, tmp_path / "b.yaml").hint


def test_invalid_utf8_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "b.yaml").write_bytes(b"a: 1\nb: \xff\n")
    assert problem(read_text, tmp_path / "b.yaml").line == 2


# --- nesting and expansion

@pytest.mark.parametrize("text", [
    "a: " + "[" * 65 + "]" * 65 + "\n",
    "a: " + "[" * 50_000 + "]" * 50_000 + "\n",
    "a: " + "{b: " * 70 + "1" + "}" * 70 + "\n",
    "".join(" " * i + f"k{i}:\n" for i in range(70)) + " " * 70 + "x: 1\n",
    "a:\n" + "".join(" " * i + "-\n" for i in range(1, 80)) + " " * 80 + "- x\n",
])
def test_deep_nesting_is_refused_before_parsing(text: str) -> None:
    assert "levels of nesting" in both_fail(text)


def test_nesting_at_the_limit_and_wide_indentation_pass() -> None:
    assert parse_text("a: " + "[" * 63 + "]" * 63 + "\n").data
    wide = "".join(" " * (8 * i) + f"k{i}:\n" for i in range(20)) + " " * 160 + "x: 1\n"  # 20 levels, column 160
    fast = parse_fast(wide, "f.yaml", parse_text)
    assert fast.data == parse_text(wide).data and isinstance(fast.lines, RymlLines)


def bomb(levels: int, fan: int = 9) -> str:
    lines = [f"l0: &l0 [{', '.join(['x'] * fan)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fan)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    start = time.perf_counter()
    assert "YAML values once aliases are expanded" in both_fail(bomb(9))
    assert time.perf_counter() - start < 5


def test_aliases_within_the_limit_expand(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(parse_text(bomb(3)).data["l2"]) == 9
    monkeypatch.setenv("CLUSTERFORGE_MAX_YAML_NODES", "50")
    assert "CLUSTERFORGE_MAX_YAML_NODES" in both_fail(bomb(3))


def test_a_merge_chain_that_doubles_is_refused() -> None:
    text = "m0: &m0 {a: 1}\n" + "".join(f"m{i}: &m{i} {{<<: [*m{i - 1}], b{i}: [*m{i - 1}, *m{i - 1}]}}\n"
                                        for i in range(1, 30))
    assert "YAML values" in both_fail(text)


def test_a_recursive_alias_is_refused() -> None:
    assert "recursive" in both_fail("a: &a [1, *a]\n")
    assert "recursive" in both_fail("a: &a {b: {<<: *a}}\n")


# --- tags, conversions, characters

@pytest.mark.parametrize(("text", "fragment"), [
    ("2026-13-45: x\n", "invalid timestamp value"),
    ("a: !!bool maybe\n", "invalid bool value 'maybe'"),
    ("a: !!int ''\n", "invalid int value"),
    ("a: !!float x\n", "invalid float value"),
    ("a: !!python/object:os.system x\n", "unsupported tag"),
    ("a: !!python/object/apply:os.system [x]\n", "unsupported tag"),
    ("a: !!binary aGk=\n", "unsupported tag"),
    ("a: !!set {x}\n", "unsupported tag"),
    ("a: !include [x]\n", "!include takes a file name"),
    ('a: "\\ud83d\\ude00"\n', "invalid YAML"),
    ('a: "x\\0y"\n', "U+0000"),
    ('"\\e": 1\n', "U+001B"),
    ("a: !!bool " + "y" * 500 + "\n", "…"),
])
def test_values_that_cannot_be_read_are_located_problems(text: str, fragment: str) -> None:
    rendered = both_fail(text)
    assert fragment in rendered and rendered.startswith("f.yaml:1:")
    assert len(rendered) < 400


# --- includes

def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "tree"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_an_include_inside_the_tree_is_read(tmp_path: Path) -> None:
    root = tree(tmp_path, {"b.yaml": "site: !include parts/site.yaml\n", "parts/site.yaml": "name: dc1\n",
                           "parts/other.yaml": "x: !include site.yaml\n"})
    assert load_file(root / "b.yaml").data == {"site": {"name": "dc1"}}


@pytest.mark.parametrize(("include", "fragment"), [
    ("/etc/passwd", "absolute path"),
    ("../outside/secret.yaml", "outside the include root"),
    ("link.yaml", "outside the include root"),
    ("loop.yaml", "symbolic links"),
    ("id_rsa", "only .yaml and .yml"),
    ("named.yaml", "not .yaml or .yml"),
    ("key.yaml", "an included file must hold a mapping or a list"),
    ("b.yaml", "includes itself"),
    ("missing.yaml", "no such file"),
    ('"a\\x01.yaml"', "without control characters"),
    ("x" * 300 + ".yaml", "1 to 255 characters"),
])
def test_includes_that_reach_out_are_refused(tmp_path: Path, include: str, fragment: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("SECRET: SECRET\n")
    (outside / "id_rsa").write_text("SECRET\n")
    root = tree(tmp_path, {"b.yaml": f"site: !include {include}\n",
                           "key.yaml": "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n", "notes.txt": "SECRET\n"})
    (root / "link.yaml").symlink_to(outside / "secret.yaml")
    (root / "named.yaml").symlink_to(root / "notes.txt")
    (root / "loop.yaml").symlink_to(root / "loop2.yaml")
    (root / "loop2.yaml").symlink_to(root / "loop.yaml")
    found = problem(load_file, root / "b.yaml")
    assert fragment in found.message and found.line == 1
    assert "SECRET" not in found.render() and "BEGIN" not in found.render()


def test_the_include_root_can_be_widened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree(tmp_path, {"team/b.yaml": "site: !include ../shared/site.yaml\n", "shared/site.yaml": "n: 1\n"})
    assert "outside the include root" in problem(load_file, root / "team" / "b.yaml").message
    monkeypatch.setenv("CLUSTERFORGE_INCLUDE_ROOT", str(root))
    assert load_file(root / "team" / "b.yaml").data == {"site": {"n": 1}}


def test_included_files_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tree(tmp_path, {"b.yaml": "".join(f"k{i}: !include p.yaml\n" for i in range(5)), "p.yaml": "[1]\n"})
    assert load_file(root / "b.yaml").data["k4"] == [1]
    monkeypatch.setenv("CLUSTERFORGE_MAX_INCLUDES", "4")
    assert "included files" in problem(load_file, root / "b.yaml").message


def test_an_included_file_has_only_the_nesting_left_to_it(tmp_path: Path) -> None:
    root = tree(tmp_path, {"b.yaml": "a: " + "[" * 60 + "!include p.yaml" + "]" * 60 + "\n",
                           "p.yaml": "- " + "[" * 10 + "]" * 10 + "\n"})
    assert "levels of nesting" in problem(load_file, root / "b.yaml").message


def test_included_errors_do_not_quote_the_file(tmp_path: Path) -> None:
    root = tree(tmp_path, {"b.yaml": "site: !include p.yaml\n", "p.yaml": "a: 1\nSECRETKEY: 1\nSECRETKEY: 2\n"})
    found = problem(load_file, root / "b.yaml")
    assert found.file.endswith("p.yaml") and found.line == 3 and "SECRET" not in found.message


# --- line lookup

def test_line_lookup_is_linear_in_the_document() -> None:
    pools = 20_000
    text = "pools:\n" + "".join(f"  - {{name: p{i}, count: 1}}\n" for i in range(pools))
    source = parse_fast(text, "f.yaml", parse_text)
    assert isinstance(source.lines, RymlLines)
    start = time.perf_counter()
    for i in range(pools):
        assert source.lines.get(("pools", i, "count")) == i + 2
    assert time.perf_counter() - start < 10  # quadratic sibling walks took minutes here
