"""UNIT-001: a figure implausible as written and plausible in a unit it is often confused with is one error per field
and slip, listing every place, shown before every other finding; the rules that read the figure still report."""

from __future__ import annotations

import copy
import re
from typing import Any, get_args

import pytest
import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from clusterforge.blueprint.load import load_blueprint, load_text
from clusterforge.blueprint.templating import discover
from clusterforge.core.errors import ClusterforgeError
from clusterforge.formats.grouping import group
from clusterforge.policies import evaluate, load_policy_config
from clusterforge.policies.findings import Finding, RackRef
from clusterforge.policies.plausible import RANGES, SLIPS, kinds, number, slips, unit_of
from clusterforge.target_kernel import blueprint_model
from tests.conftest import example_files
from tests.policies.builders import config, evaluate_data, feed, onprem, rack

UNIT = "UNIT-001"


def slip_findings(data: dict, **kwargs: Any) -> list[Finding]:
    return [f for f in evaluate_data(data, **kwargs).findings if f.id == UNIT]


def racks(n: int, **overrides: Any) -> list[dict]:
    return [rack(f"a{i:02}", count=1, **overrides) for i in range(1, n + 1)]


# (what the design changes, the path of the finding, the hint's slip) or no finding
CASES: list[tuple[str, dict, str | None, str | None]] = [
    ("rdhx door in W", onprem([rack(cooling={"kind": "rdhx", "air_kw": 60000})]),
     "site.rows[0].racks[0].cooling.air_kw", "is it in W rather than kW? 60,000 W is 60 kW"),
    ("CRAH units in W", onprem(row={"cooling": {"crah_kw": [40000, 40000, 45000]}}),
     "site.rows[0].cooling.crah_kw[0]", "is it in W rather than kW? 40,000 W is 40 kW"),
    ("row CDU in W", onprem(row={"cooling": {"crah_kw": [200, 200], "cdu_kw": [250000, 250000]}}),
     "site.rows[0].cooling.cdu_kw[0]", "is it in W rather than kW? 250,000 W is 250 kW"),
    ("liquid loop in W", onprem([rack(cooling={"kind": "liquid", "liquid_kw": 120000, "air_kw": 30})]),
     "site.rows[0].racks[0].cooling.liquid_kw", "120,000 W is 120 kW"),
    ("device draw in W", onprem(pools=[{"name": "gpu", "hardware": "dgx-h100", "count": 2, "partition": "train",
                                        "max_power_kw": 10200}]),
     "pools[0].max_power_kw", "is it in W rather than kW? 10,200 W is 10.2 kW"),
    ("rack contract in W", onprem(contracted_kw_per_rack=40000), "site.contracted_kw_per_rack", "40 kW"),
    ("feed voltage in kV", onprem([rack(feeds=[feed("a01-a", "A", 0.415), feed("a01-b", "B", 0.415)])]),
     "site.rows[0].racks[0].feeds[0].voltage", "is it in kV rather than V? 0.415 kV is 415 V"),
    ("feed amps in kA", onprem([rack(feeds=[feed("a01-a", "A", amps=0.06), feed("a01-b", "B", amps=0.06)])]),
     "site.rows[0].racks[0].feeds[0].amps", "is it in kA rather than A? 0.06 kA is 60 A"),
    ("panel voltage in kV", onprem([rack(feeds=[feed("a01-a", "A", panel="pa"), feed("a01-b", "B")])],
                                   panels=[{"name": "pa", "voltage": 0.4, "amps": 400}]),
     "site.panels[0].voltage", "is it in kV rather than V? 0.4 kV is 400 V"),
    ("rack rating in t", onprem([rack(max_weight_kg=1.361)]),
     "site.rows[0].racks[0].max_weight_kg", "is it in t rather than kg? 1.361 t is 1,361 kg"),
    ("rack tare in t", onprem([rack(tare_weight_kg=0.15)]),
     "site.rows[0].racks[0].tare_weight_kg", "is it in t rather than kg? 0.15 t is 150 kg"),
    ("footprint in ft²", onprem([rack(footprint_m2=7.75)]),
     "site.rows[0].racks[0].footprint_m2", "is it in ft² rather than m²? 7.75 ft² is 0.72 m²"),
    ("floor in t/m²", onprem(floor_load_kg_per_m2=1.5),
     "site.floor_load_kg_per_m2", "is it in t/m² rather than kg/m²? 1.5 t/m² is 1,500 kg/m²"),
    ("floor in kN/m²", onprem(floor_load_kg_per_m2=14.7),
     "site.floor_load_kg_per_m2", "is it in kN/m² rather than kg/m²? 14.7 kN/m² is 1,499 kg/m²"),
    ("depth in cm", onprem([rack(mounting_depth_mm=120)]),
     "site.rows[0].racks[0].mounting_depth_mm", "is it in cm rather than mm? 120 cm is 1,200 mm"),
    ("inlet in °F", onprem(max_inlet_c=80), "site.max_inlet_c", "is it in °F rather than °C? 80 °F is 26.67 °C"),
    ("water in °F", onprem(max_supply_water_c=77), "site.max_supply_water_c", "77 °F is 25 °C"),
    ("tariff in cents", onprem(energy_usd_per_kwh=8),
     "site.energy_usd_per_kwh", "is it in US cents/kWh rather than USD/kWh? 8 US cents/kWh is 0.08 USD/kWh"),
    # plausible designs and implausible figures no usual confusion explains: no finding
    ("the builders' design", onprem(), None, None),
    ("a 130 kW liquid rack", onprem([rack(cooling={"kind": "liquid", "liquid_kw": 130, "air_kw": 30})]), None, None),
    ("a 400 kW rack loop (implausible, but no slip)",
     onprem([rack(cooling={"kind": "liquid", "liquid_kw": 400, "air_kw": 30})]), None, None),
    ("48 V DC feeds (not a kV slip)", onprem([rack(feeds=[feed("a01-a", "A", 48), feed("a01-b", "B", 48)])]),
     None, None),
    ("a weak floor (RCK-003's to judge)", onprem(floor_load_kg_per_m2=355.5), None, None),
    ("a site contract in W (PWR-008's to judge)", onprem(contracted_it_kw=400000), None, None),
    ("a rated 0 kg tare", onprem([rack(tare_weight_kg=0)]), None, None),
]


