"""Every check format stays what its reader parses, whatever strings the input carried: JUnit is XML 1.0,
GitHub workflow commands cannot be forged, SARIF and JSON are valid JSON in UTF-8, text keeps each value on
its own line. The strings come straight in as findings (the loaders may refuse some first: this is the last
line of defence), and through the CLI as file names, which no loader constrains."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from xml.dom import minidom
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner
from rich.console import Console

from clusterforge.cli.main import app
from clusterforge.formats import render
from clusterforge.formats.escape import log_line
from clusterforge.formats.text import print_verdict
from clusterforge.policies import Finding, Verdict
from clusterforge.policies.findings import RackRef
from tests.conftest import EXAMPLES

# What a hostile blueprint, waiver or file name might carry.
NASTY = [
    "line\n::error file=forged.py,line=1::forged",
    "cr\r::error file=forged.py::forged",
    "crlf\r\n::warning::forged",
    "controls \x00\x01\x08\x0b\x0c\x1b[31mred\x7f\x85 and \u2028 \u2029",
    "percent %0A %25 :: , = ]]> <&\"' [bold]markup[/bold] [link=http://x]l[/link]",
    "lone surrogates \ud800 \udcff and non-characters \ufffe \uffff",
    "%",
    "old command ##[error]forged ##[warning]x",
]


def verdict(text: str) -> Verdict:
    """Findings and a waived finding with `text` in every free-text field."""
    error = Finding("PWR-002", "error", f"site.rows[0].{text}", f"message {text}", f"hint {text}", 1.0, 2.0, "kW",
                    f"dir/{text}.yaml", 7, where=RackRef(text, text))
    waived = Finding("PWR-003", "warning", text, f"waived {text}", "", None, None, "", f"{text}.yaml", 3,
                     waiver={"rule": "PWR-003", "target": text, "reason": f"reason {text}", "expires": "2030-01-01",
                             "approver": text, "file": f"{text}.yaml", "line": "2"})
    return Verdict((error,), (waived,), "error", ("PWR-002", "PWR-003"))


def _xml_chars_ok(text: str) -> bool:
    return re.search(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", text) is None


@pytest.mark.parametrize("text", NASTY)
def test_junit_is_xml_every_parser_reads(text: str) -> None:
    out = render(verdict(text), "junit")
    assert _xml_chars_ok(out)
    out.encode("utf-8")
    root = ET.fromstring(out.encode("utf-8"))  # expat
    minidom.parseString(out.encode("utf-8"))
    cases = root.findall(".//testcase")
    assert len(cases) == 2
    failure = root.find(".//failure")
    skipped = root.find(".//skipped")
    assert failure is not None and skipped is not None
    for value in [*(v for c in cases for v in c.attrib.values()), failure.get("message", ""), failure.text or "",
                  skipped.get("message", ""), skipped.text or ""]:
        assert "\n" not in value and "\r" not in value  # one line each: no forged line in a CI log either
    assert "reason" in skipped.get("message", "")


def _commands(out: str) -> list[tuple[str, dict[str, str], str]]:
    """Parse workflow commands the way the Actions runner does: `::name k=v,k=v::message`, then unescape."""
    def unescape(value: str, prop: bool) -> str:
        value = value.replace("%0D", "\r").replace("%0A", "\n")
        if prop:
            value = value.replace("%3A", ":").replace("%2C", ",")
        return value.replace("%25", "%")

    found = []
    for line in out.split("\n"):
        if not line.startswith("::"):
            continue
        head, sep, message = line[2:].partition("::")
        assert sep, line
        name, _, props = head.partition(" ")
        pairs = dict(p.split("=", 1) for p in props.split(",")) if props else {}
        found.append((name, {k: unescape(v, True) for k, v in pairs.items()}, unescape(message, False)))
    return found


@pytest.mark.parametrize("text", NASTY)
def test_github_commands_cannot_be_forged(text: str) -> None:
    out = render(verdict(text), "github")
    assert "\r" not in out
    commands = _commands(out)
    assert [(name, props["title"], props["line"]) for name, props, _ in commands] == [
        ("error", "PWR-002", "7"), ("notice", "PWR-003 (waived)", "3")]
    shown = text.replace("\r", "").replace("\n", "")
    for _name, props, message in commands:
        assert set(props) == {"file", "title", "line"}
        if re.search(r"[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", shown) is None:
            assert props["file"] in (f"dir/{text}.yaml", f"{text}.yaml")  # the reader gets the name back
            assert text in message
    for line in out.splitlines():
        assert re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", line) is None, line


@pytest.mark.parametrize("fmt", ["json", "sarif"])
@pytest.mark.parametrize("text", NASTY)
def test_json_formats_are_valid_utf8_json(text: str, fmt: str) -> None:
    out = render(verdict(text), fmt)
    data = json.loads(out.encode("utf-8"))
    if fmt == "json":
        assert data["findings"][0]["file"].startswith("dir/")
        if re.search(r"[\ud800-\udfff]", text) is None:
            assert data["findings"][0]["message"] == f"message {text}"
            assert data["waived"][0]["waiver"]["reason"] == f"reason {text}"
    else:
        [error, waived] = data["runs"][0]["results"]
        uri = error["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert re.fullmatch(r"[A-Za-z0-9/%._~-]+", uri), uri  # a URI reference: everything else percent-encoded
        assert waived["suppressions"][0]["justification"].startswith("reason ")


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_machine_formats_never_hold_an_old_workflow_command(fmt: str) -> None:
    """The runner reads `##[` anywhere in a log line as a command, so a report printed to the log must not
    hold it: JSON writes the bracket as \\u005b, XML as &#91;, and a reader gets the text back."""
    text = "x ##[error]forged"
    out = render(verdict(text), fmt)
    assert "##[" not in out
    if fmt == "junit":
        assert f"message {text}" in ET.fromstring(out.encode("utf-8")).find(".//failure").get("message", "")
    else:
        assert f"message {text}" in json.dumps(json.loads(out), ensure_ascii=False)


