"""Circuit capacity, the one formula every power rule and the planner share (NEC 80 %, NetBox's model)."""

from __future__ import annotations

import math

from clusterforge.model import Feed, Panel, Rack
from clusterforge.physics.assumptions import Electrical


def apparent_kva(voltage: float, amps: float, phase: int) -> float:
    """S = V·I (single-phase) or √3·V_LL·I (three-phase), in kVA."""
    return voltage * amps * (math.sqrt(3) if phase == 3 else 1.0) / 1000


def usable_kw(circuit: Feed | Panel, power_factor: float = 1.0, derate: float = 0.8) -> float:
    """What a circuit may carry continuously: S · PF · derate (208 V 3φ 60 A → 17.3; 415 V 3φ 60 A → 34.5)."""
    return apparent_kva(circuit.voltage, circuit.amps, circuit.phase) * power_factor * derate


def describe(circuit: Feed | Panel) -> str:
    """`415 V 3φ 60 A` as electricians write it."""
    return f"{circuit.voltage:g} V {'3φ' if circuit.phase == 3 else '1φ'} {circuit.amps:g} A"


def derated_kw(circuit: Feed | Panel, electrical: Electrical) -> float:
    """`usable_kw` under the policy config's power factor and derating."""
    return usable_kw(circuit, electrical.power_factor, electrical.derate)


def side_kw(rack: Rack, side: str, electrical: Electrical) -> float:
    """Usable kW of one redundancy side (A or B): the sum of its feeds, each derated."""
    return sum(derated_kw(f, electrical) for f in rack.feeds if f.side == side)


def rack_kw(rack: Rack, electrical: Electrical) -> float:
    """Most a rack may draw: either side alone carries it (PWR-002), and in normal operation its load, split
    evenly over its feeds, stays within the weakest feed (PWR-001)."""
    if not rack.feeds:
        return 0.0
    weakest = min(derated_kw(f, electrical) for f in rack.feeds)
    return min(side_kw(rack, "A", electrical), side_kw(rack, "B", electrical), weakest * len(rack.feeds))
