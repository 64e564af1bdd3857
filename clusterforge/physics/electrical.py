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


# Line-to-line supply voltages of three-phase distribution (IEC 60038: 400 V, and 415 V in the UK and Asia-Pacific;
# North America: 208 V from 120/208 V services, 480 V from 277/480 V) and single-phase ones (120, 208, 230, 240 and
# 277 V): what a rack PDU is built for, and so what a stronger feed may be.
VOLTAGES = {3: (208.0, 400.0, 415.0, 480.0), 1: (120.0, 208.0, 230.0, 240.0, 277.0)}


def amps_for(kw: float, voltage: float, phase: int, feeds: int, electrical: Electrical) -> int:
    """The whole amps each of `feeds` feeds of this voltage and phase needs so that together they carry `kw` under
    the derating and power factor (the inverse of `usable_kw`)."""
    per_amp = apparent_kva(voltage, 1.0, phase) * electrical.power_factor * electrical.derate
    return math.ceil(kw / feeds / per_amp - 1e-9)


def stronger_feeds(kw: float, side: list[Feed], electrical: Electrical) -> str:
    """What feeds of one side would carry `kw`: the amps at the side's own voltage, and at the next standard voltage
    above it for that phase where there is one (`54 A at 415 V 3φ, or 47 A at 480 V 3φ`)."""
    first = side[0]
    voltage, phase = first.voltage, first.phase
    count = len(side)
    per = f"{count} × " if count > 1 else ""
    mark = "3φ" if phase == 3 else "1φ"
    options = [f"{per}{amps_for(kw, voltage, phase, count, electrical)} A at {voltage:g} V {mark}"]
    higher = [v for v in VOLTAGES.get(phase, ()) if v > voltage]
    if higher:
        options.append(f"{per}{amps_for(kw, higher[0], phase, count, electrical)} A at {higher[0]:g} V {mark}")
    return ", or ".join(options)


def rack_kw(rack: Rack, electrical: Electrical) -> float:
    """Most a rack may draw: either side alone carries it (PWR-002), and in normal operation its load, split
    evenly over its feeds, stays within the weakest feed (PWR-001)."""
    if not rack.feeds:
        return 0.0
    weakest = min(derated_kw(f, electrical) for f in rack.feeds)
    return min(side_kw(rack, "A", electrical), side_kw(rack, "B", electrical), weakest * len(rack.feeds))
