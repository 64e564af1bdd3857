"""AWS Price List offer files in their CSV form (the Price List Bulk API's `index.csv`), read row by row.

A region's AmazonEC2 file is hundreds of MB, so nothing here holds more than one line of it: the file is read as
text, one line at a time up to MAX_LINE_CHARS (a longer line is refused before it is read whole), through
`csv.reader`, which yields one row per price dimension. The format (docs.aws.amazon.com/awsaccountbilling,
"Reading the service price list file for AWS services"): five rows of metadata (`FormatVersion`, `Disclaimer`,
`Publication Date`, `Version`, `OfferCode`, each a name and a value), then the header, then one row per price.
Columns are found by name, never by position; a name is compared as a key (`column_key`): lowercase letters and
digits only, so the CSV's `Pre Installed S/W` is the JSON form's `preInstalledSw` and `Instance Type` its
`instanceType`.

Everything read is untrusted: the file was downloaded, maybe by someone else. What reaches a price catalog from
it is checked against a pattern first (the offer's code, version and date, a row's SKU and rate code, its price),
and a file that is not an offer file is refused at its line (`FILE:LINE: message`) with what was expected.
"""

from __future__ import annotations

import csv
import datetime
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from clusterforge.core.errors import ClusterforgeError, Problem, shown

if TYPE_CHECKING:
    from _csv import Reader

MAX_LINE_CHARS = 1 << 20  # a row of AmazonEC2's CSV is about 1.5 KB; a 1 MiB line is no offer file's
MAX_COLUMNS = 1_000  # AmazonEC2 has about 100
MAX_RECORD_LINES = 16  # lines one row may span (a quoted field may hold a line break; none of AWS's does)
METADATA = ("FormatVersion", "Disclaimer", "Publication Date", "Version", "OfferCode")
HEADER_LINE = len(METADATA) + 1
BULK_API = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws"
# What an offer's identity may be before it is written into a price's source.
_FORMAT_VERSION = re.compile(r"v[0-9]{1,3}\.[0-9]{1,3}")
_PUBLISHED = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_VERSION = re.compile(r"[0-9]{8,20}")
_OFFER_CODE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,63}")
_CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.]{0,99}")  # a SKU, an offer term code or a rate code
_PRICE = re.compile(r"[0-9]{1,12}(\.[0-9]{1,16})?")


def column_key(name: str) -> str:
    """A column's name as a key: `Pre Installed S/W` and `preInstalledSw` are both `preinstalledsw`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class Offer:
    """One offer file's identity, as its metadata rows state it, and where its columns are."""

    path: Path
    offer_code: str  # AmazonEC2, AmazonFSx
    version: str  # 20250912225308
    published: str  # 2025-09-12T22:53:08Z
    columns: dict[str, int]  # column_key(name) -> index

    @property
    def day(self) -> str:
        """The publication's day, ISO (a price's `date`)."""
        return self.published[:10]

    def url(self, region: str) -> str:
        """Where this version of the offer's regional file is published (its region index's `versionUrl`)."""
        return f"{BULK_API}/{self.offer_code}/{self.version}/{region}/index.csv"

    def problem(self, line: int, message: str, hint: str = "") -> ClusterforgeError:
        return ClusterforgeError(Problem(message, str(self.path), line, hint=hint))

    def require(self, *keys: str) -> None:
        """Refuse an offer whose header lacks one of these columns (by column_key)."""
        missing = [key for key in keys if key not in self.columns]
        if missing:
            raise self.problem(HEADER_LINE, f"the header has no column {', '.join(missing)} ({self.offer_code} offer)",
                               "is this the offer's regional index.csv as AWS publishes it?")


@dataclass(frozen=True)
class Row:
    """One price dimension: its line in the file and its fields, read by column key."""

    offer: Offer
    line: int
    fields: list[str]

    def get(self, key: str) -> str:
        """The field of the column `key` ("" where the file has no such column)."""
        index = self.offer.columns.get(key)
        return self.fields[index] if index is not None else ""

    def code(self, key: str) -> str:
        """A SKU or rate code, checked before it is written anywhere."""
        value = self.get(key)
        if not _CODE.fullmatch(value):
            raise self.offer.problem(self.line, f"{key} {shown(value)} is not a price list code",
                                     "letters, digits and '.', as AWS writes SKUs and rate codes")
        return value

    def usd(self) -> Decimal:
        """The row's price per unit in US dollars: a plain decimal, above zero and below a billion."""
        text = self.get("priceperunit")
        try:
            value = Decimal(text) if _PRICE.fullmatch(text) else None
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            value = None
        if value is None or not 0 < value < 1_000_000_000:
            raise self.offer.problem(self.line, f"PricePerUnit {shown(text)} is not a price",
                                     "a decimal above 0 in US dollars, as 55.0400000000")
        return value


