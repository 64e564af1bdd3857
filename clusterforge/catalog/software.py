"""Software sets known to work together, as catalog data: one row per release, each with its source.

SW-001 checks a blueprint's `software:` pins against these tables, SW-003 the SLURM release. The built-in rows
live in `catalog/data/software.yaml`; a site catalog (`--catalog site.yaml`) adds the sets it has qualified under the
same keys, and a built-in row cannot be redefined (a silent shadow would change every verdict that uses it).

These are the tables every vendor and target shares (SLURM's releases, GPU models and their architectures). An
accelerator vendor adds the tables of its stack and a target those of the software its fabric needs, each with its
catalog part (`CatalogPart.software`, in clusterforge/accelerators/<vendor>/ or clusterforge/targets/<name>/):
`tables_model` composes them in, each after the table its row's `AFTER` names, so listings keep related tables
together.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    create_model,
    model_validator,
)

from clusterforge.core.text import OneLine
from clusterforge.core.validation import expected

# A site catalog is as untrusted as a blueprint: a source is one line of text, a release plain numbers.
SOURCE_LINE = OneLine(3, 500)
SOURCE = SOURCE_LINE.pattern
Source = Annotated[str, SOURCE_LINE, Field(description=expected(
    SOURCE, "one line of text without control characters, 3 to 500 characters"))]
SHORT_LINE = OneLine(3, 120)
SHORT = SHORT_LINE.pattern
Short = Annotated[str, SHORT_LINE, Field(description=expected(
    SHORT, "one line of text without control characters, 3 to 120 characters"))]
RELEASE = r"^[0-9]{1,6}(\.[0-9]{1,6}){0,3}$"
Release = Annotated[str, StringConstraints(pattern=RELEASE), Field(description=expected(
    RELEASE, "a release number of one to four numeric parts, e.g. 580.65.06 or 13.0"))]


class Row(BaseModel):
    """One release and what it works with. `KEY` names the field that identifies the row in its table."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    KEY: ClassVar[str]
    TABLE: ClassVar[str] = ""  # the table's name where it differs from KEY
    AFTER: ClassVar[str] = ""  # a target's table: the table it is listed after (else last)
    DOC: ClassVar[tuple[str, str]] = ("", "")  # a target's table: its row keys and what the rules check, for the docs

    @classmethod
    def table(cls) -> str:
        return cls.TABLE or cls.KEY

    source: Source = Field(description="where the pairing is published; mark unconfirmed rows [U]")

    @property
    def key(self) -> str:
        return str(getattr(self, self.KEY))


Majors = Annotated[list[Annotated[int, Field(ge=1, le=99)]], Field(min_length=1, max_length=10)]
_RELEASE = TypeAdapter(Release)
_MAJORS = TypeAdapter(Majors)
_PIN_NAME = r"[a-z][a-z0-9_]{0,40}"
_MIN_KEY = re.compile(rf"min_({_PIN_NAME})\Z")
_MAJORS_KEY = re.compile(rf"({_PIN_NAME})_majors\Z")


class RequiresRow(Row):
    """A release of a component that works with a range of the set's other pins, said in the row's own keys as its
    release notes say it: `min_<pin>` is the oldest release of that `software:` pin it works with, `<pin>_majors`
    the major versions of it that it supports. A target's component that sits beside a vendor's stack (a fabric's
    plugin for the vendor's collectives) is such a row, so its check names no vendor: which pins it needs is the
    data's (`policies/software_compat.requirements`). Any other key is an error at load."""

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    @model_validator(mode="after")
    def _requirements_are_releases_and_majors(self) -> RequiresRow:
        for key, value in (self.model_extra or {}).items():
            kind = _RELEASE if _MIN_KEY.match(key) else _MAJORS if _MAJORS_KEY.match(key) else None
            if kind is None:
                raise ValueError(f"unknown key {key[:60]!r}: a requirement is min_<pin> (a release) or "
                                 "<pin>_majors (a list of major versions)")
            try:
                kind.validate_python(value)
            except ValidationError as error:
                raise ValueError(f"{key}: {error.errors()[0]['msg']}") from None
        return self

    def requires(self) -> dict[str, str]:
        """The oldest release of each pin it works with, by pin."""
        return {found[1]: value for key, value in (self.model_extra or {}).items() if (found := _MIN_KEY.match(key))}

    def majors(self) -> dict[str, list[int]]:
        """The major versions of each pin it supports, by pin."""
        return {found[1]: value for key, value in (self.model_extra or {}).items()
                if (found := _MAJORS_KEY.match(key))}


class GpuModelRow(Row):
    """A GPU model as the catalog names it (`gpus.model`), the architecture it is of, and what `clusterforge health
    perf` compares a measured GPU with: the names its vendor's tools report for it (how a node's result finds its
    model) and the vendor's datasheet peaks (a GPU far below its peak is slow even when the whole fleet is).

    The peaks are figures with a source of their own (`performance_source`), separate from the architecture's."""

    KEY = "gpu_model"
    gpu_model: Short = Field(description="the catalog's gpus.model, e.g. B200")
    architecture: Short = Field(description="a row of the gpu_architecture table, e.g. Blackwell")
    reported_names: Annotated[list[Short], Field(max_length=20, description=(
        "the names its vendor's management tool reports for this model as its product name: \"H100 80GB HBM3\" "
        "after the vendor's name"))] = []
    bf16_dense_tflops: Annotated[float, Field(gt=0, le=1_000_000, description=(
        "the datasheet's dense BF16 tensor throughput in TFLOP/s (without structured sparsity)"))] | None = None
    hbm_tb_s: Annotated[float, Field(gt=0, le=10_000, description=(
        "the datasheet's memory bandwidth in TB/s"))] | None = None
    performance_source: Source | None = Field(None, description="where bf16_dense_tflops and hbm_tb_s are published")

    @model_validator(mode="after")
    def _peaks_sourced(self) -> GpuModelRow:
        if (self.bf16_dense_tflops is not None or self.hbm_tb_s is not None) and self.performance_source is None:
            raise ValueError("bf16_dense_tflops and hbm_tb_s need a performance_source (the vendor's datasheet)")
        return self


