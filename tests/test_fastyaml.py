"""The rapidyaml path gives the same data, the same lines and the same errors as the PyYAML path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterforge.blueprint.load import from_source
from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.fastyaml import RymlLines, parse_fast
from clusterforge.files.yamlsource import Source, parse_text
from clusterforge.policies import evaluate
from tests.conftest import ROOT, example_files


def both(text: str) -> tuple[Source, Source]:
    return parse_fast(text, "f.yaml", parse_text), parse_text(text, "f.yaml")


def assert_same(fast: Source, slow: Source) -> None:
    assert fast.data == slow.data
    assert isinstance(slow.lines, dict)
    wrong = [(p, fast.line_of(p), line) for p, line in slow.lines.items() if fast.line_of(p) != line]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_examples_take_the_fast_path_with_identical_results(path: Path) -> None:
    text = path.read_text()
    fast, slow = both(text)
    assert isinstance(fast.lines, RymlLines) == ("&" not in text and "<<" not in text)  # anchors: PyYAML's
    assert_same(fast, slow)


def generated(gpus: int, compact: bool = False) -> str:
    args = [sys.executable, str(ROOT / "benchmarks" / "generate.py"), "--gpus", str(gpus)]
    return subprocess.run(args + (["--compact"] if compact else []), check=True, capture_output=True,
                          text=True).stdout


def test_generated_hall_identical() -> None:
    fast, slow = both(generated(2000))
    assert isinstance(fast.lines, RymlLines)
    assert_same(fast, slow)


MERGES = """\
defaults: &d {u: 42, feeds: [{n: 1}, {n: 2}], cooling: {kind: air}}
other: &o {w: 9}
racks:
  - &first
    name: a
    u: 48
  - {<<: *d, name: b, feeds: [{n: 3}]}
  - <<: [*d, *o]
    name: c
  - *first
"""


def test_merge_keys_anchors_and_aliases_go_to_pyyaml() -> None:
    fast, slow = both(MERGES)
    assert not isinstance(fast.lines, RymlLines)
    assert_same(fast, slow)
    assert fast.data["racks"][1]["feeds"] == [{"n": 3}] and fast.data["racks"][2]["w"] == 9


@pytest.mark.parametrize("text", [
    "a: yes\n", "a: on\n", "a: ~\n", "a: 0x1F\n", "a: 010\n", "a: 1e3\n", "a: 1_000\n", "a: .inf\n",
    "a: 2027-01-31\n", "a: +5\n", "inf: 1\n", "a: nan\n", "a: -Infinity\n", "a: [null,\n  inf]\n",
    "a: 1.2.3\n", "a: True\n", "a: !include x.yaml\n", "a: [1, 0o17]\n",
    "list:\n  - no\n", "a: 1:30\n",
])
def test_yaml11_scalars_match_pyyaml(text: str) -> None:
    try:
        slow = parse_text(text, "f.yaml")
    except ClusterforgeError as expected:
        with pytest.raises(ClusterforgeError) as exc:
            parse_fast(text, "f.yaml", parse_text)
        assert exc.value.problems == expected.problems
        return
    fast = parse_fast(text, "f.yaml", parse_text)
    assert fast.data == slow.data


@pytest.mark.parametrize("text", ["a: 1\na: 2\n", "a: [1, 2\n", "", "- 1\n", "a:\n\tb: 1\n", "k: {x: 1, x: 2}\n"])
def test_errors_match_pyyaml(text: str) -> None:
    try:
        slow_data = parse_text(text, "f.yaml").data
    except ClusterforgeError as expected:
        with pytest.raises(ClusterforgeError) as exc:
            parse_fast(text, "f.yaml", parse_text)
        assert exc.value.problems == expected.problems
        return
    assert parse_fast(text, "f.yaml", parse_text).data == slow_data


keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)
scalars = (st.integers(-10**6, 10**6) | st.booleans() | st.none()
           | st.floats(allow_nan=False, allow_infinity=False, width=32)
           | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=12))
documents = st.dictionaries(keys, st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                                               | st.dictionaries(keys, children, max_size=4), max_leaves=25),
                            min_size=1, max_size=6)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(documents, st.sampled_from([False, True, None]))
def test_random_documents_agree(document: dict, flow: bool | None) -> None:
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True, sort_keys=False)
    fast, slow = both(text)
    assert_same(fast, slow)


def _findings(source: Source) -> list[tuple[str, str, int, str]]:
    verdict = evaluate(from_source(source))
    return [(f.id, f.path, f.line, f.message) for f in (*verdict.findings, *verdict.waived)]


def test_same_findings_and_lines_from_both_paths() -> None:
    # a 2,000-GPU hall with every third rack on 208 V 30 A feeds and two racks over their weight rating
    text = generated(2000).replace("voltage: 415\n              amps: 60", "voltage: 208\n              amps: 30", 40)
    text = text.replace("max_weight_kg: 1361", "max_weight_kg: 300", 2)
    fast, slow = both(text)
    assert isinstance(fast.lines, RymlLines)
    found = _findings(fast)
    assert {f[0] for f in found} >= {"PWR-002", "RCK-002"}
    assert found == _findings(slow)
