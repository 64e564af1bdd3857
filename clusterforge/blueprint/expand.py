"""Compact blueprints: rows and racks written as groups, expanded before validation.

A group is a row or rack whose `name` holds a range (`r[000-173]`, zero padding as written) or that gives
`count: N` (names `<name>01`…). Rack names may contain `{row}` for the row they stand in, so names stay
unique across the hall (feeds may omit `name`: the model names them after their rack).
Each expanded rack keeps pointing at its group's lines, so findings land on the line that wrote it.
"""

from __future__ import annotations

import re
from typing import Any

from clusterforge.core.errors import ClusterforgeError, shown
from clusterforge.core.hints import closest
from clusterforge.core.limits import RACKS
from clusterforge.files.yamlsource import PathKey, Source, format_path

_RANGE = re.compile(r"^(?P<pre>[^\[\]]*)\[(?P<lo>\d+)-(?P<hi>\d+)\](?P<post>[^\[\]]*)$")
MAX_GROUP = 100_000


def _group(entry: dict[str, Any], path: PathKey, source: Source,
           row: str | None = None) -> tuple[str, str, int, int, int] | tuple[str, int] | None:
    """What a group stands for without writing its names out: (prefix, suffix, first, last, width) for a
    range, (name, count) for a count ((name, 0) for a plain rack whose name holds {row}), None for a plain
    entry. Bad ranges and counts are input problems."""
    name = entry.get("name")
    count = entry.get("count")
    if not isinstance(name, str):
        return None
    if row is not None:
        name = name.replace("{row}", row)
    match = _RANGE.match(name)
    if match is None and "[" in name:
        raise ClusterforgeError(source.problem((*path, "name"), f"bad name range {shown(name)}",
                                               "write it as prefix[first-last]suffix, e.g. a[01-40]"))
    if match is not None:
        if count is not None:
            raise ClusterforgeError(source.problem((*path, "count"), "give a name range or count, not both"))
        lo, hi = int(match["lo"]), int(match["hi"])
        width = len(match["lo"]) if match["lo"].startswith("0") else 0
        if hi < lo or hi - lo >= MAX_GROUP:
            raise ClusterforgeError(source.problem((*path, "name"), f"range {lo}-{hi} is empty or too large",
                                                   f"the last number must be ≥ the first, at most {MAX_GROUP:,}"))
        return match["pre"], match["post"], lo, hi, width
    if count is None:
        return (name, 0) if row is not None and name != entry.get("name") else None
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_GROUP:
        raise ClusterforgeError(source.problem((*path, "count"), f"group count must be 1..{MAX_GROUP:,}",
                                               "or use a name range such as a[01-40]"))
    return name, count


def _size(entry: Any, path: PathKey, source: Source) -> int:
    """How many rows or racks an entry stands for once expanded (1 for a plain entry)."""
    group = _group(entry, path, source) if isinstance(entry, dict) else None
    if group is None:
        return 1
    if len(group) == 5:
        return group[3] - group[2] + 1
    return group[1] or 1


def _names(entry: dict[str, Any], path: PathKey, source: Source, row: str | None = None) -> list[str] | None:
    """The names a group stands for, or None for a plain entry."""
    group = _group(entry, path, source, row)
    if group is None:
        return None
    if len(group) == 5:
        pre, post, lo, hi, width = group
        return [f"{pre}{i:0{width}d}{post}" for i in range(lo, hi + 1)]
    name, count = group
    if count == 0:
        return [name]
    digits = max(2, len(str(count)))
    return [f"{name}{i:0{digits}d}" for i in range(1, count + 1)]


def check_racks(source: Source) -> None:
    """Refuse, before writing anything out, a site whose row and rack groups stand for more than limits.RACKS
    racks (rows × racks per row multiply: `r[0-999]` × `k[0-999]` is a million racks from two lines)."""
    site = source.data.get("site") if isinstance(source.data, dict) else None
    rows = site.get("rows") if isinstance(site, dict) else None
    if not isinstance(rows, list):
        return
    total = 0
    limit = RACKS.value
    for ri, row in enumerate(rows):
        racks = row.get("racks") if isinstance(row, dict) else None
        if not isinstance(racks, list):
            continue
        per_row = sum(_size(rack, ("site", "rows", ri, "racks", ki), source) for ki, rack in enumerate(racks))
        total += _size(row, ("site", "rows", ri), source) * per_row
        if total > limit:
            path: PathKey = ("site", "rows", ri)
            raise ClusterforgeError(RACKS.problem(f"at least {total:,}", source.file, source.line_of(path),
                                                  format_path(path)))


