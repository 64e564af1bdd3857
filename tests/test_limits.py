"""Limits: the defaults, raising one by its variable, a bad variable, and the docs that list them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError
from tests.hostile.cases_limits import SITE_CATALOG

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


_BLUEPRINT = """\
apiVersion: clusterforge/v1
kind: Cluster
name: tiny
target: onprem
pools:
  - {name: gpu, hardware: HARDWARE, count: COUNT, role: compute, partition: train}
slurm:
  partitions: [{name: train, pools: [gpu], default: true}]
"""


@pytest.mark.parametrize("count", ['"100001"', "100001.0", "1.00001e+5"])
def test_the_node_limit_counts_what_pydantic_reads(count: str) -> None:
    from clusterforge.blueprint.load import load_text

    with pytest.raises(ClusterforgeError, match="100,001 nodes") as exc:
        load_text(_BLUEPRINT.replace("HARDWARE", "dgx-h100").replace("COUNT", count))
    assert "CLUSTERFORGE_MAX_NODES" in exc.value.problems[0].hint


def test_the_node_limit_counts_the_hosts_of_rack_scale_systems(monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.blueprint.load import load_text

    text = _BLUEPRINT.replace("HARDWARE", "gb200-nvl72").replace("COUNT", "6")
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "108")
    assert sum(p.count for p in load_text(text).cluster.pools) == 6  # 6 racks × 18 trays fit
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "107")
    with pytest.raises(ClusterforgeError, match="108 nodes"):
        load_text(text)


def test_catalog_figures_are_bounded_and_say_their_unit(tmp_path: Path) -> None:
    from clusterforge.target_kernel import load_catalog

    site = tmp_path / "site.yaml"
    site.write_text(SITE_CATALOG)
    with pytest.raises(ClusterforgeError, match="50,000,000 hosts per device is over the limit of 1,024"):
        load_catalog([site])


def test_hints_name_a_few_candidates_and_search_each_name_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import difflib

    from clusterforge.core import hints

    known = [f"pool{i:04d}" for i in range(5000)]
    hint = hints.did_you_mean("zzzzzz", known)
    assert hint.startswith("known: pool0000, ") and hint.endswith("and 4,995 more") and len(hint) < 100
    calls = []
    monkeypatch.setattr(difflib, "get_close_matches", lambda *a, **k: calls.append(a) or [])
    for _ in range(1000):
        hints.closest("qqqqqq", known)
    assert len(calls) == 1 and len(calls[0][1]) == hints.MAX_CHOICES
    assert hints.closest("x" * 65, known) is None


def test_problem_lists_keep_a_few_of_each_kind_and_count_the_rest() -> None:
    from clusterforge.core.hints import and_more, capped

    items = [f"unknown pool 'p{i}'" for i in range(500)] + ["missing key 'a'"]
    kept = capped(items, str, lambda last, n: and_more(last, n), per_kind=3)
    assert kept == ["unknown pool 'p0'", "unknown pool 'p1'", "unknown pool 'p2'",
                    "... and 497 more like this (unknown pool …)", "missing key 'a'"]


def test_an_included_file_is_read_once_per_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.files import yamlsource

    (tmp_path / "pool.yaml").write_text("name: gpu\nhardware: dgx-h100\ncount: 1\n")
    (tmp_path / "c.yaml").write_text("pools:\n" + "  - !include pool.yaml\n" * 40 + "x: !include pool.yaml\n")
    reads: list[Path] = []
    real = yamlsource.read_text
    monkeypatch.setattr(yamlsource, "read_text", lambda path, **kw: reads.append(path) or real(path, **kw))
    source = yamlsource.load_file(tmp_path / "c.yaml")
    assert [p.name for p in reads] == ["c.yaml", "pool.yaml"]
    assert source.line_of(("pools", 39, "count")) == 3 and source.locate(("pools", 7))[0].endswith("pool.yaml")
    assert source.data["pools"][39] == {"name": "gpu", "hardware": "dgx-h100", "count": 1}
