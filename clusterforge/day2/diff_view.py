"""`diff` for a person: what repeats said once, every line sized for the width it is printed at.

A change of 32 hosts is 32 `hosts.yml` changes and 96 rack figures in the comparison (JSON keeps every one, for
machines); a reader needs "32 hosts join" once, with the hosts as a SLURM hostlist, as `check` groups its
findings (formats.grouping). So:

* changes that differ only in the host they name (a host joining, leaving, moving) become one item whose key is
  the hostlist of those hosts;
* items that take the same action on the same hosts for the same reason share one heading that says so, most
  disruptive first, so a drain is never buried under forty reconfigures;
* a reason's quoted source sentence (slurm.conf(5)'s words, kept whole in JSON) is cut to the source's name;
* racks whose figures moved by the same amounts share a line: `racks su05-r[01-08], each: 0 -> 42.52 kW, ...`.

The lines come back as (text, indent of its continuation lines): the CLI breaks each for its terminal
(cli.terminal.wrap), and values (a NodeName line, a JSON var) are cut with `…` to fit `width` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from clusterforge.core.errors import one_line
from clusterforge.core.hostlist import compress, cut_to_width
from clusterforge.day2.changes import Change, Diff, PhysicalDelta
from clusterforge.render.change_classes import Action

if TYPE_CHECKING:
    from clusterforge.day2.cost_delta import CostDelta

Line = tuple[str, int]  # (text, indent of its continuation lines when the CLI wraps it)
ACTION_WIDTH = 11  # `RECONFIGURE`, the longest action name
HEADING_INDENT = 2 + ACTION_WIDTH + 2
ITEM_INDENT = 6
MIN_VALUE = 12  # a value cut shorter than this says nothing


def elided(value: str | None, width: int) -> str:
    """A value on one short line: `(absent)` for none, long ones cut with '…'."""
    if value is None:
        return "(absent)"
    value = one_line(value)
    return value if len(value) <= width else value[: max(width - 1, 1)] + "…"


def hostlist(hosts: tuple[str, ...] | list[str], width: int) -> str:
    """`gpu-[0001-0128],ctl-0001,…(+40 more)`: the hosts as a SLURM hostlist cut at a whole part after about
    `width` characters (grouping.Group.targets does the same for check's racks)."""
    cut = cut_to_width(hosts, width)
    return cut.text(text if len(text) <= width else elided(text, width) for text in cut.parts)


def short_why(why: str) -> str:
    """The reason without the source sentence it quotes: `... re-reads it; running jobs are not touched
    (slurm.conf(5) 24.11, DESCRIPTION: "Changes ...")` reads `... re-reads it; running jobs are not touched`, so
    the changes one reason covers share a heading; JSON keeps each change's reason whole, quote included. A
    parenthesis that quotes nothing (`(SLURM 24.11 adds and removes nodes without a restart)`) stays."""
    if not why.endswith(")"):
        return why
    depth = 0
    for at in range(len(why) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(why[at], 0)
        if depth == 0:
            return why[:at].rstrip() if '"' in why[at:] and why[:at].strip() else why
    return why


def window(value: str | None, start: int, width: int) -> str:
    """`value` cut to `width` characters from `start` (`…` marks what is left out on either side)."""
    if value is None:
        return "(absent)"
    value = one_line(value)
    if len(value) <= width:
        return value
    start = min(start, max(len(value) - width + 1, 0))
    lead = "…" if start else ""
    rest = value[start:]
    room = width - len(lead)
    return lead + (rest if len(rest) <= room else rest[: max(room - 1, 1)] + "…")


def shown_from(old: str, new: str, room: int) -> int:
    """Where to start showing two values `room` wide so that the first character they differ in is in sight:
    0 when it is already, else the start of its word (after a space or comma), or a little before it in a word
    too long to show from its start."""
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    if at < room - 2:
        return 0
    word = max(old.rfind(" ", 0, at), old.rfind(",", 0, at)) + 1
    return word if at - word < room - 3 else at - room // 2


@dataclass(frozen=True)
class Item:
    """One line under a heading: a setting, or the same change on many hosts (`key` their hostlist)."""

    file: str
    key: str
    old: str | None
    new: str | None


@dataclass(frozen=True)
class Heading:
    """Changes that take one action on the same hosts (and daemon) for the same reason."""

    action: Action
    hosts: tuple[str, ...]
    daemon: str | None
    why: str
    items: tuple[Item, ...]


def _per_host(changes: tuple[Change, ...]) -> list[tuple[Change, str, tuple[str, ...]]]:
    """Each change with the key it is shown under and its hosts: changes that name one host each (`hosts.yml:
    gpu-0129`) and differ in nothing else are merged, their key the hostlist of their hosts."""
    merged: dict[tuple[object, ...], list[Change]] = {}
    order: list[tuple[object, ...]] = []
    for i, change in enumerate(changes):
        own = change.hosts == (change.key,)
        key: tuple[object, ...] = ((change.file, change.old, change.new, change.action, change.daemon, change.why)
                                   if own else (i,))
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].append(change)
    out = []
    for key in order:
        group = merged[key]
        hosts = tuple(host for change in group for host in change.hosts)
        out.append((group[0], compress(hosts) if len(group) > 1 else group[0].key, hosts))
    return out


def headings(result: Diff) -> list[Heading]:
    """The changes under their headings, most disruptive first, then in the order the comparison found them."""
    grouped: dict[tuple[object, ...], list[Item]] = {}
    meta: dict[tuple[object, ...], tuple[Action, tuple[str, ...], str | None, str]] = {}
    for change, key, hosts in _per_host(result.changes):
        why = short_why(change.why)
        group_key = (change.action, hosts, change.daemon, why)
        grouped.setdefault(group_key, []).append(Item(change.file, key, change.old, change.new))
        meta[group_key] = (change.action, hosts, change.daemon, why)
    out = [Heading(*meta[key], tuple(items)) for key, items in grouped.items()]
    return sorted(out, key=lambda h: -h.action)


def heading_line(heading: Heading, width: int) -> Line:
    """`REBOOT       128 hosts gpu-[0001-0128]: why` (`, slurmd` after the hosts where a daemon restarts)."""
    count = len(heading.hosts)
    daemon = f", {heading.daemon}" if heading.daemon else ""
    if count:
        hosts = f"{count:,} host{'' if count == 1 else 's'} {hostlist(heading.hosts, max(width // 2, 20))}"
    else:
        hosts = "no host"
    return f"  {heading.action.name:<{ACTION_WIDTH}}  {hosts}{daemon}: {heading.why}", HEADING_INDENT


def item_line(item: Item, width: int) -> Line:
    """`    slurm.conf: PartitionName=train: …Nodes=gpu-[0001-0128] … -> …Nodes=gpu-[0001-0160] …`: values cut to
    fit `width` where they can, both shown from the word where they part, so the difference stays in sight."""
    head = f"    {item.file}: {elided(item.key, max(width // 2, MIN_VALUE))}: "
    room = max((width - len(head) - len(" -> ")) // 2, MIN_VALUE)
    old, new = (one_line(v) if v is not None else None for v in (item.old, item.new))
    shown = [old or "(absent)", new or "(absent)"]
    if len(shown[0]) + len(shown[1]) <= 2 * room:
        return f"{head}{shown[0]} -> {shown[1]}", ITEM_INDENT  # both fit: neither is cut
    start = shown_from(old, new, room) if old is not None and new is not None else 0
    short = min(len(shown[0]), len(shown[1]))
    widths = [room, room]
    if short < room:  # a short value leaves its room to the long one
        widths[0 if len(shown[0]) > len(shown[1]) else 1] = 2 * room - short
    return (f"{head}{window(item.old, start, widths[0])} -> {window(item.new, start, widths[1])}",
            ITEM_INDENT)


def settings_lines(result: Diff, width: int) -> list[Line]:
    found = headings(result)
    lines: list[Line] = [("settings (most disruptive first)" if found else "settings", 0)]
    for heading in found:
        lines.append(heading_line(heading, width))
        lines += [item_line(item, width) for item in heading.items]
    return lines if found else [*lines, ("  (none changed)", 0)]


def number(value: float) -> str:
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def _move(delta: PhysicalDelta, signed: bool = True) -> str:
    change = delta.new - delta.old
    unit = f" {delta.unit}" if delta.unit else ""
    text = f"{number(delta.old)} -> {number(delta.new)}{unit}"
    return f"{text} ({'+' if change >= 0 else '-'}{number(abs(change))})" if signed else text


def physical_lines(result: Diff, width: int) -> list[Line]:
    """The totals one a line; the racks whose figures moved alike on one line (`racks a[01-08], each: ...`)."""
    racks: dict[str, list[PhysicalDelta]] = {}
    totals: list[PhysicalDelta] = []
    for delta in result.physical:
        noun, _, name = delta.what.partition(" ")
        if noun == "rack" and name and delta.unit:
            racks.setdefault(name, []).append(delta)
        else:
            totals.append(delta)
    alike: dict[tuple[tuple[float, float, str], ...], list[str]] = {}
    for name, deltas in racks.items():
        alike.setdefault(tuple((d.old, d.new, d.unit) for d in deltas), []).append(name)
    lines: list[Line] = [("physical", 0)]
    for figures, names in alike.items():
        moves = ", ".join(_move(PhysicalDelta("", old, new, unit), signed=False) for old, new, unit in figures)
        label = f"rack {names[0]}" if len(names) == 1 else f"{len(names):,} racks {hostlist(names, 40)}, each"
        lines.append((f"  {label}: {moves}", 6))
    lines += _paired([f"{delta.what}: {_move(delta)}" for delta in totals], width)
    return lines if len(lines) > 1 else [*lines, ("  (no change)", 0)]


def _paired(figures: list[str], width: int) -> list[Line]:
    """The totals two to a line where both fit `width` (`nodes: 131 -> 163 (+32); GPUs: ...`), else one."""
    out: list[Line] = []
    for figure in figures:
        if out and ";" not in out[-1][0] and len(out[-1][0]) + 2 + len(figure) <= width:
            out[-1] = (f"{out[-1][0]}; {figure}", 6)
        else:
            out.append((f"  {figure}", 6))
    return out


def nodes_line(label: str, hosts: tuple[str, ...], width: int) -> Line:
    """`  added    32: gpu-[0129-0160]`"""
    return f"  {label:<8} {len(hosts)}" + (f": {hostlist(hosts, max(width - 16, 20))}" if hosts else ""), 13


def verdict(result: Diff) -> str:
    if result.loses_data:
        first: dict[str, str] = {}  # one key per reason: a replaced resource's other settings share its reason
        for change in result.data_loss:
            first.setdefault(change.why, change.key)
        keys = ", ".join(first.values())
        jobs = " and queued or running jobs" if result.loses_jobs else ""
        return (f"loses data: the provider replaces or deletes a file system, and every byte on it{jobs} is lost; "
                f"copy what must survive first (largest action: {result.largest.name}): {elided(keys, 60)}")
    if result.loses_jobs:
        keys = ", ".join(dict.fromkeys(change.key for change in result.job_loss))
        return (f"loses jobs: queued or running jobs are lost; drain the cluster first (largest action: "
                f"{result.largest.name}): {elided(keys, 60)}")
    if not result.disruptive:
        return f"no disruption: running jobs keep running (largest action: {result.largest.name})"
    count = len(result.interrupted)
    return (f"disruptive: {count} host{' needs' if count == 1 else 's need'} a drain, reboot or reimage "
            f"(largest action: {result.largest.name})")


def report(old: str, new: str, result: Diff, cost: CostDelta | None, width: int) -> list[Line]:
    """The text report: nodes, settings by heading, physical figures, the cost and the verdict."""
    lines: list[Line] = [(f"clusterforge diff: {old} -> {new}", 4), ("nodes", 0)]
    moved = [nodes_line(label, hosts, width) for label, hosts in
             (("added", result.added), ("removed", result.removed), ("changed", result.changed)) if hosts]
    if not moved:
        powered = " (power-saved nodes are below)" if result.powered_added or result.powered_removed else ""
        moved = [(f"  none to provision added, removed or changed{powered}", 0)]
    lines += moved
    if result.powered_added or result.powered_removed:
        lines += [("power-saved nodes (SLURM starts them when jobs need them; no host to provision)", 2),
                  nodes_line("added", result.powered_added, width),
                  nodes_line("removed", result.powered_removed, width)]
    lines += settings_lines(result, width)
    lines += physical_lines(result, width)
    lines.append((cost.line(), 6) if cost is not None else ("cost: not compared (a render directory has no plan)", 6))
    return [*lines, (verdict(result), 4)]
