"""Waivers as data: rule id, target path, reason, expiry and approver. Waived findings are still reported."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from clusterforge.validation import validate
from clusterforge.yamlsource import Source, load_file

EXPIRED_ID = "WVR-001"
UNUSED_ID = "WVR-002"


class WaiverEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rule: Annotated[str, Field(pattern=r"^[A-Z]{2,4}-\d{3}$")]
    target: Annotated[str, Field(min_length=1)]
    reason: Annotated[str, Field(min_length=10, description="why this is acceptable, for the reviewer")]
    expires: dt.date
    approver: str = ""


class WaiverFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    apiVersion: str = "clusterforge/v1"
    kind: str = "Waivers"
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
        return re.fullmatch(pattern, path) is not None or path.startswith(self.entry.target + ".")

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