@pytest.mark.parametrize(("label", "data", "path", "hint"), CASES, ids=[c[0] for c in CASES])
def test_unit_slips(label: str, data: dict, path: str | None, hint: str | None) -> None:
    found = slip_findings(data)
    if path is None:
        assert found == []
        return
    [finding] = found
    assert finding.level == "error"
    assert finding.path == path
    assert hint is not None and hint in finding.hint


def test_a_kv_voltage_on_many_feeds_is_one_finding_at_the_first_feeds_line() -> None:
    data = onprem(racks(9, feeds=None))
    for r in data["site"]["rows"][0]["racks"]:
        r["feeds"] = [feed(f"{r['name']}-a", "A", 0.415), feed(f"{r['name']}-b", "B", 0.415)]
    data["site"]["rows"][0]["racks"][0]["feeds"].append(feed("a01-a2", "A", 0.415))  # 19 feeds in all
    text = yaml.safe_dump(data, sort_keys=False)
    verdict = evaluate(load_text(text, "bp.yaml"))
    [finding] = [f for f in verdict.findings if f.id == UNIT]
    first_feed = next(i for i, line in enumerate(text.splitlines(), 1) if "voltage: 0.415" in line)
    assert finding.line == first_feed
    assert finding.message.startswith("voltage is 0.415 V on 19 feeds (a01-a,a01-b,a01-a2,a02-a,")
    assert "…(+" in finding.message and finding.message.endswith("outside the plausible 100–1,000 V")
    assert finding.hint.startswith("is it in kV rather than V? 0.415 kV is 415 V (PWR-001, PWR-002")


def test_values_of_one_field_and_slip_share_one_finding_and_their_range() -> None:
    # three CRAHs in each of two rows, in W: one finding naming both rows, the values and their count
    data = copy.deepcopy(onprem(row={"cooling": {"crah_kw": [40000, 40000, 45000]}}))  # the network row is shared
    data["site"]["rows"][1]["cooling"] = {"crah_kw": [40000, 40000, 40000]}
    [finding] = slip_findings(data)
    assert finding.message == ("cooling.crah_kw is 40,000–45,000 kW on 2 rows (a,net; 6 values), outside the "
                               "plausible 5–3,000 kW")


def test_a_slip_in_one_rack_points_at_that_rack() -> None:
    [finding] = slip_findings(onprem([*racks(2), rack("a03", count=1, cooling={"kind": "rdhx", "air_kw": 60000})]))
    assert finding.where == RackRef("a", "a03")
    assert finding.message == "cooling.air_kw is 60,000 kW on rack a03, outside the plausible 1–250 kW"


def test_the_slip_comes_before_the_findings_it_explains() -> None:
    # rack a01 is overloaded on 208 V 30 A feeds (PWR-001/PWR-002, on an earlier line); a02's door is in W, later
    overloaded = rack("a01", count=2, feeds=[feed("a01-a", "A", 208, 30), feed("a01-b", "B", 208, 30)])
    data = onprem([overloaded, rack("a02", count=1, cooling={"kind": "rdhx", "air_kw": 60000})])
    verdict = evaluate_data(data)
    pwr = next(f for f in verdict.findings if f.id == "PWR-001")
    slip = next(f for f in verdict.findings if f.id == UNIT)
    assert pwr.line < slip.line
    assert verdict.findings[0].id == UNIT
    assert group(verdict)[0].rule == UNIT


def test_the_rules_that_read_the_figure_still_report_on_it() -> None:
    # no rule silences another: with the slip reported, the power rules still judge the feeds as written
    data = onprem([rack(feeds=[feed("a01-a", "A", 0.415), feed("a01-b", "B", 0.415)])])
    with_slip = evaluate_data(data)
    without = evaluate_data(data, skip=[UNIT])
    ids = sorted(f.id for f in with_slip.findings if f.level == "error")
    assert ids == ["PWR-001", "PWR-002", UNIT]
    assert [f for f in with_slip.findings if f.id != UNIT] == list(without.findings)


