"""Text output fits the terminal it lands on: no line of `catalog`, `rules`, `plan`, `check` or `new --params`
is wider than the width (COLUMNS, the terminal's, or 100 in a pipe), and `check` never cuts a `file:line`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.cells import cell_len

from clusterforge.blueprint.templating import discover
from clusterforge.cli import terminal
from clusterforge.cli.main import app
from tests.conftest import EXAMPLES, ROOT

WIDTHS = (60, 80, 120, 200)

COMMANDS = [
    ("catalog", "list"),
    ("catalog", "list", "--kind", "switch"),
    ("catalog", "show", "dgx-h100"),          # notes below the table
    ("catalog", "show", "gb200-nvl72"),        # nested figures: a rack's hosts and their GPUs
    ("catalog", "show", "p5.48xlarge"),
    ("catalog", "software"),
    ("rules",),
    ("rules", "show", "PWR-002"),              # the settings list
    ("rules", "show", "NET-007"),
    *(("plan", str(EXAMPLES / name)) for name in ("onprem-dgx-h100-hall.yaml", "onprem-gb200-nvl72-row.yaml",
                                                  "aws-p5.yaml", "hybrid-burst.yaml")),
    *(("new", name, "--params") for name in discover(None)),
]


def run(*args: str, columns: int | None) -> Result:
    env = {"COLUMNS": None if columns is None else str(columns)}
    return CliRunner(env=env).invoke(app, list(args), catch_exceptions=False)


def too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > width]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_line_wider_than_the_terminal(args: tuple[str, ...], width: int) -> None:
    result = run(*args, columns=width)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    assert too_wide(result.stdout, width) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_narrow_tables_keep_every_cell(width: int) -> None:
    """A table that does not fit is stacked or wrapped, never cut with `…`: every key and every description word
    is still there."""
    text = run("catalog", "list", columns=width).stdout
    entries = json.loads(run("catalog", "list", "-f", "json", columns=width).stdout)
    words = set(text.split())
    assert "…" not in text
    for entry in entries:
        assert entry["key"] in text, entry["key"]
        assert set(entry["description"].split()) <= words, entry["key"]


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """examples/onprem-dgx-h100.yaml with rack a02 on 208 V feeds: PWR-002 fails, PWR-003 warns; named relative
    to the working directory, as the report names it."""
    text = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    broken = text.replace("{name: a02-a, side: A, voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, "
                          "voltage: 415", "{name: a02-a, side: A, voltage: 208, amps: 60, phase: 3}, {name: a02-b, "
                          "side: B, voltage: 208")
    assert broken != text
    (tmp_path / "hall-with-weak-feeds.yaml").write_text(broken)
    monkeypatch.chdir(tmp_path)
    return Path("hall-with-weak-feeds.yaml")


@pytest.mark.parametrize("width", WIDTHS)
def test_check_fits_and_keeps_file_line_whole(broken: Path, tmp_path: Path, width: int) -> None:
    result = run("check", str(broken), "--show-info", columns=width)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert too_wide(result.stdout, width) == []
    findings = json.loads(run("check", str(broken), "-f", "json", columns=width).stdout)["findings"]
    assert {f["level"] for f in findings} >= {"error", "warning"}
    for finding in findings:
        where = f"{finding['file']}:{finding['line']}"
        assert any(where in line for line in lines), (where, lines)
    # the same words as the unbroken report file: wrapping moves text, it never drops any
    report = tmp_path / "report.txt"
    assert run("check", str(broken), "--show-info", "-o", str(report), columns=width).exit_code == 1
    assert result.stdout.split() == report.read_text().split()
    if width <= 80:
        assert len(lines) > len(report.read_text().splitlines())  # it did wrap, under an indent
        assert all(line.startswith(("ERROR", "WARNING", "INFO", "FAIL", "PASS", " ")) for line in lines)


def test_report_file_keeps_one_line_per_finding(broken: Path, tmp_path: Path) -> None:
    """A report written with -o has no screen: one line per finding and cause, whatever COLUMNS says."""
    report = tmp_path / "report.txt"
    run("check", str(broken), "-o", str(report), columns=60)
    assert [line.split()[0] for line in report.read_text().splitlines()] == ["ERROR", "→", "WARNING", "→", "FAIL:"]


def test_width_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS first, then the terminal's own width, then the fixed pipe width; never below the floor."""
    monkeypatch.setenv("COLUMNS", "87")
    assert terminal.width() == 87
    monkeypatch.setenv("COLUMNS", "12")
    assert terminal.width() == terminal.MIN_WIDTH
    monkeypatch.setenv("COLUMNS", "wide")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert terminal.width() == terminal.PIPE_WIDTH
    monkeypatch.delenv("COLUMNS")
    assert terminal.width() == terminal.PIPE_WIDTH
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("shutil.get_terminal_size", lambda fallback: os.terminal_size((132, 40)))
    assert terminal.width() == 132
    assert terminal.console().width == 132
    monkeypatch.setenv("COLUMNS", "90")  # on a terminal too
    assert terminal.width() == 90


def test_pipe_without_columns_gets_the_fixed_width() -> None:
    """In a CI log (stdout a pipe, COLUMNS unset) the output is the same on every runner: 100 columns."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    exe = Path(sys.executable).parent / "clusterforge"
    piped = subprocess.run([str(exe), "catalog", "list"], env=env, cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout
    assert terminal.PIPE_WIDTH == 100
    assert max(cell_len(line) for line in piped.splitlines()) == terminal.PIPE_WIDTH
    assert piped == run("catalog", "list", columns=terminal.PIPE_WIDTH).stdout
    assert run("catalog", "list", columns=None).stdout == piped


def test_wrap_never_cuts_a_location() -> None:
    line = "ERROR   NET-001 rack r01 (a/rather/deeply/nested/blueprint.yaml:1234; 99%): a message that wraps"
    pieces = terminal.wrap(line, 40, 8)
    assert any("a/rather/deeply/nested/blueprint.yaml:1234;" in piece for piece in pieces)
    assert all(piece.startswith(" " * 8) for piece in pieces[1:])
    assert " ".join(line.split()) == " ".join(" ".join(pieces).split())
    long_word = "x" * 100
    assert all(len(piece) <= 40 for piece in terminal.wrap(f"inputs: {long_word}", 40, 12))


@pytest.mark.parametrize("width", [80, 100])
def test_a_share_is_never_split_from_its_percent_sign(width: int) -> None:
    """`(60 %)` reads as one figure: a column is at least as wide as it, so no cell line ends in `(60`."""
    out = run("plan", str(EXAMPLES / "onprem-dgx-h100-hall.yaml"), columns=width).output
    cells = [cell.strip() for line in out.splitlines() for cell in line.split("│")]
    assert "(77 %)" in cells and not [c for c in cells if c.startswith("(") and c[1:].isdigit()]
