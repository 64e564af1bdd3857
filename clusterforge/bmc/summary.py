"""What `clusterforge power` prints: what repeats grouped, a line per outcome or reason with its hostlist.

12,500 nodes answer in a dozen lines, not 12,500: nodes that ended alike (the same power state, boot override and
what was done, or the same reason for failing) share one line and one compressed hostlist.
"""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.bmc.fleet import FleetResult
from clusterforge.core.hostlist import compress


def failed_lines(failed: Mapping[str, str]) -> list[str]:
    """A line per reason of failing, most nodes first, with their hostlist."""
    reasons: dict[str, list[str]] = {}
    for node, reason in failed.items():
        reasons.setdefault(reason, []).append(node)
    return [f"{'FAILED':<11} {len(nodes):>6}  {compress(sorted(nodes))}  ({reason})"
            for reason, nodes in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def lines(result: FleetResult, action: str) -> list[str]:
    alike: dict[tuple[str, str, str, str], list[str]] = {}
    for node, outcome in result.done.items():
        alike.setdefault((outcome.power, outcome.boot, outcome.did, outcome.warning), []).append(node)
    out = []
    warned = 0
    for (power, boot, did, warning), nodes in sorted(alike.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        boot_note = f", boot {boot}" if boot else ""
        warning_note = f"; WARNING: {warning}" if warning else ""
        warned += len(nodes) if warning else 0
        out.append(f"{power:<11} {len(nodes):>6}  {compress(sorted(nodes))}  ({did}{boot_note}{warning_note})")
    out += failed_lines(result.failed)
    asked = len(result.done) + len(result.failed)
    rate = asked / result.seconds if result.seconds else 0.0
    warned_note = f", {warned} with a warning" if warned else ""
    out.append(f"power {action}: {len(result.done)} of {asked} nodes done{warned_note}, {len(result.failed)} failed, "
               f"{result.seconds:.1f} s ({rate:.1f} nodes/s)")
    return out