class _Lines:
    """The file's lines, each at most MAX_LINE_CHARS long (a longer one is refused before it is read whole), and at
    most MAX_RECORD_LINES to one row (a quoted field may hold a line break; a row may not grow without end)."""

    def __init__(self, path: Path, stream: TextIO) -> None:
        self.path, self.stream = path, stream
        self.number = 0  # lines read
        self.in_row = 0  # lines read since the last row ended

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        self.number += 1
        self.in_row += 1
        try:
            line = self.stream.readline(MAX_LINE_CHARS + 1)
        except UnicodeDecodeError:
            raise self.refused("not UTF-8 text", "an offer file is UTF-8 CSV: download index.csv") from None
        if not line:
            raise StopIteration
        if len(line) > MAX_LINE_CHARS:
            raise self.refused(f"a line longer than {MAX_LINE_CHARS:,} characters",
                               "no offer file has one: is this the price list's index.csv?")
        if self.in_row > MAX_RECORD_LINES:
            raise self.refused(f"a row spans more than {MAX_RECORD_LINES} lines",
                               "an unclosed quote: no offer file has one")
        return line

    def refused(self, message: str, hint: str) -> ClusterforgeError:
        return ClusterforgeError(Problem(message, str(self.path), self.number, hint=hint))


def _refuse_json(path: Path, stream: TextIO) -> None:
    """An empty file, or the offer's JSON form (its first character), refused before a line of it is read."""
    try:
        first = stream.read(1)
        stream.seek(0)
    except UnicodeDecodeError:
        first = "?"
    if not first:
        raise ClusterforgeError(Problem("empty: not a price list offer file", str(path), 1))
    if first in "{[":
        raise ClusterforgeError(Problem("this is the JSON form of a price list", str(path), 1, hint=(
            "download the CSV form of the same offer: the same URL ending in index.csv instead of index.json")))


def _metadata(path: Path, reader: Reader) -> tuple[str, str, str]:
    """(offer code, version, publication date) from the five metadata rows, each checked."""
    values: dict[str, str] = {}
    for line, name in enumerate(METADATA, 1):
        row = next(reader, None)
        if row is None or len(row) != 2 or row[0] != name:
            said = shown(row[0]) if row else "nothing"
            raise ClusterforgeError(Problem(
                f"not a price list offer file: line {line} should be {name!r} and its value, not {said}",
                str(path), line, hint="an offer file's CSV form starts with FormatVersion, Disclaimer, "
                "Publication Date, Version and OfferCode, one a line"))
        values[name] = row[1]
    checks = (("FormatVersion", _FORMAT_VERSION, "v1.0"), ("Publication Date", _PUBLISHED, "2025-09-12T22:53:08Z"),
              ("Version", _VERSION, "20250912225308"), ("OfferCode", _OFFER_CODE, "AmazonEC2"))
    for name, pattern, example in checks:
        if not pattern.fullmatch(values[name]):
            raise ClusterforgeError(Problem(f"{name} {shown(values[name])} is not an offer's", str(path),
                                            METADATA.index(name) + 1, hint=f"e.g. {example}"))
    day = values["Publication Date"][:10]
    try:
        datetime.date.fromisoformat(day)
    except ValueError:
        raise ClusterforgeError(Problem(f"Publication Date {shown(values['Publication Date'])} is no date",
                                        str(path), 3)) from None
    return values["OfferCode"], values["Version"], values["Publication Date"]


@contextmanager
def offer_rows(path: Path) -> Iterator[tuple[Offer, Iterator[Row]]]:
    """The offer file at `path`, checked as one (its metadata, a header), and its rows, read as they are
    iterated: the file stays open inside the `with` block only."""
    try:
        stream = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read: {exc.strerror or type(exc).__name__}", str(path))) from None
    with stream:
        lines = _Lines(path, stream)
        _refuse_json(path, stream)
        reader = csv.reader(lines, strict=True)
        try:
            code, version, published = _metadata(path, reader)
            lines.in_row = 0
            header = next(reader, None)
            lines.in_row = 0
        except csv.Error as exc:
            raise ClusterforgeError(Problem(f"not CSV: {exc}", str(path), reader.line_num)) from None
        if header is None or len(header) > MAX_COLUMNS:
            raise ClusterforgeError(Problem("no header row after the metadata" if header is None else
                                            f"more than {MAX_COLUMNS} columns", str(path), HEADER_LINE))
        columns: dict[str, int] = {}
        for index, name in enumerate(header):
            columns.setdefault(column_key(name), index)
        offer = Offer(path, code, version, published, columns)
        yield offer, _rows(offer, reader, lines, len(header))


def _rows(offer: Offer, reader: Reader, lines: _Lines, width: int) -> Iterator[Row]:
    """Each row after the header, with the line it ends on; a row of another width than the header is refused."""
    while True:
        try:
            fields = next(reader, None)
        except csv.Error as exc:
            raise offer.problem(reader.line_num, f"not CSV: {exc}") from None
        if fields is None:
            return
        lines.in_row = 0
        line = reader.line_num
        if len(fields) != width:
            if fields == []:  # a blank line
                continue
            raise offer.problem(line, f"{len(fields)} fields where the header has {width}",
                                "a cut or altered offer file: download it again")
        yield Row(offer, line, fields)