def test_ranges_and_level_are_configurable() -> None:
    door = onprem([rack(cooling={"kind": "rdhx", "air_kw": 60000})])
    wide = config(**{UNIT: {"ranges": {"kW": {"site.rows[].racks[]": {"low": 1, "high": 100_000}}}}})
    assert slip_findings(door, config=wide) == []
    # a narrower scope wins over a wider one: the rack range stays the default's for the door
    device = config(**{UNIT: {"ranges": {"kW": {"pools[]": {"low": 1, "high": 100_000}}}}})
    assert len(slip_findings(door, config=device)) == 1
    [warned] = slip_findings(door, config=config(**{UNIT: {"level": "warning"}}))
    assert warned.level == "warning"
    assert slip_findings(door, config=config(**{UNIT: {"enabled": False}})) == []


@pytest.mark.parametrize(("ranges", "says"), [
    ({"kWh": {"": {"low": 1, "high": 2}}}, "unknown unit 'kWh'"),
    ({"kW": {"site.rows[].racks[].feeds[]": {"low": 1, "high": 2}}}, "no kW figure lies at or under"),
    ({"V": {"": {"low": 500, "high": 100}}}, "low (500) must be under high (100)"),
])
def test_bad_ranges_are_config_errors(ranges: dict, says: str, tmp_path: Any) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"rules": {UNIT: {"ranges": ranges}}}))
    with pytest.raises(ClusterforgeError) as exc:
        load_policy_config(path)
    assert says in str(exc.value)


def test_every_example_and_template_has_no_slip() -> None:
    for path in example_files():
        assert [f.render() for f in evaluate(load_blueprint(path)).findings if f.id == UNIT] == [], path
    for name, template in sorted(discover().items()):
        loaded = load_text(template.render({}), f"{name}.yaml")
        assert [f.render() for f in evaluate(loaded).findings if f.id == UNIT] == [], name


def _inner(annotation: Any) -> list[Any]:
    """The annotation and every type inside it (optionals, lists, unions, Annotated)."""
    return [annotation, *(t for arg in get_args(annotation) for t in _inner(arg))]


def _figure_unit(field: FieldInfo) -> str | None:
    """The unit a field's figure() declares in its description (`kW, at most 1,000,000`), wherever pydantic keeps
    it: on the field, or on the type inside an optional or a list."""
    texts = [field.description, *(getattr(m, "description", None) for t in _inner(field.annotation)
                                  for m in getattr(t, "__metadata__", ()))]
    return next((match[1] for text in texts if text and (match := re.fullmatch(r"(.*), at most [\d,]+", text))), None)


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model a blueprint can hold."""
    seen: list[type[BaseModel]] = []
    work = [root]
    while work:
        model = work.pop()
        if model not in seen:
            seen.append(model)
            work += [t for f in model.model_fields.values() for t in _inner(f.annotation)
                     if isinstance(t, type) and issubclass(t, BaseModel)]
    return seen


def test_every_figure_with_a_slip_prone_unit_is_found_by_its_name() -> None:
    # a field declared with figure("kW", ...) whose name does not say kW would escape the walk: its name must
    for model in _models(blueprint_model()):
        for name in model.model_fields:
            declared = _figure_unit(model.model_fields[name])
            if declared in SLIPS:
                assert unit_of(name) == declared, f"{model.__name__}.{name} is in {declared} by its figure()"


def test_every_declared_scope_holds_a_figure_of_its_unit() -> None:
    fields = kinds(blueprint_model())
    for unit, scopes in RANGES.items():
        assert unit in SLIPS, unit
        for scope in scopes:
            assert any(f == scope or f.startswith((f"{scope}.", f"{scope}[")) for f, u in fields.items()
                       if u == unit) or scope == "", f"{unit} {scope}"


@pytest.mark.parametrize(("value", "unit", "plausible", "found"), [
    (60000, "kW", (1, 250), ["W"]),
    (250, "kW", (1, 250), []),  # at the top: plausible
    (999, "kW", (1, 250), []),  # implausible, but 0.999 kW is too
    (0.415, "V", (100, 1000), ["kV"]),
    (4.95, "kg/m²", (250, 5000), ["t/m²", "kN/m²"]),  # both read as plausible: the first is the one reported
    (80, "°C", (5, 45), ["°F"]),
    (60000, "s", (1, 250), []),  # a unit without slips
])
def test_slips(value: float, unit: str, plausible: tuple[float, float], found: list[str]) -> None:
    assert [s.unit for s in slips(value, unit, plausible)] == found


@pytest.mark.parametrize(("value", "text"), [(60000.0, "60,000"), (0.415 * 1000, "415"), (80 * 5 / 9 - 32 * 5 / 9,
                                              "26.67"), (0.72, "0.72"), (1_000_000, "1,000,000"), (1498.97, "1,499")])
def test_number(value: float, text: str) -> None:
    assert number(value) == text
