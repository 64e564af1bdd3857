"""Every budget rule holds exactly at its published boundary: a design at the limit passes, one resolution unit
(1 W, 1 g, 1 CFM, 0.01 %, 0.1 °C, 1 U) above it fails.

The figures are decimal and their binary sums are not: 3 × 1.1 kW is 3.3000000000000003 and 4 × 14.5 kW × 0.8 is
46.400000000000006, so a naive float comparison fails a budget that is met exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clusterforge.catalog import Catalog
from clusterforge.policies.config import PolicyConfig
from clusterforge.target_kernel import load_catalog
from tests.policies.builders import config, evaluate_data, feed, onprem, rack

SITE_CATALOG = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  t-1u:
    kind: server
    description: 1U test server of 1.1 kW and 21.1 kg
    max_power_kw: 1.1
    psus: {count: 2, required: 1}
    u_height: 1
    weight_kg: 21.1
    depth_mm: 800
    max_inlet_c: 35
    sources: {max_power_kw: t, psus: t, u_height: t, weight_kg: t, depth_mm: t, max_inlet_c: t}
  t-1u-dlc:
    kind: server
    description: 1U hybrid test server, 70 % of its 1.1 kW to liquid
    max_power_kw: 1.1
    psus: {count: 2, required: 1}
    u_height: 1
    weight_kg: 21.1
    depth_mm: 800
    cooling: hybrid
    liquid_heat_fraction: 0.7
    max_inlet_c: 35
    max_supply_water_c: 40
    sources: {max_power_kw: t, psus: t, u_height: t, weight_kg: t, depth_mm: t, cooling: t,
              liquid_heat_fraction: t, max_inlet_c: t, max_supply_water_c: t}
"""

W = 0.001  # one watt in kW (and one gram in kg)
BIG = [feed("a01-a", "A", 415, 250), feed("a01-b", "B", 415, 250)]  # 143.8 kW usable a side


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    path: Path = tmp_path_factory.mktemp("catalog") / "site.yaml"
    path.write_text(SITE_CATALOG)
    return load_catalog([path])


def pool(count: int, hardware: str = "t-1u") -> list[dict]:
    return [{"name": "gpu", "hardware": hardware, "count": count, "partition": "train"}]


def design(count: int, hardware: str = "t-1u", row: dict | None = None, fabric: bool = True, **rack_overrides: Any,
           ) -> dict:
    data = onprem([rack(count=count, **rack_overrides)], pools=pool(count, hardware), row=row)
    if not fabric:
        del data["fabric"]
    return data


def single_phase_amps(kw: float, voltage: float = 962.5) -> float:
    """Amps of a 1φ circuit at `voltage` whose usable (× 0.8) rating is `kw`."""
    return kw * 1000 / (voltage * 0.8)


def side_feeds(kw: float) -> list[dict]:
    return [feed("a01-a", "A", 962.5, single_phase_amps(kw), 1), feed("a01-b", "B", 962.5, single_phase_amps(kw), 1)]


Case = Callable[[float], tuple[dict, PolicyConfig | None]]

