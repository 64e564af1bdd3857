"""A Prometheus export of the nodes' BMC readings, read as untrusted input: the samples the report compares with
the plan, and nothing else.

Two forms are read, told apart by their first character: the JSON that Prometheus's HTTP API returns for an
instant query (`/api/v1/query?query={__name__=~"clusterforge_bmc_.+"}`: `{"status": "success", "data":
{"resultType": "vector", "result": [...]}}`), and the text exposition format that a `/federate` or an
exporter's `/metrics` endpoint serves, parsed by prometheus_client's own parser one line at a time (a sample
is one line in that format, so each problem names its line). Only the two metrics the telemetry role exports
are kept; series of other metrics are counted and left out, so a whole federate dump may be given.

The file is bounded (EXPORT_BYTES) and every problem is an input problem (exit 2) located by line, or by the
JSON path where the JSON parser gives no line.
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown

POWER = "clusterforge_bmc_power_watts"  # gauge: watts a node draws (or one of its feeds, with a feed label)
INLET = "clusterforge_bmc_inlet_celsius"  # gauge: the node's inlet air temperature
METRICS = (POWER, INLET)
EXPORT_BYTES = limits.Limit("export_bytes", 64 * 1024 * 1024, "bytes in one Prometheus export")
MAX_LABEL = 200  # characters of a label value kept: names of racks, feeds and nodes are far shorter


@dataclass(frozen=True)
class Sample:
    """One reading: its metric, where it was taken (node, rack and feed as labelled) and its value."""

    metric: str
    node: str | None  # the `node` label, else the host part of `instance`
    rack: str | None
    feed: str | None
    value: float
    time: float | None  # seconds since the epoch, when the export gives one
    line: int = 0  # where in the file: the line (text format) ...
    path: str = ""  # ... or the JSON path


@dataclass(frozen=True)
class Export:
    """The kept samples of one file, and how many series it left out and why."""

    file: str
    samples: tuple[Sample, ...]
    other: int = 0  # series of other metrics
    stale: int = 0  # series whose value is NaN (Prometheus's stale marker, or a BMC that gave no reading)


def read_export(path: Path) -> Export:
    """The export at `path`: a regular file of at most EXPORT_BYTES of UTF-8, in either form."""
    name = str(path)
    limit = EXPORT_BYTES.value
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ClusterforgeError(Problem("not a regular file, expected a Prometheus export", name))
        if info.st_size > limit:
            raise ClusterforgeError(EXPORT_BYTES.problem(info.st_size, name))
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise ClusterforgeError(Problem("no such file", name)) from None
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read: {exc.strerror}", name)) from None
    if len(data) > limit:
        raise ClusterforgeError(EXPORT_BYTES.problem(f"more than {limit:,}", name))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ClusterforgeError(Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", name, line)) from None
    return parse_export(text, name)


def parse_export(text: str, file: str) -> Export:
    """Samples of an export given as text: JSON when it starts with `{`, else the text exposition format."""
    if text.lstrip().startswith("{"):
        return _from_json(text, file)
    return _from_text(text, file)


def _from_json(text: str, file: str) -> Export:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClusterforgeError(Problem(f"not JSON: {exc.msg}", file, exc.lineno)) from None
    except RecursionError:
        raise ClusterforgeError(Problem("not a Prometheus query result: nested too deeply", file)) from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        status = doc.get("status") if isinstance(doc, dict) else None
        raise ClusterforgeError(Problem(f"not a successful Prometheus query result (status {shown(status)})", file,
                                        path="status", hint="export /api/v1/query's answer as it comes"))
    data = doc.get("data")
    kind = data.get("resultType") if isinstance(data, dict) else None
    if kind != "vector":
        hint = ("a range query's matrix has many values per series: export an instant query (/api/v1/query)"
                if kind == "matrix" else "export an instant query's answer (/api/v1/query)")
        raise ClusterforgeError(Problem(f"result type {shown(kind)}, expected 'vector'", file, path="data.resultType",
                                        hint=hint))
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list):
        raise ClusterforgeError(Problem("expected a list of series", file, path="data.result"))
    samples: list[Sample] = []
    other = stale = 0
    for i, item in enumerate(result):
        where = f"data.result[{i}]"
        metric = item.get("metric") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(metric, dict) or not all(isinstance(v, str) for v in metric.values()):
            raise ClusterforgeError(Problem("expected a `metric` object of label names to strings", file,
                                            path=f"{where}.metric"))
        name = metric.get("__name__")
        if name not in METRICS:
            if name is None:
                raise ClusterforgeError(Problem(
                    "a series without __name__: which metric it is cannot be told", file, path=f"{where}.metric",
                    hint=f"query the metrics by name ({POWER}, {INLET}), not through a function that drops it"))
            other += 1
            continue
        if (not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], int | float)
                or isinstance(value[0], bool) or not isinstance(value[1], str)):
            raise ClusterforgeError(Problem("expected [timestamp, \"value\"]", file, path=f"{where}.value"))
        try:
            number = float(value[1])
        except ValueError:
            raise ClusterforgeError(Problem(f"value {shown(value[1])} is not a number", file,
                                            path=f"{where}.value[1]")) from None
        sample = _sample(name, metric, number, float(value[0]), file, 0, f"{where}.value[1]")
        if sample is None:
            stale += 1
        else:
            samples.append(sample)
    return Export(file, tuple(samples), other, stale)


def _from_text(text: str, file: str) -> Export:
    from prometheus_client.parser import text_string_to_metric_families

    samples: list[Sample] = []
    other = stale = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):  # HELP, TYPE and comments: nothing to compare
            continue
        try:
            parsed = [s for family in text_string_to_metric_families(line + "\n") for s in family.samples]
        except Exception as exc:  # the parser raises ValueError, IndexError, ...: no one documented type
            raise ClusterforgeError(Problem(f"not a Prometheus text sample: {shown(str(exc), 120)}", file,
                                            number)) from None
        for parsed_sample in parsed:
            if parsed_sample.name not in METRICS:
                other += 1
                continue
            sample = _sample(parsed_sample.name, dict(parsed_sample.labels), float(parsed_sample.value),
                             _seconds(parsed_sample.timestamp), file, number, "")
            if sample is None:
                stale += 1
            else:
                samples.append(sample)
    return Export(file, tuple(samples), other, stale)


def _seconds(timestamp: Any) -> float | None:
    """prometheus_client's timestamp (a float or its Timestamp type) as seconds, or None."""
    if timestamp is None:
        return None
    return float(timestamp) if isinstance(timestamp, int | float) else float(str(timestamp))


