"""`provision --limit`: the help's examples match hosts of a rendered inventory (names as render writes them),
and a limit that matches nothing is bad input (exit 2) with Ansible's own reason, found before any host is
contacted. `--list-hosts` shows what a limit selects without contacting any host."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app

pytest.importorskip("ansible_runner")


@pytest.fixture
def rendered(rendered_onprem: Path) -> Path:
    return rendered_onprem


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path / "cache"))


def _help_examples() -> list[str]:
    text = " ".join(CliRunner().invoke(app, ["provision", "--help"]).output.split())
    limit = text[text.index("--limit"):text.index("--check")]
    return re.findall(r"'([^']+)'", limit)


def test_the_help_gives_examples() -> None:
    assert len(_help_examples()) >= 3


def test_each_limit_the_help_shows_matches_rendered_hosts(rendered: Path) -> None:
    names = set(re.findall(r"^        (gpu-\d{4}):", (rendered / "inventory" / "hosts.yml").read_text(), re.M))
    for pattern in _help_examples():
        result = CliRunner().invoke(app, ["provision", str(rendered), "--list-hosts", "--limit", pattern])
        assert result.exit_code == 0, (pattern, result.output)
        listed = result.output.split()
        assert listed and set(listed) <= names, (pattern, result.output)


def test_list_hosts_without_a_limit_lists_every_host(rendered: Path) -> None:
    result = CliRunner().invoke(app, ["provision", str(rendered), "--list-hosts"])
    assert result.exit_code == 0, result.output
    assert result.output.split()[:3] == ["gpu-0001", "gpu-0002", "gpu-0003"]


@pytest.mark.parametrize("extra", [["--list-hosts"], ["--check"]])
def test_a_limit_matching_nothing_is_exit_2_with_ansibles_reason(rendered: Path, extra: list[str]) -> None:
    """A SLURM-style range is not an Ansible pattern: Ansible reads `[01:16]` as a subscript of `gpu-00`."""
    result = CliRunner().invoke(app, ["provision", str(rendered), "--limit", "gpu-00[01:16]", *extra])
    assert result.exit_code == 2, result.output
    assert "hosts.yml: --limit: 'gpu-00[01:16]' matches no host" in result.output
    assert "Could not match supplied host pattern, ignoring: gpu-00" in result.output


def test_a_limit_matching_only_some_names_says_which_part_matched_nothing(rendered: Path) -> None:
    result = CliRunner().invoke(app, ["provision", str(rendered), "--list-hosts", "--limit", "gpu-0001,gpu-9999"])
    assert result.exit_code == 0, result.output
    assert "Could not match supplied host pattern, ignoring: gpu-9999" in result.output
    assert "gpu-0001" in result.output.split()
