"""No rule masks another: every rule's findings are the same whether any other rule is enabled, skipped or
waived. Run over every example, every template's defaults and the test designs that fail on purpose."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from clusterforge.blueprint.load import Loaded, load_blueprint, load_text
from clusterforge.blueprint.templating import discover
from clusterforge.plan import build_plan
from clusterforge.policies import evaluate
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.findings import Finding
from clusterforge.policies.registry import REGISTRY
from clusterforge.policies.waivers import Waiver, WaiverEntry
from tests.conftest import example_files
from tests.policies.builders import aws, design, feed, onprem, rack
from tests.policies.test_cooling import gb200
from tests.policies.test_software_sets import NEURON, ROCM
from tests.test_reference_designs import su_racks

REGISTERED = load_rules()  # the rules whose settings and findings are checked

TODAY = dt.date(2026, 11, 22)


def _designs() -> Iterator[tuple[str, Loaded]]:
    for path in example_files():
        yield f"example {path.name}", load_blueprint(path)
    for name, template in sorted(discover().items()):
        yield f"template {name}", load_text(template.render({}), f"{name}.yaml")
    import yaml

    failing = {
        # 40.8 kW on two 208 V 3φ 60 A feeds: PWR-001 and PWR-002
        "four DGX H100 on 208 V 60 A": onprem([rack(count=4, feeds=[feed("a", "A", 208, 60),
                                                                       feed("b", "B", 208, 60)])]),
        # an NVL72 in a containment rack: CLG-001 and CLG-002
        "GB200 NVL72 in an air rack": gb200({"kind": "containment"}),
        # the reference designs of tests/test_reference_designs.py, passing and failing
        "SuperPOD SU on one feed a side": onprem(su_racks(1), row={"cooling": {"crah_kw": [200, 200, 200]}}),
        "SuperPOD SU": onprem(su_racks(2), row={"cooling": {"crah_kw": [200, 200, 200]}}),
        "p5 without a placement group": aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2,
                                                    "partition": "train", "placement": "none"}]),
        "ROCm stack with a mismatched RCCL": design(software={**ROCM, "rccl": "2.26.6"}),
        "Neuron stack on the wrong EFA installer": aws(software={**NEURON, "efa_installer": "1.50.0"}),
    }
    for label, data in failing.items():
        yield label, load_text(yaml.safe_dump(data), "bp.yaml")


DESIGNS = list(_designs())


def _by_rule(findings: tuple[Finding, ...]) -> dict[str, list[tuple[str, str, str]]]:
    out: dict[str, list[tuple[str, str, str]]] = {}
    for f in findings:
        out.setdefault(f.id, []).append((f.path, f.level, f.message))
    return {k: sorted(v) for k, v in out.items()}


def _waive_all(rule_id: str, cluster: str) -> tuple[Waiver, ...]:
    entry = WaiverEntry(rule=rule_id, cluster=cluster, target="*", reason="independence test",
                        expires=dt.date(2099, 1, 1))
    return (Waiver(entry, "waivers.yaml", 1),)


@pytest.mark.parametrize(("label", "loaded"), DESIGNS, ids=[label for label, _ in DESIGNS])
def test_no_rule_changes_with_another_rule_skipped_or_waived(label: str, loaded: Loaded) -> None:
    plan = build_plan(loaded.cluster, loaded.catalog)
    base = evaluate(loaded, plan, today=TODAY)
    everything = _by_rule(base.findings)
    for other in REGISTRY:
        expected = {rule: found for rule, found in everything.items() if rule != other}
        skipped = _by_rule(evaluate(loaded, plan, skip=[other], today=TODAY).findings)
        assert skipped == expected, f"{label}: skipping {other} changed the findings of other rules"
        waived = evaluate(loaded, plan, waivers=_waive_all(other, loaded.cluster.name), today=TODAY)
        rest = _by_rule(tuple(f for f in (*waived.findings, *waived.waived)
                              if f.id != other and not f.id.startswith("WVR-")))  # the waiver's own notes
        assert rest == expected, f"{label}: waiving {other} changed the findings of other rules"


def test_the_failing_designs_fail_more_than_one_rule() -> None:
    """The designs above are only a test of masking if they trip several rules at once."""
    ids = {label: {f.id for f in evaluate(loaded, today=TODAY).errors} for label, loaded in DESIGNS}
    assert {"PWR-001", "PWR-002"} <= ids["four DGX H100 on 208 V 60 A"]
    assert {"CLG-001", "CLG-002"} <= ids["GB200 NVL72 in an air rack"]