# each case builds a design whose measured figure equals its limit when `above` is 0, and exceeds it by one
# resolution unit (the limit lowered by it) when `above` is that unit
CASES: dict[str, tuple[str, str, float, Case]] = {
    # 7 × 1.1 kW over two feeds = 3.85 kW each, on feeds of 3.85 kW usable
    "PWR-001": ("PWR-001", "error", W, lambda d: (design(7, feeds=side_feeds(3.85 - d)), None)),
    # 7 × 1.1 = 7.7 kW on sides of 7.7 kW usable
    "PWR-002": ("PWR-002", "error", W, lambda d: (design(7, feeds=side_feeds(7.7 - d)), None)),
    # 7.7 kW at warn_fraction 0.5 of a 15.4 kW side
    "PWR-002 warning": ("PWR-002", "warning", W, lambda d: (
        design(7, feeds=side_feeds(15.4 - 2 * d)), config(**{"PWR-002": {"warn_fraction": 0.5}}))),
    # 4 PSUs of 0.55 kW a side on one 3φ feed: legs 1.1/0.55/0.55 kW, (max − min) / mean = 75 %
    "PWR-005": ("PWR-005", "warning", 0.0001, lambda d: (
        design(4), config(**{"PWR-005": {"max_imbalance": 0.75 - d}}))),
    # the A feed's panel carries all 7.7 kW when side B is lost
    "PWR-006": ("PWR-006", "error", W, lambda d: ({
        **(data := design(7, feeds=[feed("a01-a", "A", panel="p1"), feed("a01-b", "B")])),
        "site": {**data["site"], "panels": [{"name": "p1", "voltage": 962.5, "amps": single_phase_amps(7.7 - d),
                                             "phase": 1}]}}, None)),
    # 3 × 1.1 = 3.3 kW of IT load against a 3.3 kW contract (no fabric, so no switches)
    "PWR-007 contract": ("PWR-007", "error", W, lambda d: (
        {**(data := design(3, fabric=False)), "site": {**data["site"], "contracted_it_kw": 3.3 - d}}, None)),
    # 3.3 kW × PUE 1.3 = 4.29 kW against a 4.29 kW utility supply
    "PWR-007 utility": ("PWR-007", "error", W, lambda d: (
        {**(data := design(3, fabric=False)), "site": {**data["site"], "pue": 1.3, "utility_kw": 4.29 - d}}, None)),
    # 40 × 1U + 2U reserved in a 42U rack
    "RCK-001": ("RCK-001", "error", 1, lambda d: (design(40, reserved_u=2 + int(d)), None)),
    # 150.3 kg tare + 3 × 21.1 kg = 213.6 kg on a 213.6 kg rating
    "RCK-002": ("RCK-002", "error", W, lambda d: (design(3, tare_weight_kg=150.3, max_weight_kg=213.6 - d), None)),
    # 150 + 63.3 = 213.3 kg on 0.6 m² = 355.5 kg/m² on a 355.5 kg/m² floor (limit lowered by 1 g over 0.6 m²)
    "RCK-003": ("RCK-003", "error", W, lambda d: (
        {**(data := design(3, tare_weight_kg=150, footprint_m2=0.6)),
         "site": {**data["site"], "floor_load_kg_per_m2": 355.5 - d / 0.6}}, None)),
    "RCK-006": ("RCK-006", "warning", W, lambda d: (design(3, contracted_kw=3.3 - d), None)),
    "CLG-001": ("CLG-001", "error", W, lambda d: (design(3, cooling={"kind": "air", "air_kw": 3.3 - d}), None)),
    # 4 × 14.5 kW × 0.8 = 46.4 kW of liquid heat on a 46.4 kW loop
    "CLG-003 liquid": ("CLG-003", "error", W, lambda d: (
        design(4, "mi355x-8gpu", feeds=BIG, row={"cooling": {"crah_kw": [200, 200], "cdu_kw": [100, 100]}},
               cooling={"kind": "liquid", "liquid_kw": 46.4 - d}), None)),
    # 3 × 1.1 kW × 0.3 = 0.99 kW of air heat in a liquid rack with 0.99 kW of air capacity
    "CLG-003 air": ("CLG-003", "error", W, lambda d: (
        design(3, "t-1u-dlc", row={"cooling": {"crah_kw": [200, 200], "cdu_kw": [100, 100]}},
               cooling={"kind": "liquid", "liquid_kw": 10, "air_kw": 0.99 - d}), None)),
    # 46.4 kW of liquid heat on two 46.4 kW row CDUs (N+1: 46.4 kW)
    "CLG-004 liquid": ("CLG-004", "error", W, lambda d: (
        design(4, "mi355x-8gpu", feeds=BIG, row={"cooling": {"crah_kw": [200, 200], "cdu_kw": [46.4 - d] * 2}},
               cooling={"kind": "liquid", "liquid_kw": 100}), None)),
    # 3.3 kW of room heat on two 3.3 kW CRAHs (N+1: 3.3 kW)
    "CLG-004 air": ("CLG-004", "error", W, lambda d: (
        design(3, row={"cooling": {"crah_kw": [3.3 - d] * 2}}, cooling={"kind": "air"}), None)),
    # a room at 35 °C for hardware rated to 35 °C
    "CLG-005": ("CLG-005", "error", 0.1, lambda d: (
        {**(data := design(3)), "site": {**data["site"], "max_inlet_c": 35 + d}}, None)),
    "CLG-006": ("CLG-006", "error", 0.1, lambda d: (
        {**(data := design(3, "t-1u-dlc", row={"cooling": {"crah_kw": [200, 200], "cdu_kw": [100, 100]}},
                           cooling={"kind": "liquid", "liquid_kw": 10})),
         "site": {**data["site"], "max_supply_water_c": 40 + d}}, None)),
    # 3.16 × 7,700 W / 20 °F = 1,216.6 CFM needed, 1,216.6 delivered
    "CLG-007": ("CLG-007", "warning", 1, lambda d: (
        design(7, cooling={"kind": "air", "delivered_cfm": 1216.6 - d}), None)),
}


def levels(data: dict, cfg: PolicyConfig | None, catalog: Catalog, rule: str) -> set[str]:
    return {f.level for f in evaluate_data(data, cfg, catalog).findings if f.id == rule}


@pytest.mark.parametrize("case", CASES)
def test_budget_holds_at_its_boundary(case: str, catalog: Catalog) -> None:
    rule, level, _, build = CASES[case]
    data, cfg = build(0.0)
    assert level not in levels(data, cfg, catalog, rule), f"{case}: fails at its exact limit"


@pytest.mark.parametrize("case", CASES)
def test_budget_fails_one_unit_above(case: str, catalog: Catalog) -> None:
    rule, level, unit, build = CASES[case]
    data, cfg = build(unit)
    assert level in levels(data, cfg, catalog, rule), f"{case}: passes one resolution unit above its limit"


@pytest.mark.parametrize(("air_kw", "warns"), [
    (4.125, True),             # 3.3 kW is exactly 80 % of 4.125 kW: the warning starts there (≥ 80 %)
    (4.125 + W / 0.8, False),  # the same load is one watt below 80 % of this capacity
])
def test_clg001_warning_starts_at_its_boundary(air_kw: float, warns: bool, catalog: Catalog) -> None:
    data = design(3, cooling={"kind": "air", "air_kw": air_kw})
    assert ("warning" in levels(data, None, catalog, "CLG-001")) is warns
