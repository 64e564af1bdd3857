"""Compact blueprints: row and rack groups expand to the same racks a full blueprint lists one by one."""

from __future__ import annotations

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.policies import evaluate
from tests.test_fastyaml import generated


def _racks(text: str) -> list[str]:
    site = load_text(text).cluster.site
    assert site is not None
    return [rack.name for _, _, _, rack in site.racks()]


def test_compact_and_full_describe_the_same_hall() -> None:
    full, compact = generated(20_000), generated(20_000, compact=True)
    assert len(compact.splitlines()) < 100
    assert _racks(compact) == _racks(full)
    assert len(_racks(full)) == 834  # 2,500 DGX at 3 per rack


def test_findings_match_and_point_at_the_group_line() -> None:
    broken = generated(20_000, compact=True).replace("voltage: 415, amps: 60", "voltage: 208, amps: 60", 2)
    verdict = evaluate(load_text(broken, "c.yaml"))
    errors = [f for f in verdict.findings if f.level == "error"]
    group_line = next(i for i, line in enumerate(broken.splitlines(), 1) if "208" in line)
    assert {f.id for f in errors} == {"PWR-002"} and len(errors) == 24 * 34  # every rack of the 34 full rows
    assert {f.line for f in errors} == {group_line}
    assert errors[0].message.startswith("rack r000k00 draws 30.6 kW")


ROWS = """\
apiVersion: clusterforge/v1
kind: Cluster
name: t
target: onprem
pools: [{name: gpu, hardware: dgx-h100, count: 8, partition: train}]
site:
  name: s
  rows:
    - name: row
      count: 2
      racks:
        - {name: "{row}-r", count: 2, devices: [{pool: gpu, count: 2}]}
slurm: {partitions: [{name: train, pools: [gpu], default: true}]}
"""


def test_count_groups_and_row_placeholder() -> None:
    assert _racks(ROWS) == ["row01-r01", "row01-r02", "row02-r01", "row02-r02"]


@pytest.mark.parametrize(("old", "new", "fragment"), [
    ("count: 2\n", "count: 0\n", "group count must be"),
    ('name: "{row}-r", count: 2', 'name: "r[05-01]"', "empty or too large"),
    ('name: "{row}-r", count: 2', 'name: "r[1-2]x[3-4]"', "bad name range"),
    ('name: "{row}-r", count: 2', 'name: "r[1-2]", count: 2', "not both"),
])
def test_bad_groups_are_located_input_errors(old: str, new: str, fragment: str) -> None:
    text = ROWS.replace(old, new)
    with pytest.raises(ClusterforgeError) as exc:
        load_text(text, "g.yaml")
    [problem] = exc.value.problems
    assert fragment in problem.message and problem.line in (10, 12)


def test_unnamed_feeds_are_named_after_their_rack() -> None:
    text = ROWS.replace("devices: [{pool: gpu, count: 2}]", "feeds: [{side: A, voltage: 415, amps: 60, phase: 3}, "
                        "{side: B, voltage: 415, amps: 60, phase: 3}], devices: [{pool: gpu, count: 2}]")
    site = load_text(text).cluster.site
    assert site is not None
    assert [f.name for f in site.rows[1].racks[0].feeds] == ["row02-r01-a1", "row02-r01-b1"]
