"""Readable at 100,000 GPUs: text, GitHub and Markdown print one line per rule and cause with the targets as a
hostlist, errors first; GitHub gets at most 10 annotations per level and the full table in the job summary;
JSON and SARIF keep one result per target; nothing a rack is named can forge a command, a tag or a cell."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from clusterforge.cli.main import app
from clusterforge.formats import render
from clusterforge.formats.text import print_verdict
from clusterforge.policies import Finding, Verdict
from clusterforge.policies.findings import RackRef
from tests.conftest import EXAMPLES
from tests.test_output_formats import NASTY, _commands


def _rack(row: int, rack: int) -> str:
    return f"r{row:04d}k{rack:02d}"


def _warning(name: str, kw: float = 34.0, line: int = 25, row: str = "r0000") -> Finding:
    return Finding("PWR-002", "warning", f"site.rows[0].racks[{line}]",
                   f"rack {name} draws {kw:.1f} kW, 99% of what side A alone can carry (34.5 kW)",
                   "little headroom after a feed loss", kw, 34.5, "kW", "hall.yaml", line, where=RackRef(row, name))


def _hall(racks: int = 100) -> list[Finding]:
    """`racks` identical-cause PWR-002 warnings: 20 racks a row, r0000k00 … r0004k19 for 100."""
    return [_warning(_rack(i // 20, i % 20), line=25 + i, row=f"r{i // 20:04d}") for i in range(racks)]


def _error(line: int = 88_044, message: str = "100000 endpoints exceed a three-tier fat tree") -> Finding:
    return Finding("NET-001", "error", "fabric", message, "use a higher-radix switch", 100_000, 65_536, "",
                   "hall.yaml", line)


def _verdict(*findings: Finding) -> Verdict:
    return Verdict(tuple(findings), (), "error", ("NET-001", "PWR-002"))


def _text(v: Verdict, width: int = 150) -> list[str]:
    console = Console(record=True, width=width, file=io.StringIO())
    print_verdict(v, console, 1)
    return console.export_text().splitlines()


def test_identical_cause_on_100_racks_is_one_text_line_with_a_hostlist() -> None:
    lines = _text(_verdict(*_hall(100)))
    rule_lines = [line for line in lines if "PWR-002" in line]
    assert len(rule_lines) == 1, lines
    [line] = rule_lines
    assert line.startswith("WARNING PWR-002 ×100 racks r0000k[00-19],r0001k[00-19]")
    assert "(+" in line and "more)" in line  # cut to a readable length, saying how many it left out
    assert "each rack draws 34.0 kW, 99% of what side A alone can carry (34.5 kW)" in line
    assert len(lines) == 3  # the group, its hint, the summary


def test_a_hostlist_too_long_for_a_line_says_how_many_it_left_out() -> None:
    from clusterforge.core.hostlist import count
    from clusterforge.formats.grouping import group

    g = group(_verdict(*_hall(4_000)))[0]
    targets = g.targets()
    assert len(targets) < 100
    shown = targets.removeprefix("racks ").split(",…(+")[0]
    assert targets.endswith(f"(+{4_000 - count(shown):,} more)")


def test_findings_with_other_figures_never_share_a_line() -> None:
    findings = [*_hall(10), _warning("r0009k00", kw=32.3), _warning("r0009k01", kw=32.3)]
    lines = [line for line in _text(_verdict(*findings)) if "PWR-002" in line]
    assert len(lines) == 2
    assert "×10 racks" in lines[0] and "34.0 kW" in lines[0]
    assert "×2 racks r0009k[00-01]" in lines[1] and "32.3 kW" in lines[1]


def test_the_name_is_taken_out_only_where_it_stands_alone() -> None:
    from clusterforge.formats.grouping import without_name

    assert without_name("rack r1 of rack r10 in rack r1-b, rack r1.", "rack", "r1") == (
        "rack {rack} of rack r10 in rack r1-b, rack {rack}.")
    assert without_name("see rack r1.5", "rack", "r1") == "see rack r1.5"
    # a row named `a`: the article is not its name
    assert without_name("row a: little headroom after a feed loss", "row", "a") == (
        "row {row}: little headroom after a feed loss")


def test_a_group_reads_as_each_target_and_keeps_the_articles() -> None:
    from clusterforge.formats.grouping import group

    findings = [Finding("PWR-002", "warning", f"site.rows[0].racks[{i}]", f"rack r{i} in row a draws 34.0 kW",
                        "little headroom after a feed loss", 34.0, 34.5, "kW", "hall.yaml", 25 + i,
                        where=RackRef("a", f"r{i}")) for i in range(3)]
    [g] = group(_verdict(*findings))
    assert (g.message, g.hint) == ("each rack in its row draws 34.0 kW", "little headroom after a feed loss")


def test_an_error_is_printed_before_warnings() -> None:
    v = _verdict(*_hall(100), _error())  # the engine reported it last, on the file's last line
    lines = _text(v)
    assert lines[0].startswith("ERROR   NET-001 ")
    assert lines[-1].startswith("FAIL: 1 error, 100 warnings")
    commands = _commands(render(v, "github"))
    assert [name for name, _, _ in commands][:2] == ["error", "warning"]
    md = render(v, "markdown").splitlines()
    rows = [line for line in md if line.startswith("| error") or line.startswith("| warning")]
    assert rows[0].startswith("| error | `NET-001` | 1 |") and rows[1].startswith("| warning | `PWR-002` | 100 |")


def test_github_emits_at_most_ten_annotations_per_level_most_severe_first() -> None:
    errors = [_error(line=i, message=f"fault {i} of a kind") for i in range(30)]
    warnings = [_warning(_rack(0, i), kw=20 + i) for i in range(30)]  # each its own figure: 30 groups
    out = render(_verdict(*warnings, *errors), "github")
    commands = _commands(out)
    names = [name for name, _, _ in commands]
    assert names.count("error") == 10 and names.count("warning") == 10
    assert names[:10] == ["error"] * 10 and names[10:20] == ["warning"] * 10
    assert names.count("notice") == 1
    _, _, note = commands[-1]
    assert "40 more groups" in note
    assert out.splitlines()[-1] == "clusterforge check failed: 30 errors, 30 warnings, 0 waived"


def test_github_annotation_carries_the_group_count() -> None:
    [(name, props, message)] = _commands(render(_verdict(*_hall(100)), "github"))
    assert (name, props["title"], props["line"], props["file"]) == ("warning", "PWR-002 ×100", "25", "hall.yaml")
    assert message.startswith("racks r0000k[00-19],") and "each rack draws 34.0 kW" in message


def _example(tmp_path: Path) -> Path:
    """The DGX example (it passes, with PWR-003 warning once)."""
    path = tmp_path / "hall.yaml"
    path.write_bytes((EXAMPLES / "onprem-dgx-h100.yaml").read_bytes())
    return path


def test_step_summary_is_written_when_the_variable_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", "github", "--", str(_example(tmp_path))])
    assert result.exit_code == 0, result.output
    text = summary.read_text()
    assert text.startswith("earlier step\n### clusterforge check: PASS\n")  # appended, the earlier kept
    assert "| warning | `PWR-003` | 1 | `cluster` | `hall.yaml:" in text


def test_no_step_summary_without_the_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", "github", "--", str(_example(tmp_path))])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hall.yaml"]


def test_an_unwritable_step_summary_keeps_the_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing" / "summary.md"))
    result = CliRunner().invoke(app, ["check", "-f", "github", "--", str(_example(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "GITHUB_STEP_SUMMARY: not written" in result.stderr
    assert "::warning " in result.stdout


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_keep_one_result_per_target(fmt: str) -> None:
    out = render(_verdict(*_hall(100), _error()), fmt)
    data = json.loads(out)
    results = data["findings"] if fmt == "json" else data["runs"][0]["results"]
    assert len(results) == 101
    if fmt == "json":
        assert {f["message"] for f in results if f["id"] == "PWR-002"} == {
            f"rack {_rack(i // 20, i % 20)} draws 34.0 kW, 99% of what side A alone can carry (34.5 kW)"
            for i in range(100)}


HOSTILE_NAMES = [*NASTY, "<img src=x onerror=alert(1)>", "| forged | cell |", "**bold** _em_ ~~s~~",
                 "[link](http://evil.example) ![i](http://e/x.png)", "`code` ``two``", "@someone #1 www.evil.example",
                 "$x$ &lt; &#60; \\| \\", "<script>alert(1)</script>", "<!-- x -->"]


def _cells(row: str) -> list[str]:
    """A GitHub table row's cells: split on `|` that no backslash escapes."""
    return re.split(r"(?<!\\)\|", row.strip().strip("|"))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_malicious_rack_name_cannot_inject_a_command_markdown_or_html(name: str) -> None:
    findings = [_warning(name), _warning(name + "0", line=26), _error()]
    v = _verdict(*findings)
    out = render(v, "github")
    assert "\r" not in out
    for line in out.split("\n"):
        assert re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", line) is None, line
        command = re.match(r"::(error|warning|notice) ", line)  # the runner reads `##[` only outside one
        assert (command is not None) or ("##[" not in line and not line.lstrip().startswith("::")), line
    assert [(n, p["title"]) for n, p, _ in _commands(out)] == [("error", "NET-001"), ("warning", "PWR-002 ×2")]
    md = render(v, "markdown")
    for text in (md, render(v, "markdown").replace("<br>", "")):
        assert "##[" not in text
    body = md.replace("<br>→", "")
    table = [line for line in body.splitlines() if line.startswith("|")]
    assert all(len(_cells(row)) == 7 for row in table), table
    for row in table[2:]:
        *_, targets, _where, _use, finding = _cells(row)
        assert re.search(r"[<>*_\[\]!~@$]", finding) is None, finding  # only as character references
        assert targets.strip().startswith("`") and targets.strip().endswith("`")
        fence = re.match(r"\s*(`+)", targets)
        assert fence is not None and fence.group(1) not in targets.strip()[len(fence.group(1)):-len(fence.group(1))]
    for line in body.splitlines():
        assert not line.lstrip().startswith("::")
    text = "\n".join(_text(v, width=400))
    assert "##[" not in text and not any(line.lstrip().startswith("::") for line in text.splitlines())


def test_markdown_is_a_check_format(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["check", "-f", "markdown", "--", str(_example(tmp_path))])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("### clusterforge check: PASS\n")