@pytest.mark.parametrize("text", NASTY)
def test_text_keeps_every_value_on_its_own_line(text: str) -> None:
    console = Console(record=True, width=400, file=io.StringIO())
    print_verdict(verdict(text), console, 1, show_info=True)
    out = console.export_text()
    lines = out.splitlines()
    assert any(log_line(f"message {text}") in line for line in lines)  # whole, on one line, `##[` escaped
    for line in lines:
        assert re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]", line) is None, line
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    if "[bold]" in text:
        assert "[bold]markup[/bold]" in out  # shown as written, never read as rich markup


def _examples_named(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes((EXAMPLES / "onprem-dgx-h100.yaml").read_bytes())
    return path


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_file_names_with_newlines_and_bad_bytes_stay_in_their_format(tmp_path: Path, fmt: str) -> None:
    """File names come from the command line: a newline or a byte that is not UTF-8 is allowed there."""
    newline = _examples_named(tmp_path, "a\n::error file=forged.py,line=1::forged\x1b[31m.yaml")
    undecodable = _examples_named(tmp_path, "\udcff\udcfe.yaml")  # b"\xff\xfe.yaml" as Python names it
    result = CliRunner().invoke(app, ["check", str(newline), str(undecodable), "-f", fmt, "-o",
                                      str(tmp_path / "report.out")])
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "::error" not in result.output
    data = (tmp_path / "report.out").read_bytes()
    text = data.decode("utf-8")
    if fmt in ("json", "sarif"):
        json.loads(data)
    if fmt == "junit":
        ET.fromstring(data)
    for line in text.splitlines():
        assert not line.startswith("::error"), line
        assert re.search(r"[\x00-\x1f\x7f-\x9f]", line) is None, line


def _shared_site_failing(folder: Path) -> None:
    """The shared-site example with rack a02 overloaded by the two teams together: PWR-002 in the site file."""
    for name in ("site-dc1.yaml", "team-nlp.yaml", "team-vision.yaml"):
        (folder / name).write_bytes((EXAMPLES / "shared-site" / name).read_bytes())
    nlp = folder / "team-nlp.yaml"
    nlp.write_text(nlp.read_text().replace("{rack: a02, pool: gpu, count: 1}", "{rack: a02, pool: gpu, count: 2}")
                   .replace("count: 3, partition", "count: 4, partition"))


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_included_files_are_named_relative_to_the_working_directory(tmp_path: Path, fmt: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An included file is located by its absolute path; reports name it as GitHub and code scanning match it:
    relative to the working directory (the repository's root in CI), never with the runner's folder."""
    _shared_site_failing(tmp_path)
    (tmp_path / "waivers.yaml").write_text(WAIVE_COOLING)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "team-nlp.yaml", "team-vision.yaml", "-f", fmt, "-o", "report.out",
                                      "--waivers", str(tmp_path / "waivers.yaml")])  # an absolute name, as CI may
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("site-dc1.yaml: shared by team-nlp.yaml, team-vision.yaml:"), result.stderr
    assert str(tmp_path) not in result.stderr
    report = (tmp_path / "report.out").read_text()
    assert "site-dc1.yaml" in report
    assert str(tmp_path) not in report
    if fmt == "json":  # every file a finding or its waiver names, not only the first
        data = json.loads(report)
        assert {f["file"] for f in data["findings"] + data["waived"]} >= {"site-dc1.yaml", "team-nlp.yaml"}
        assert data["waived"][0]["waiver"]["file"] == "waivers.yaml"
        return
    expected = {"github": "::error file=site-dc1.yaml,", "sarif": '"uri": "site-dc1.yaml"',
                "junit": 'file="site-dc1.yaml"', "text": "(site-dc1.yaml:",
                "markdown": "| `site-dc1.yaml:"}[fmt]
    assert expected in report


WAIVE_COOLING = """waivers:
  - rule: CLG-001
    cluster: site:dc1
    target: site.rows[0].racks[1]
    reason: rear-door heat exchanger fitted in rack a02
    expires: 2099-01-01
    approver: facilities
"""


def test_sarif_suppression_names_the_waivers_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiver applies to one cluster only: code scanning's dismissal says which, next to the reason."""
    _shared_site_failing(tmp_path)
    (tmp_path / "waivers.yaml").write_text(WAIVE_COOLING)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "team-nlp.yaml", "team-vision.yaml", "-f", "sarif",
                                      "--waivers", "waivers.yaml"])
    assert result.exit_code == 1, result.output
    results = json.loads(result.stdout)["runs"][0]["results"]
    [suppressed] = [r for r in results if "suppressions" in r]
    [suppression] = suppressed["suppressions"]
    assert suppressed["ruleId"] == "CLG-001"
    assert "site:dc1" in suppression["justification"]
    assert "rear-door heat exchanger fitted in rack a02" in suppression["justification"]


def test_input_problems_in_included_files_are_named_relative(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _shared_site_failing(tmp_path)
    site = tmp_path / "site-dc1.yaml"
    site.write_text(site.read_text().replace("reserved_u: 2", "reserved_uu: 2"))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "team-vision.yaml", "-f", "github"])
    assert result.exit_code == 2
    assert result.stderr.startswith("site-dc1.yaml:") and str(tmp_path) not in result.stderr