def _racks(row: dict[str, Any], row_name: str, row_path: PathKey, new_row_path: PathKey, source: Source,
           aliases: dict[PathKey, PathKey]) -> Any:
    racks = row.get("racks")
    if not isinstance(racks, list):
        return racks  # the model reports the wrong type
    out: list[Any] = []
    for ki, rack in enumerate(racks):
        path = (*row_path, "racks", ki)
        names = _names(rack, path, source, row_name) if isinstance(rack, dict) else None
        if names is None:
            if new_row_path != row_path or len(out) != ki:
                aliases[(*new_row_path, "racks", len(out))] = path
            out.append(rack)
            continue
        body = {k: v for k, v in rack.items() if k not in ("name", "count")}
        for name in names:
            aliases[(*new_row_path, "racks", len(out))] = path
            out.append({"name": name, **body})
    return out


def apply_placements(source: Source) -> Source:
    """Put a team blueprint's `placement` entries into the racks of its (shared) site, located at the entry."""
    data = source.data
    placements = data.get("placement") if isinstance(data, dict) else None
    site = data.get("site") if isinstance(data, dict) else None
    if not placements or not isinstance(placements, list) or not isinstance(site, dict):
        return source
    listed = site.get("rows")
    rows: list[Any] = listed if isinstance(listed, list) else []
    where: dict[str, tuple[int, int]] = {}
    for ri, row in enumerate(rows):
        racks = row.get("racks") if isinstance(row, dict) else None
        for ki, rack in enumerate(racks if isinstance(racks, list) else []):
            if isinstance(rack, dict) and isinstance(rack.get("name"), str):
                where.setdefault(rack["name"], (ri, ki))
    new_rows = [dict(row) if isinstance(row, dict) else row for row in rows]
    aliases = dict(source.aliases)
    for i, entry in enumerate(placements):
        if not isinstance(entry, dict) or not isinstance(entry.get("rack"), str):
            continue  # the model reports the shape
        if entry["rack"] not in where:
            suggestion = closest(entry["rack"], where)
            raise ClusterforgeError(source.problem(
                ("placement", i, "rack"), f"no rack {shown(entry['rack'])} in the site",
                f"did you mean {suggestion}?" if suggestion else ""))
        ri, ki = where[entry["rack"]]
        racks = new_rows[ri]["racks"] = list(new_rows[ri]["racks"])
        rack = racks[ki] = dict(racks[ki])
        devices = rack["devices"] = list(rack.get("devices") or [])
        aliases[("site", "rows", ri, "racks", ki, "devices", len(devices))] = ("placement", i)
        devices.append({k: v for k, v in entry.items() if k != "rack"})
    out = {**data, "site": {**site, "rows": new_rows}}
    return Source(out, source.file, source.lines, aliases, source.includes)


def needs_expansion(data: Any) -> bool:
    site = data.get("site") if isinstance(data, dict) else None
    rows = site.get("rows") if isinstance(site, dict) else None
    if not isinstance(rows, list):
        return False
    for row in rows:
        if not isinstance(row, dict):
            continue
        if "count" in row or "[" in str(row.get("name", "")):
            return True
        racks = row.get("racks")
        for rack in racks if isinstance(racks, list) else []:
            if isinstance(rack, dict) and ("count" in rack or "[" in str(rack.get("name", ""))
                                           or "{row}" in str(rack.get("name", ""))):
                return True
    return False


def expand(source: Source) -> Source:
    """Source with row and rack groups written out; lines of expanded entries map to their group."""
    check_racks(source)
    if not needs_expansion(source.data):
        return source
    data = dict(source.data)
    site = dict(data["site"])
    aliases: dict[PathKey, PathKey] = {}
    rows: list[Any] = []
    for ri, row in enumerate(site["rows"]):
        path: PathKey = ("site", "rows", ri)
        if not isinstance(row, dict):
            rows.append(row)
            continue
        names: list[Any] = _names(row, path, source) or [row.get("name")]
        body = {k: v for k, v in row.items() if k not in ("name", "count")}
        for name in names:
            new_path: PathKey = ("site", "rows", len(rows))
            if new_path != path:
                aliases[new_path] = path
            rows.append({"name": name, **body,
                         "racks": _racks(row, str(name), path, new_path, source, aliases)})
    site["rows"] = rows
    data["site"] = site
    return Source(data, source.file, source.lines, {**source.aliases, **aliases}, source.includes)