def _sample(metric: str, labels: dict[str, Any], value: float, time: float | None, file: str, line: int,
            path: str) -> Sample | None:
    """The sample, None when its value is NaN (no reading); a value no BMC gives is an input problem."""
    if math.isnan(value):
        return None
    if math.isinf(value) or (metric == POWER and value < 0):
        raise ClusterforgeError(Problem(f"{metric} of {value:g} is no reading a BMC gives", file, line, path))
    node = labels.get("node") or _host(labels.get("instance"))
    return Sample(metric, _label(node, "node", file, line, path), _label(labels.get("rack"), "rack", file, line, path),
                  _label(labels.get("feed"), "feed", file, line, path), value, time, line, path)


def _label(value: Any, name: str, file: str, line: int, path: str) -> str | None:
    if value is None or value == "":
        return None
    text = str(value)
    if len(text) > MAX_LABEL:
        raise ClusterforgeError(Problem(f"label {name} is {len(text):,} characters long (at most {MAX_LABEL})", file,
                                        line, path))
    return text


def _host(instance: Any) -> str | None:
    """The host part of an `instance` label: `gpu-0001:9100` -> gpu-0001, `[fd00::1]:9100` -> fd00::1."""
    if not isinstance(instance, str) or not instance:
        return None
    if instance.startswith("["):
        return instance[1:].split("]", 1)[0] or None
    host, colon, port = instance.rpartition(":")
    return host if colon and port.isdigit() and host else instance
