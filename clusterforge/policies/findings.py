"""A Finding: one rule's verdict on one target, located in the blueprint."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from clusterforge.errors import one_line
from clusterforge.yamlsource import PathKey, format_path


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
    group: str = "cluster"
    minimum: bool = False  # the limit is a floor (PSUs, NICs): no utilisation percentage
    waiver: dict[str, Any] | None = field(default=None, compare=False)

    def render(self) -> str:
        """`file:line: ID: message` for logs and refusals."""
        return one_line(f"{self.file}:{self.line}: {self.id}: {self.message}")

    @property
    def utilisation(self) -> float | None:
        if self.measured is None or not self.limit or self.minimum:
            return None
        return self.measured / self.limit

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("waiver")
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
    group: str = "cluster"
    minimum: bool = False

    @property
    def path_text(self) -> str:
        return format_path(self.path)
