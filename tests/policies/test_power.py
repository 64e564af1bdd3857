"""Power rules at and around their thresholds. Usable = V·I·√3·0.8 for three-phase feeds:
415 V 3φ 60 A → 34.50 kW; 208 V 3φ 60 A → 17.29 kW; 208 V 3φ 30 A → 8.65 kW; 230 V 1φ 32 A → 5.89 kW.
A DGX H100 is 10.2 kW nameplate."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.policies import load_waivers
from tests.policies.builders import config, evaluate_data, feed, found, messages, onprem, rack


def test_pwr001_single_side_feeds_overloaded_when_redundancy_is_waived_by_config() -> None:
    # two A-side 230 V 1φ 32 A feeds (5.89 kW each); 2 DGX = 20.4 kW → 10.2 kW per feed > 5.89
    r = rack(count=2, feeds=[feed("a-1", "A", 230, 32, 1), feed("a-2", "A", 230, 32, 1)])
    assert found(onprem([r]), config=config(**{"PWR-002": {"enabled": False}})) == ["PWR-001"]


def test_pwr001_share_within_rating_passes() -> None:
    # 1 DGX = 10.2 kW → 5.1 kW per feed ≤ 5.89
    r = rack(count=1, feeds=[feed("a-1", "A", 230, 32, 1), feed("a-2", "A", 230, 32, 1)])
    assert found(onprem([r]), config=config(**{"PWR-002": {"enabled": False}})) == []


def test_pwr001_and_pwr002_both_report_an_ab_rack_overloaded_with_both_sides_up() -> None:
    # A/B 208 V 3φ 30 A (8.65 kW): 20.4 kW → 10.2 per feed > 8.65 (PWR-001), and 20.4 > 8.65 one side (PWR-002)
    r = rack(count=2, feeds=[feed("a", "A", 208, 30), feed("b", "B", 208, 30)])
    assert found(onprem([r])) == ["PWR-001", "PWR-002"]


@pytest.mark.parametrize("how", ["skip", "waive"])
def test_pwr001_stands_when_pwr002_is_skipped_or_waived(how: str, tmp_path: Path) -> None:
    # 4 DGX H100 = 40.8 kW on two 208 V 3φ 60 A feeds (17.3 kW usable each, 34.6 together): the breakers trip
    # with both feeds up, whatever is decided about redundancy
    data = onprem([rack(count=4, feeds=[feed("a01-a", "A", 208, 60), feed("a01-b", "B", 208, 60)])])
    if how == "skip":
        verdict = evaluate_data(data, skip=["PWR-002"])
    else:
        waivers = tmp_path / "w.yaml"
        waivers.write_text("waivers:\n  - {rule: PWR-002, cluster: t, target: 'site.rows[0].racks[0].feeds', "
                           "reason: dev rack without redundancy, "
                           "expires: 2099-01-01}\n")
        verdict = evaluate_data(data, waivers=load_waivers(waivers))
    assert verdict.failed
    assert [f.id for f in verdict.findings if f.level == "error"] == ["PWR-001"]


def test_pwr001_racks_without_feeds_are_reported_as_info() -> None:
    assert "PWR-001" in found(onprem([rack(feeds=[])]), level="info")


def test_pwr002_either_side_must_carry_the_rack() -> None:
    # 4 DGX = 40.8 kW on 208 V 3φ 60 A feeds (17.3 kW usable per side): 40.8 > 17.3
    r = rack(count=4, feeds=[feed("a01-a", "A", 208, 60), feed("a01-b", "B", 208, 60)])
    data = onprem([r])
    assert found(data) == ["PWR-001", "PWR-002"]  # 20.4 kW a feed with both up, 40.8 kW on one side after a loss
    [message] = messages(data, "PWR-002")
    assert message == ("rack a01 draws 40.8 kW; either side alone must carry it but side A gives 17.3 kW usable "
                       "(208 V 3φ 60 A × 0.8)")


@pytest.mark.parametrize(("volts", "amps", "hint"), [
    # 40.8 kW on one side: 40.8 / (0.208 · √3 · 0.8) = 141.6 A at 208 V, 73.6 A at 400 V (the next voltage up)
    (208, 60, "feed side A for 40.8 kW: 142 A at 208 V 3φ, or 74 A at 400 V 3φ"),
    # on a 415 V feed the proposal is never 415 V itself: 70.9 A at 415 V, or 61.3 A at 480 V
    (415, 32, "feed side A for 40.8 kW: 71 A at 415 V 3φ, or 62 A at 480 V 3φ"),
    # nothing above 480 V: the amps at its own voltage alone
    (480, 30, "feed side A for 40.8 kW: 62 A at 480 V 3φ"),
])
def test_pwr002_proposes_feeds_that_carry_the_rack(volts: int, amps: int, hint: str) -> None:
    r = rack(count=4, feeds=[feed("a01-a", "A", volts, amps), feed("a01-b", "B", volts, amps)])
    [finding] = [f for f in evaluate_data(onprem([r])).findings if f.id == "PWR-002"]
    assert finding.hint == f"move a server to another rack, or {hint}"


@pytest.mark.parametrize(("count", "level"), [(3, None), (4, "error")])
def test_pwr002_at_415v(count: int, level: str | None) -> None:
    # 3 DGX = 30.6 kW ≤ 34.5 (88.7 %, under the 90 % warning); 4 DGX = 40.8 > 34.5
    ids = [f for f in found(onprem([rack(count=count)]), level=None) if f == "PWR-002"]
    assert ids == (["PWR-002"] if level else [])


def test_pwr002_warns_above_90_percent() -> None:
    # 3 × 10.5 kW declared = 31.5 kW = 91.3 % of 34.5
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 3, "partition": "train", "max_power_kw": 10.5}]
    data = onprem([rack(count=3)], pools=pools)
    assert "PWR-002" in found(data, level="warning") and found(data) == []


def test_pwr002_missing_b_side() -> None:
    r = rack(count=1, feeds=[feed("a", "A")])
    assert found(onprem([r])) == ["PWR-002"]


@pytest.mark.parametrize(("hardware", "warns"), [("dgx-h100", True), ("dgx-b200", True), ("hgx-h100-8gpu", True),
                                               ("cpu-1u", False)])
def test_pwr003_psus_per_side(hardware: str, warns: bool) -> None:
    # DGX H100 4+2 → 3 per side < 4; DGX B200 5+1 → 3 < 5; HGX (XE9680) 11.0 kW on 2,800 W PSUs needs 4, so its
    # 3+3 split leaves 8,400 W after a feed loss; a 1+1 server keeps its one 1,100 W PSU
    pools = [{"name": "gpu", "hardware": hardware, "count": 2, "partition": "train"}]
    assert ("PWR-003" in found(onprem([rack(count=2)], pools=pools), level="warning")) is warns


@pytest.mark.parametrize(("declared", "fails"), [(9.0, True), (10.2, False), (11.0, False)])
def test_pwr004_nameplate(declared: float, fails: bool) -> None:
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 2, "partition": "train", "max_power_kw": declared}]
    assert found(onprem([rack(count=2)], pools=pools)) == (["PWR-004"] if fails else [])


@pytest.mark.parametrize(("count", "warns"), [(1, True), (3, False)])
def test_pwr005_leg_balance(count: int, warns: bool) -> None:
    # one 1U server puts 1 PSU per side on a 3φ feed: legs 0.55/0/0 kW → 300 % imbalance;
    # three servers: 3 PSUs, one per leg → 0 %
    pools = [{"name": "svc", "hardware": "cpu-1u", "count": count, "role": "controller"}]
    data = onprem([rack(count=count, pool="svc")], pools=pools)
    # three controller nodes are HA: their state on shared storage keeps SLM-006 quiet
    data |= {"storage": {"shared": {"mount": "/shared"}}, "slurm": {"state_save_location": "/shared/slurm"}}
    assert ("PWR-005" in found(data, level="warning")) is warns
    assert found(data) == []


@pytest.mark.parametrize(("racks", "fails"), [(2, False), (3, True)])
def test_pwr006_panel(racks: int, fails: bool) -> None:
    # panel 415 V 3φ 100 A → 57.5 kW usable; each rack's only A feed carries its whole 20.4 kW after B is lost:
    # 2 racks = 40.8 ≤ 57.5; 3 racks = 61.2 > 57.5
    rs = [rack(f"a0{i}", count=2, feeds=[feed(f"a0{i}-a", "A", panel="pa"), feed(f"a0{i}-b", "B")])
          for i in range(1, racks + 1)]
    data = onprem(rs, panels=[{"name": "pa", "voltage": 415, "amps": 100, "phase": 3}])
    assert found(data) == (["PWR-006"] if fails else [])


@pytest.mark.parametrize(("contracted", "fails"), [(23, False), (22, True)])
def test_pwr007_contracted_it(contracted: float, fails: bool) -> None:
    # 2 DGX = 20.4 kW + one QM9700 leaf for 16 endpoints (1.72 kW) = 22.12 kW
    assert found(onprem([rack(count=2)], contracted_it_kw=contracted)) == (["PWR-007"] if fails else [])


@pytest.mark.parametrize(("utility", "fails"), [(34, False), (33, True)])
def test_pwr007_utility_with_pue(utility: float, fails: bool) -> None:
    # 22.12 kW × PUE 1.5 = 33.18 kW
    assert found(onprem([rack(count=2)], pue=1.5, utility_kw=utility)) == (["PWR-007"] if fails else [])


@pytest.mark.parametrize("feeds", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 4, 5, 9, 10, 17])
def test_leg_spread_shortcut_matches_one_by_one(feeds: int, count: int) -> None:
    from clusterforge.policies.domains.power import spread_over_legs

    direct = spread_over_legs({1.7: count}, feeds)
    one_by_one = spread_over_legs({1.7: count, 0.5: 0}, feeds)  # two groups take the greedy path
    assert [sorted(legs) for legs in direct] == [sorted(legs) for legs in one_by_one]



# PWR-008: 2 DGX H100 and one QM9700 leaf draw 22.12 kW of IT load (PWR-007 above); the default ceiling is 100×
def pwr008(design: dict, **settings: float) -> list[str]:
    verdict = evaluate_data(design, config(**{"PWR-008": settings}) if settings else None)
    return [f.message for f in verdict.findings if f.id == "PWR-008"]


@pytest.mark.parametrize(("contracted", "warns"), [(2_000, False), (23_000, True)])  # 90× and 1,040×
def test_pwr008_a_contract_in_w_rather_than_kw_is_flagged(contracted: float, warns: bool) -> None:
    design = onprem([rack(count=2)], contracted_it_kw=contracted)
    found_messages = pwr008(design)
    assert len(found_messages) == (1 if warns else 0)
    assert found(design) == []  # a warning: the design itself is not refused
    if warns:
        assert "23,000 kW, 1,040 times the design's IT load of 22.1 kW" in found_messages[0]
        assert "W rather than kW" in found_messages[0]


def test_pwr008_utility_supply_is_compared_with_it_times_pue() -> None:
    # 22.12 kW × 1.5 = 33.18 kW: 3,000 kW is 90×, 3,600 kW 108×
    assert pwr008(onprem([rack(count=2)], pue=1.5, utility_kw=3_000)) == []
    assert len(pwr008(onprem([rack(count=2)], pue=1.5, utility_kw=3_600))) == 1


def test_pwr008_ceiling_is_a_setting() -> None:
    design = onprem([rack(count=2)], contracted_it_kw=23_000)
    assert pwr008(design, max_ratio=2000) == []
    assert len(pwr008(design, max_ratio=1000)) == 1


def test_pwr008_leaves_a_site_file_shared_by_teams_alone(tmp_path: Path) -> None:
    """A team of 2 DGX on a site file that several teams include: the contract is the whole facility's."""
    import yaml

    from clusterforge.blueprint.load import load_blueprint

    design = onprem([rack(count=2)], contracted_it_kw=23_000)
    site = {"apiVersion": design["apiVersion"], "kind": "Site", **design.pop("site")}
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(site, sort_keys=False))
    (tmp_path / "team.yaml").write_text(yaml.safe_dump(design, sort_keys=False) + "site: !include site.yaml\n")
    from clusterforge.policies import evaluate
    from clusterforge.target_kernel import load_catalog

    verdict = evaluate(load_blueprint(tmp_path / "team.yaml", load_catalog(())))
    assert [f.id for f in verdict.findings if f.id == "PWR-008"] == []
    assert pwr008(onprem([rack(count=2)], contracted_it_kw=23_000))  # the same figures, written in the blueprint
