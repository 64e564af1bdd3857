"""Waivers as data: rule id, target path, reason, expiry and approver. Waived findings are still reported."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.text import LINE_CHAR
from clusterforge.core.validation import expected, validate
from clusterforge.files.yamlsource import Source, load_file

EXPIRED_ID = "WVR-001"
UNUSED_ID = "WVR-002"


# A waiver file comes from pull requests and its text reaches every output format (CI annotations, SARIF,
# JUnit, the report): each value is one line of bounded length, the target a finding path.
RULE_ID = r"^[A-Z]{2,4}-[0-9]{3}$"
TARGET = r"^[A-Za-z0-9_.*\[\]-]{1,300}$"
ONE_LINE = rf"^{LINE_CHAR}*$"
expected(ONE_LINE, "one line of text (no control, format or invisible characters, no line breaks)")
# The cluster a waiver is for: the blueprint's `name:`, or `site:<site name>` for the facility findings of
# blueprints that share one site and are checked together (clusterforge/compose/shared_site.py).
CLUSTER = r"^([a-z][a-z0-9-]{0,39}|site:[A-Za-z0-9][A-Za-z0-9._-]{0,62})$"
CLUSTER_HINT = ("add `cluster: <name>` with the `name:` of the blueprint it is for (or `cluster: site:<site name>` "
                "for the facility findings of teams checked together): a waiver applies to that cluster only")
_SEPARATORS = re.compile(r"([.\[\]])")


class WaiverEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    rule: Annotated[str, StringConstraints(pattern=RULE_ID), Field(description=expected(
        RULE_ID, "a rule id, e.g. PWR-001"))]
    cluster: Annotated[str, StringConstraints(pattern=CLUSTER), Field(description=expected(
        CLUSTER, "a blueprint's name (e.g. vision-h100) or site:<site name> (e.g. site:dc1)"))]
    target: Annotated[str, StringConstraints(pattern=TARGET), Field(description=expected(
        TARGET, "a finding path of names, indexes and '*', e.g. site.rows[*].racks[2]"))]
    reason: Annotated[str, StringConstraints(min_length=10, max_length=1000, pattern=ONE_LINE), Field(
        description="why this is acceptable, for the reviewer: one line of 10 to 1,000 characters")]
    expires: dt.date
    approver: Annotated[str, StringConstraints(max_length=100, pattern=ONE_LINE), Field(
        description="who approved it: one line of at most 100 characters")] = ""


class WaiverFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["Waivers"] = "Waivers"
    waivers: list[WaiverEntry]


@dataclass(frozen=True)
class Waiver:
    entry: WaiverEntry
    file: str
    line: int

    @cached_property
    def _target(self) -> list[str]:
        return _SEPARATORS.split(self.entry.target)

    def matches(self, rule_id: str, path: str, cluster: str) -> bool:
        """This waiver's cluster and rule, and its target: the exact path, or a pattern where `*` stands for any
        index or name (`site.rows[*].racks[*]`); a target also covers the paths below it.

        Compared segment by segment, never as a regular expression: a target of hundreds of `*` against a long
        path would make a backtracking engine run for days."""
        if rule_id != self.entry.rule or cluster != self.entry.cluster:
            return False
        target, parts = self._target, _SEPARATORS.split(path)
        if len(parts) < len(target) or not all(map(_segment_matches, target, parts)):
            return False
        rest = parts[len(target):]  # after the target: nothing, or a path below it
        return not rest or rest[0] == "."

    def expired(self, today: dt.date) -> bool:
        return self.entry.expires < today

    def summary(self) -> dict[str, str]:
        """The waiver as reports show it next to the finding it waives: its file named as reports name files."""
        from clusterforge.files.paths import report_path

        e = self.entry
        return {"rule": e.rule, "cluster": e.cluster, "target": e.target, "reason": e.reason,
                "expires": e.expires.isoformat(),
                "approver": e.approver, "file": report_path(self.file), "line": str(self.line)}


def load_waivers(path: Path | None) -> tuple[Waiver, ...]:
    if path is None:
        return ()
    source: Source = load_file(path)
    entries = source.data.get("waivers") if isinstance(source.data, dict) else None
    unscoped = [i for i, entry in enumerate(entries if isinstance(entries, list) else [])
                if isinstance(entry, dict) and "cluster" not in entry]
    if unscoped:  # waivers written before they named a cluster: refuse, never let them silently stop applying
        raise ClusterforgeError([source.problem(("waivers", i), "a waiver must name its cluster (missing "
                                                "required key 'cluster')", CLUSTER_HINT) for i in unscoped])
    parsed = validate(WaiverFile, source)
    return tuple(Waiver(w, source.file, source.line_of(("waivers", i))) for i, w in enumerate(parsed.waivers))


def _segment_matches(pattern: str, text: str) -> bool:
    """One name, index or separator of a path against the target's: `*` stands for any run of characters.

    Greedy in pieces (the first piece a prefix, the last a suffix, the others found left to right), which is
    exact for `*`-only globs and never backtracks."""
    if "*" not in pattern:
        return pattern == text
    first, *middle, last = pattern.split("*")
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True
