"""Limits: the defaults, raising one by its variable, a bad variable, and the docs that list them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge import limits
from clusterforge.errors import ClusterforgeError

DOC = Path(__file__).resolve().parents[1] / "docs" / "security.md"


def test_default_and_raised_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLUSTERFORGE_MAX_NODES", raising=False)
    assert limits.NODES.value == 100_000
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "400000")
    assert limits.NODES.value == 400_000
    problem = limits.NODES.problem(500_000, "big.yaml", 7, "pools")
    assert "500,000 nodes" in problem.message and "400,000" in problem.message
    assert "CLUSTERFORGE_MAX_NODES" in problem.hint
    assert problem.render().startswith("big.yaml:7: pools: ")


@pytest.mark.parametrize("raw", ["lots", "-5", "0", "1e9"])
def test_a_bad_variable_is_an_input_problem(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("CLUSTERFORGE_MAX_RACKS", raw)
    with pytest.raises(ClusterforgeError, match="CLUSTERFORGE_MAX_RACKS"):
        _ = limits.RACKS.value


def test_every_limit_is_documented_with_its_variable() -> None:
    text = DOC.read_text()
    for limit in limits.ALL:
        assert f"`{limit.variable}`" in text, f"docs/security.md does not list {limit.variable}"
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`CLUSTERFORGE_MAX_" in line]
    assert len(rows) == len(limits.ALL), "docs/security.md lists a limit that does not exist"
