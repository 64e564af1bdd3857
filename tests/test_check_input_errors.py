"""Invalid input reaches CI as a result: on exit 2 every machine format says what is wrong and where (SARIF a
result with rule INPUT, JUnit a failing test case, JSON findings, GitHub an `::error`), written to `-o`
atomically like any report; the exit code stays 2."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner, Result

from clusterforge.cli.main import app
from tests.conftest import EXAMPLES

UNKNOWN_KEY = "apiVersion: clusterforge/v1\nkind: Cluster\nname: x\ntarget: onprem\nrackz: 3\n"
BAD_YAML = "apiVersion: clusterforge/v1\nkind: Cluster\nname: [x\n"
MISSING_INCLUDE = ("apiVersion: clusterforge/v1\nkind: Cluster\nname: x\ntarget: onprem\n"
                   "site: !include nope.yaml\npools: [{name: gpu, hardware: dgx-h100, count: 1}]\n")


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, *args: str) -> Result:
    (tmp_path / "bad.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(app, ["check", *args, "--", "bad.yaml"], catch_exceptions=False)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_json_lists_input_errors_as_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _check(tmp_path, monkeypatch, UNKNOWN_KEY, "-f", "json")
    assert result.exit_code == 2
    assert "bad.yaml:5: rackz: unknown key 'rackz'" in result.stderr  # still said for people
    data = json.loads(result.stdout)
    assert data["verdict"] == "fail" and data["summary"]["error"] >= 1  # the contract's keys, as always
    found = {(f["id"], f["level"], f["file"], f["line"], f["path"]) for f in data["findings"]}
    assert ("INPUT", "error", "bad.yaml", 5, "rackz") in found
    assert all(f["id"] == "INPUT" for f in data["findings"]) and data["waived"] == []


def _sarif_is_valid(log: dict[str, object]) -> None:
    """What tests/test_check_cli.py and test_output_formats.py hold a SARIF log to: 2.1.0, every result's rule in
    the driver's rules (ruleIndex pointing at it), a relative URI, a start line, a fingerprint."""
    assert log["version"] == "2.1.0" and str(log["$schema"]).endswith("sarif-2.1.0.json")
    [run] = log["runs"]  # type: ignore[attr-defined]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["region"]["startLine"] >= 1 and not location["artifactLocation"]["uri"].startswith("/")
        assert result["partialFingerprints"]["clusterforgeFinding/v1"]


@pytest.mark.parametrize(("text", "line"), [(UNKNOWN_KEY, 5), (BAD_YAML, 4), (MISSING_INCLUDE, 5)])
def test_sarif_has_an_input_result_at_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                               line: int) -> None:
    result = _check(tmp_path, monkeypatch, text, "-f", "sarif", "-o", "check.sarif")
    assert result.exit_code == 2
    log = json.loads((tmp_path / "check.sarif").read_text())
    _sarif_is_valid(log)
    results = log["runs"][0]["results"]
    assert results and {r["ruleId"] for r in results} == {"INPUT"}
    assert all(r["level"] == "error" for r in results)
    lines = {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert line in lines and uris == {"bad.yaml"}


def test_junit_has_a_failing_testcase(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _check(tmp_path, monkeypatch, UNKNOWN_KEY, "-f", "junit", "-o", "junit.xml")
    assert result.exit_code == 2
    root = ET.fromstring((tmp_path / "junit.xml").read_bytes())
    failed = [c for c in root.findall(".//testcase") if c.find("failure") is not None]
    assert failed and int(root.get("failures", "0")) == len(failed)
    assert any(c.get("name", "").startswith("INPUT") and c.get("line") == "5" for c in failed)
    assert any("unknown key 'rackz'" in (c.find("failure").get("message") or "") for c in failed)  # type: ignore[union-attr]


def test_github_annotates_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _check(tmp_path, monkeypatch, BAD_YAML, "-f", "github")
    assert result.exit_code == 2
    assert f"::error file=bad.yaml,line={_line(BAD_YAML, 'name: [x') + 1},title=INPUT::" in result.stdout


def test_input_errors_of_several_files_all_reach_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "good.yaml").write_bytes((EXAMPLES / "onprem-dgx-h100.yaml").read_bytes())
    (tmp_path / "other.yaml").write_text(UNKNOWN_KEY)
    result = _check(tmp_path, monkeypatch, BAD_YAML, "-f", "json", "good.yaml", "other.yaml")
    assert result.exit_code == 2
    findings = json.loads(result.stdout)["findings"]
    assert {f["file"] for f in findings if f["id"] == "INPUT"} == {"bad.yaml", "other.yaml"}
    assert {f["file"] for f in findings if f["id"] != "INPUT"} == {"good.yaml"}  # judged all the same


def test_a_bad_waivers_file_is_a_result_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "good.yaml").write_bytes((EXAMPLES / "onprem-dgx-h100.yaml").read_bytes())
    (tmp_path / "waivers.yaml").write_text("waivers: [\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", "sarif", "--waivers", "waivers.yaml", "-o", "r.sarif",
                                      "--", "good.yaml"])
    assert result.exit_code == 2
    log = json.loads((tmp_path / "r.sarif").read_text())
    _sarif_is_valid(log)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]} == {"waivers.yaml"}


