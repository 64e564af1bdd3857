"""The machine formats (JSON, SARIF, JUnit) name files relative to where they ran, never absolutely, and write
numbers rounded; SARIF is valid against the SARIF 2.1.0 schema, with each rule linked to its section of
docs/policies.md when the project names its repository."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from clusterforge.formats import render, rule_links
from clusterforge.formats.numbers import tidy, tidy_text
from clusterforge.policies import Finding, Verdict
from tests.conftest import EXAMPLES, ROOT, floats

SCHEMA = json.loads((Path(__file__).parent / "fixtures" / "sarif" / "sarif-schema-2.1.0.json").read_text())
NOISE = re.compile(r"\d\.\d{7,}")  # a float written with its binary noise: 15.299999999999999




@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A failing blueprint in a folder beside the working directory (an include, a checkout's sibling)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "designs").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    bad = tmp_path / "designs" / "bad.yaml"  # 16 A feeds: the power rules fail, with fractional loads
    bad.write_text((EXAMPLES / "onprem-dgx-h100.yaml").read_text().replace("amps: 60", "amps: 16"))
    return bad


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_machine_formats_never_name_an_absolute_path(cli, elsewhere: Path, fmt: str) -> None:
    result = cli("check", elsewhere, "--format", fmt)
    assert result.exit_code == 1, result.output
    assert str(elsewhere.parent.parent) not in result.stdout and "file://" not in result.stdout
    assert "../designs/bad.yaml" in result.stdout


def test_sarif_locations_resolve_against_srcroot(cli, elsewhere: Path) -> None:
    log = json.loads(cli("check", elsewhere, "--format", "sarif").stdout)
    run = log["runs"][0]
    assert "%SRCROOT%" in run["originalUriBaseIds"]
    assert "uri" not in run["originalUriBaseIds"]["%SRCROOT%"]  # where it ran is not the report's business
    locations = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]
    assert locations and all(loc == {"uri": "../designs/bad.yaml", "uriBaseId": "%SRCROOT%"} for loc in locations)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_formats_write_rounded_numbers(cli, elsewhere: Path, fmt: str) -> None:
    out = cli("check", elsewhere, "--format", fmt).stdout
    numbers = floats(json.loads(out))
    assert numbers and all(tidy(n) == n for n in numbers), [n for n in numbers if tidy(n) != n]
    assert not NOISE.search(out), NOISE.search(out)


def test_junit_writes_rounded_numbers(cli, elsewhere: Path) -> None:
    out = cli("check", elsewhere, "--format", "junit").stdout
    ET.fromstring(out.encode())
    assert not NOISE.search(out), NOISE.search(out)


def noisy_verdict(file: str) -> Verdict:
    finding = Finding("PWR-001", "error", "site.rows[0].racks[0].feeds[0]",
                      "feed draws 15.299999999999999 kW of 9.200653889805876 kW", "use 0.30000000000000004 of it",
                      measured=15.299999999999999, limit=9.200653889805876, unit="kW", file=file, line=3)
    return Verdict((finding,), (), "error", ("PWR-001",))


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_numbers_in_messages_and_properties_are_rounded(fmt: str) -> None:
    out = render(noisy_verdict("/somewhere/else/site.yaml"), fmt)
    assert not NOISE.search(out), NOISE.search(out)
    assert "15.3 kW of 9.201 kW" in out and "use 0.3 of it" in out
    assert not re.search(r"(?<!\.\.)/somewhere", out)  # named from the working directory, climbing with `..`


def test_tidy_keeps_small_figures_and_integers() -> None:
    assert tidy(0.1 + 0.2) == 0.3 and tidy(173.99999999999997) == 174.0 and tidy(0.000123456) == 0.0001235
    assert tidy(12) == 12 and tidy(float("inf")) == float("inf") and tidy(-2.0000000001) == -2.0
    assert tidy_text("v595.71.05 at 1.23456789 and 10.0.0.1") == "v595.71.05 at 1.235 and 10.0.0.1"


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(cli, elsewhere: Path) -> None:
    log = json.loads(cli("check", elsewhere, "--format", "sarif").stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads(render(noisy_verdict("x.yaml"), "sarif")))


def test_sarif_with_a_repository_url_validates_and_links_every_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rule_links, "project_urls", lambda: {"Repository": "https://github.com/example/cf/"})
    log = json.loads(render(noisy_verdict("x.yaml"), "sarif"))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    policies = (ROOT / "docs" / "policies.md").read_text()
    for rule in rules:
        if rule["id"] == "INPUT":
            continue
        base, _, anchor = rule["helpUri"].partition("#")
        assert base == "https://github.com/example/cf/blob/HEAD/docs/policies.md", rule["helpUri"]
        assert f'<a id="{anchor}"></a>{rule["id"]}:' in policies, rule["id"]  # the section exists


@pytest.mark.parametrize("urls", [{}, {"Homepage": "not a url"}, {"Repository": "https://gitlab.com/x/cf"}])
def test_sarif_without_a_github_repository_omits_help_uri(monkeypatch: pytest.MonkeyPatch, urls: dict[str, str]
                                                         ) -> None:
    """GitHub code scanning needs an absolute helpUri: with no repository to point at, none is written."""
    monkeypatch.setattr(rule_links, "project_urls", lambda: urls)
    log = json.loads(render(noisy_verdict("x.yaml"), "sarif"))
    assert all("helpUri" not in rule for rule in log["runs"][0]["tool"]["driver"]["rules"])
