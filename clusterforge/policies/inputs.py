"""What a rule reads, declared with the rule: blueprint fields, catalog figures and shared policy config.

`clusterforge rules` and docs/policies.md print these, and a test checks every named field exists, so the
reference cannot drift from the model.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.target_kernel import software_fields

RACK = "site.rows[].racks[]"
# what stands in each rack: the pools' devices, and the fabric's switches the planner racks (plan/switches.py:
# into racks marked `role: network`, else the room the pools leave)
HELD = (f"{RACK}.devices[].{{pool,count}}", "pools[].{hardware,count}", f"{RACK}.role", "fabric.switch")
PLACED = (HELD[0], "pools[].{hardware,count,max_power_kw}", *HELD[2:])  # ... and what it draws
FEEDS = f"{RACK}.feeds[].{{side,voltage,amps,phase}}"
_PINS, _OVERRIDDEN = software_fields()  # the composed model's: the targets' own pins too
SOFTWARE = f"software.{{{','.join(_PINS)}}}"  # every pin, and the declared stack
OVERRIDES = f"pools[].software.{{{','.join(_OVERRIDDEN)}}}"  # a pool's own pins


@dataclass(frozen=True)
class Inputs:
    """Blueprint fields (`a[].{b,c}` = fields b and c of every item of a), catalog figures, shared config."""

    fields: tuple[str, ...] = ()
    catalog: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    also: str = ""


@dataclass(frozen=True)
class Preview:
    """Where a rule also runs at `pulumi preview`: a CrossGuard policy named after the rule.

    `check` is `module:function`, resolved only when the pack is built (so the rules never import Pulumi):
    a `resource` check takes `(props, catalog)` and returns messages; a `stack` check takes
    `(resources, catalog)` and returns violations.
    """

    types: tuple[str, ...]
    check: str
    checks: str  # what it verifies, for the pack's table in docs/policies.md
    scope: str = "resource"  # "resource": one policy per type in `types`; "stack": one over all resources
    where: str = ""  # the phrase after "a stack policy over", for stack policies
