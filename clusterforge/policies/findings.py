"""A Finding: one rule's verdict on one target, located in the blueprint."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from clusterforge.core.errors import one_line
from clusterforge.files.yamlsource import PathKey, format_path


@dataclass(frozen=True)
class RackRef:
    """One rack, so the report can find it without parsing a label."""

    row: str
    rack: str

    @property
    def label(self) -> str:
        return f"row {self.row} / rack {self.rack}"


@dataclass(frozen=True)
class RowRef:
    """A whole row: its cooling plant, not one rack."""

    row: str

    @property
    def label(self) -> str:
        return f"row {self.row}"


@dataclass(frozen=True)
class PoolRef:
    """A pool of nodes, where the blueprint has no racks to point at (the cloud)."""

    pool: str

    @property
    def label(self) -> str:
        return f"pool {self.pool}"


@dataclass(frozen=True)
class WaiverRef:
    """An entry of the waiver file: the engine's own findings about waivers, not a rule's about the design."""

    index: int

    @property
    def label(self) -> str:
        return "waivers"


Where: TypeAlias = RackRef | RowRef | PoolRef | WaiverRef | None
"""Where a finding is; None is the cluster as a whole."""

_JSON_KEYS = ("id", "level", "path", "message", "hint", "measured", "limit", "unit", "file", "line", "group",
              "minimum", "cluster")


def label_of(where: Where) -> str:
    """The heading text output groups by, and the `group` key JSON readers already parse."""
    return "cluster" if where is None else where.label


@dataclass(frozen=True)
class Finding:
    """`{id, level, path, message, hint, measured, limit, file, line}`: the value, the limit and the fix."""

    id: str
    level: str
    path: str
    message: str
    hint: str = ""
    measured: float | None = None
    limit: float | None = None
    unit: str = ""
    file: str = ""
    line: int = 0
    where: Where = None
    minimum: bool = False  # the limit is a floor (PSUs, NICs): no utilisation percentage
    waiver: dict[str, Any] | None = field(default=None, compare=False)
    cluster: str = ""  # the blueprint's `name:` (`site:<name>` for teams checked together): whose waivers apply

    def render(self) -> str:
        """`file:line: ID: message` for logs and refusals."""
        return one_line(f"{self.file}:{self.line}: {self.id}: {self.message}")

    @property
    def group(self) -> str:
        """The label, kept because JSON output and text grouping have always carried it."""
        return label_of(self.where)

    @property
    def utilisation(self) -> float | None:
        if self.measured is None or not self.limit or self.minimum:
            return None
        return self.measured / self.limit

    def to_json(self) -> dict[str, Any]:
        """The finding as plain data; its file named as every report names it (files.paths.report_path)."""
        from clusterforge.files.paths import report_path

        data: dict[str, Any] = {key: getattr(self, key) for key in _JSON_KEYS}
        data["file"] = report_path(self.file)
        for key in ("measured", "limit"):
            if isinstance(data[key], float):
                data[key] = round(data[key], 3)
        if self.waiver is not None:
            data["waiver"] = self.waiver
        return data


@dataclass(frozen=True)
class Draft:
    """What a rule yields: the engine adds the id, default level, file and line."""

    path: PathKey
    message: str
    hint: str = ""
    measured: float | None = None
    limit: float | None = None
    unit: str = ""
    level: str | None = None
    where: Where = None
    minimum: bool = False

    @property
    def path_text(self) -> str:
        return format_path(self.path)