class ArchitectureRow(Row):
    """The oldest release of its vendor's stack that supports a GPU architecture: a driver or a platform release,
    as the vendor's SW-005 check (its `architecture_checks`) reads it."""

    KEY, TABLE = "architecture", "gpu_architecture"
    architecture: Short
    min_driver: Release | None = Field(None, description="oldest Linux driver that supports it (driver vendors)")
    min_rocm: Release | None = Field(None, description="oldest platform release that supports it (platform vendors)")


YEAR_MONTH = r"^20[0-9]{2}-(0[1-9]|1[0-2])$"
YearMonth = Annotated[str, StringConstraints(pattern=YEAR_MONTH), Field(description=expected(
    YEAR_MONTH, "a month as YYYY-MM, e.g. 2028-08"))]


class SlurmRow(Row):
    """A SLURM release and until when someone ships security fixes for it (SW-003 warns after that month)."""

    KEY = "slurm"
    slurm: Release = Field(description="major.minor, e.g. 24.11")
    supported_until: YearMonth = Field(description="last month with security fixes, from SchedMD or a distribution")
    supported_by: Short = Field(description="who ships those fixes, e.g. Debian 13 trixie security support")


class Tables(BaseModel):
    """What every model of software tables is: lists of rows by table (`SoftwareTables`, or one composed with the
    targets' own by `tables_model`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def rows(self) -> Iterator[tuple[str, int, Row]]:
        """(table, index, row) of every row, in file order."""
        for table in type(self).model_fields:
            for index, row in enumerate(getattr(self, table)):
                yield table, index, row


class SoftwareTables(Tables):
    """The tables of one catalog file; every one may be empty or absent."""

    # the tables every vendor and target shares; tables_model adds the vendors' and the targets' own

    slurm: Annotated[list[SlurmRow], Field(max_length=1000)] = []
    gpu_model: Annotated[list[GpuModelRow], Field(max_length=1000)] = []
    gpu_architecture: Annotated[list[ArchitectureRow], Field(max_length=100)] = []


def tables_model(rows: Sequence[type[Row]]) -> type[Tables]:
    """The shared tables with these targets' own (a row class each), each placed after the table its `AFTER`
    names; a table name taken twice is a bug of the target that adds it."""
    if not rows:
        return SoftwareTables
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in SoftwareTables.model_fields.items()}
    order = list(fields)
    for row in rows:
        name = row.table()
        if name in fields:
            raise RuntimeError(f"software table {name!r} is defined twice")
        fields[name] = (Annotated[list[row], Field(max_length=1000)], [])  # type: ignore[valid-type]
        order.insert(order.index(row.AFTER) + 1 if row.AFTER in order else len(order), name)
    made: type[Tables] = create_model("SoftwareTables", __base__=Tables, __doc__=SoftwareTables.__doc__,
                                      **{name: fields[name] for name in order})
    return made


R = TypeVar("R", bound=Row)


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


class SoftwareCatalog:
    """Every table's rows by release, built-in and site rows together, each with the file it came from."""

    def __init__(self, tables: Sequence[str] = tuple(SoftwareTables.model_fields)) -> None:
        self._rows: dict[str, dict[str, Row]] = {table: {} for table in tables}
        self.origins: dict[tuple[str, str], str] = {}

    def add(self, table: str, row: Row, origin: str) -> str | None:
        """Add a row; the origin of the row it would redefine instead, if there is one."""
        if (table, row.key) in self.origins:
            return self.origins[table, row.key]
        self._rows[table][row.key] = row
        self.origins[table, row.key] = origin
        return None

    def copy(self) -> SoftwareCatalog:
        """A catalog that can take more rows without changing this one (the built-in rows are cached)."""
        other = SoftwareCatalog(list(self._rows))
        other._rows = {table: dict(rows) for table, rows in self._rows.items()}
        other.origins = dict(self.origins)
        return other

    def rows(self) -> Iterator[tuple[str, Row]]:
        """(table, row) of every row, tables in their usual order and releases oldest first."""
        for table, rows in self._rows.items():
            for version in sorted(rows, key=version_tuple):
                yield table, rows[version]

    def row(self, kind: type[R], version: str) -> R | None:
        """The row of `version` in the table of rows of `kind` (e.g. `row(SlurmRow, "24.11")`)."""
        found = self._rows.get(kind.table(), {}).get(version)
        return found if isinstance(found, kind) else None

    def row_in(self, table: str, version: str) -> Row | None:
        """The row of `version` in the table named `table`: how a target reads a vendor's table (the vendor's row
        class is not the target's to import)."""
        return self._rows.get(table, {}).get(version)

    def versions(self, table: str) -> list[str]:
        """The versions a table knows, oldest first (for 'known: ...' hints)."""
        return sorted(self._rows.get(table, {}), key=version_tuple)

    def __len__(self) -> int:
        return sum(len(rows) for rows in self._rows.values())
