"""Waivers as data: rule id, target path, reason, expiry and approver. Waived findings are still reported."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from clusterforge.model.text import LINE_CHAR
from clusterforge.validation import expected, validate
from clusterforge.yamlsource import Source, load_file

EXPIRED_ID = "WVR-001"
UNUSED_ID = "WVR-002"


# A waiver file comes from pull requests and its text reaches every output format (CI annotations, SARIF,
# JUnit, the report): each value is one line of bounded length, the target a finding path.
RULE_ID = r"^[A-Z]{2,4}-[0-9]{3}$"
TARGET = r"^[A-Za-z0-9_.*\[\]-]{1,300}$"
ONE_LINE = rf"^{LINE_CHAR}*$"
expected(ONE_LINE, "one line of text (no control characters or line breaks)")


class WaiverEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    rule: Annotated[str, StringConstraints(pattern=RULE_ID), Field(description=expected(
        RULE_ID, "a rule id, e.g. PWR-001"))]
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

    def matches(self, rule_id: str, path: str) -> bool:
        """Exact target path, or a pattern where `*` stands for any index or name (`site.rows[*].racks[*]`)."""
        if rule_id != self.entry.rule:
            return False
        parts = re.split(r"(\*)", self.entry.target)
        pattern = "".join(r"[^.\[\]]*" if part == "*" else re.escape(part) for part in parts)
        return re.fullmatch(pattern + r"(?:\..*)?", path) is not None  # the target and the paths below it

    def expired(self, today: dt.date) -> bool:
        return self.entry.expires < today

    def summary(self) -> dict[str, str]:
        e = self.entry
        return {"rule": e.rule, "target": e.target, "reason": e.reason, "expires": e.expires.isoformat(),
                "approver": e.approver, "file": self.file, "line": str(self.line)}


def load_waivers(path: Path | None) -> tuple[Waiver, ...]:
    if path is None:
        return ()
    source: Source = load_file(path)
    parsed = validate(WaiverFile, source)
    return tuple(Waiver(w, source.file, source.line_of(("waivers", i))) for i, w in enumerate(parsed.waivers))