@pytest.mark.parametrize("name", ["::warning file=x.yaml::forged", " ::error::forged", "\t::stop-commands::t",
                                  "\u3000::error::forged", "-::error::x", "a ##[error]forged"])
@pytest.mark.parametrize("fmt", ["github", "text"])
def test_input_problems_never_start_a_workflow_command(tmp_path: Path, name: str, fmt: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2 prints `file:line: path: message`; a file named like a workflow command must not make it one (the
    runner trims leading blanks and reads `::name::`, or `##[name]` anywhere in a line)."""
    (tmp_path / f"{name}.yaml").write_text("a: [\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", fmt, "--", f"{name}.yaml"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines, result.output
    for line in lines:
        assert not line.lstrip(" \t\u3000").startswith("::") and "##[" not in line, line
    if name.startswith("::"):
        assert lines[0].startswith(f"./{name}.yaml:2:")  # still the path of the file, for editors


def test_log_line_keeps_ordinary_lines() -> None:
    for line in ("cluster.yaml:9: pools[0].count: expected an integer", "/abs/x.yaml:1: m", "<input>: bad", "wrote x"):
        assert log_line(line) == line
    assert log_line("::x::y") == "./::x::y" and log_line("  ::x") == "./  ::x"
    assert log_line("a##[b]") == "a##\\x5b" + "b]"


def _forges_a_command(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.lstrip().startswith("::") or "##[" in line]


HOSTILE_CATALOG = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  site-gpu:
    kind: server
    description: 'a site server ##[error]forged'
    notes: '""" + "word " * 45 + """::error file=x::forged'
    max_power_kw: 5
    psus: {count: 2, required: 1}
    u_height: 4
    weight_kg: 60
    depth_mm: 800
    max_inlet_c: 30
    sources: {max_power_kw: measured, psus: spec, u_height: spec, weight_kg: scale, depth_mm: 'spec ##[warning]x',
              max_inlet_c: spec}
"""


@pytest.mark.parametrize("argv", [["catalog", "list"], ["catalog", "show", "site-gpu"]])
def test_catalog_text_never_prints_a_workflow_command(tmp_path: Path, argv: list[str]) -> None:
    """A site catalog's free text reaches table cells (`##[` is read anywhere in a line) and the notes, which a
    narrow wrap would otherwise start a line with."""
    (tmp_path / "site.yaml").write_text(HOSTILE_CATALOG)
    result = CliRunner().invoke(app, [*argv, "--catalog", str(tmp_path / "site.yaml")])
    assert result.exit_code == 0, result.output
    assert "##\\x5berror]forged" in result.stdout
    assert _forges_a_command(result.output) == []


def test_unknown_rule_id_is_not_a_workflow_command() -> None:
    result = CliRunner().invoke(app, ["rules", "show", "x ##[error]forged"])
    assert result.exit_code == 2
    assert "unknown rule" in result.stderr and _forges_a_command(result.output) == []


def test_check_help_lists_every_exit_code() -> None:
    result = CliRunner().invoke(app, ["check", "--help"])
    assert "3 internal error" in " ".join(result.output.split())