def test_an_output_that_is_an_input_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _check(tmp_path, monkeypatch, UNKNOWN_KEY, "-f", "json", "-o", "bad.yaml")
    assert result.exit_code == 2
    assert (tmp_path / "bad.yaml").read_text() == UNKNOWN_KEY


def test_text_on_a_terminal_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _check(tmp_path, monkeypatch, UNKNOWN_KEY)
    assert result.exit_code == 2 and result.stdout == ""
    assert "bad.yaml:5: rackz: unknown key 'rackz'" in result.stderr  # where it always was


def _one_unreadable_one_failing(tmp_path: Path) -> None:
    """`invalid.yaml` that cannot be parsed and `bad.yaml` that loads but fails PWR-002."""
    (tmp_path / "invalid.yaml").write_text(BAD_YAML)
    hall = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    broken = hall.replace("voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 415",
                          "voltage: 208, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 208")
    assert broken != hall
    (tmp_path / "bad.yaml").write_text(broken)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_an_unreadable_file_hides_no_other_files_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         fmt: str) -> None:
    """Exit 2 still wins, and the report holds the YAML error and every finding of the file that could be read."""
    _one_unreadable_one_failing(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", fmt, "--", "invalid.yaml", "bad.yaml"], catch_exceptions=False)
    assert result.exit_code == 2
    assert "invalid.yaml:4: invalid YAML" in result.stderr
    assert "PWR-002" in result.stdout and "INPUT" in result.stdout, result.stdout
    assert "bad.yaml" in result.stdout
    if fmt == "json":
        ids = {f["id"] for f in json.loads(result.stdout)["findings"]}
        assert {"INPUT", "PWR-002"} <= ids
    if fmt == "junit":
        root = ET.fromstring(result.stdout)
        assert {c.get("classname") for c in root.iter("testcase") if c.get("name", "").startswith("INPUT")} == {
            "clusterforge.input"}


def test_a_refused_setting_hides_no_other_files_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blueprint the root-access gate refuses (exit 2) is left out; the other is judged in the same report."""
    _one_unreadable_one_failing(tmp_path)
    valid = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    (tmp_path / "invalid.yaml").write_text(valid.replace("slurm:\n", "slurm:\n  settings: {Prolog: /tmp/x.sh}\n", 1))
    assert "Prolog" in (tmp_path / "invalid.yaml").read_text()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "-f", "json", "--", "invalid.yaml", "bad.yaml"],
                                catch_exceptions=False)
    assert result.exit_code == 2, result.output
    findings = json.loads(result.stdout)["findings"]
    assert {(f["id"], f["file"]) for f in findings} >= {("INPUT", "invalid.yaml"), ("PWR-002", "bad.yaml")}


@pytest.mark.parametrize("text", [UNKNOWN_KEY, BAD_YAML, MISSING_INCLUDE])
def test_junit_files_an_input_error_under_the_input_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          text: str) -> None:
    """The class names what failed: the input, not the waivers (the class every unregistered id once fell into)."""
    result = _check(tmp_path, monkeypatch, text, "-f", "junit")
    assert result.exit_code == 2, result.output
    cases = list(ET.fromstring(result.stdout).iter("testcase"))
    assert cases and {c.get("classname") for c in cases} == {"clusterforge.input"}
    assert all(c.get("file") == "bad.yaml" for c in cases)


def test_junit_classes_of_the_ids_that_are_no_rule() -> None:
    from clusterforge.formats.junit import classname
    from clusterforge.policies.discovery import load_rules
    from clusterforge.policies.waivers import EXPIRED_ID, UNUSED_ID

    load_rules()
    assert classname("INPUT") == "clusterforge.input"
    assert classname(UNUSED_ID) == classname(EXPIRED_ID) == "clusterforge.waivers"
    assert classname("PWR-002") == "clusterforge.power"
    assert classname("XYZ-999") == "clusterforge.policy"


def test_junit_names_no_file_for_a_problem_of_no_file() -> None:
    """A problem of no file (an option's value) is a failing case without a made-up `<input>:0:` location."""
    from clusterforge.core.errors import Problem
    from clusterforge.formats import junit
    from clusterforge.formats.input_errors import verdict_of

    root = ET.fromstring(junit.render(verdict_of([Problem("no such template", path="--template")])))
    [case] = root.iter("testcase")
    assert case.get("file") is None and case.get("line") is None
    failure = case.find("failure")
    assert failure is not None and failure.text == "no such template"
