"""One result per node, the node's own: how `health diag` and `health perf` turn what the nodes printed into results,
from a live run's labelled output or from a saved file, so that no node speaks for another.

A live run (node_lines.py says which node's task printed what): a node that printed exactly one readable result
naming itself has that result. A node that printed several (`printed 3 results ...`), one naming another node
(`printed a result naming gpu-0001`) or one that is not readable (not JSON, cut off, a required field missing or
wrong) has a problem instead, and fails: its output is all there is to judge it by, and none of it can be
trusted. The node it names is untouched: its own task's output decides its verdict.

The saved format (`--save FILE` writes it, `--from FILE` reads it): one line per object a node's task printed,
`NODE: OBJECT`, NODE being the node srun ran the task on (its label and the task order), never the object's own
`node` field. Lines starting with `#` are comments. The same rules then apply per NODE (two lines for one node, an
object naming another node). A saved file is input, so it is read strictly: a line that is not `NODE: {...}`, an
object that is not JSON or lacks a required field is an input problem at FILE:LINE (exit 2), not a verdict; delete
that node's lines to judge the rest without it. The older format, bare JSON lines, is refused: there the line's
own `node` field was the only identity, the very thing one node could forge for another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.operations.node_lines import KEPT, TaskOutput

NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")  # a name scontrol's NodeName= reads as one node
MAX_PROBLEMS = 20
R = TypeVar("R")


class _NotSaved(Exception):
    """A line that is not `NODE: {...}`; `older`: a bare JSON line of the refused older format."""

    def __init__(self, problem: Problem, older: bool) -> None:
        super().__init__(problem.message)
        self.problem, self.older = problem, older


class BadField(ValueError):
    """A field of a node's object that is not what the health script prints: (path, message)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class Own(Generic[R]):
    """A node's result, or why it has none it can be judged by (`problem`: the node fails with it)."""

    node: str
    result: R | None
    problem: str = ""


def node_field(data: Any) -> str:
    """The object's `node`, checked: the name it claims, which must be the node that printed it."""
    node = data.get("node") if isinstance(data, dict) else None
    if not isinstance(node, str) or not NODE_NAME.match(node):
        raise BadField("node", f"expected a node name of letters, digits, '.', '_' or '-', got {node!r}"[:200])
    return node


STATUSES = ("pass", "fail", "skipped")  # what the health script prints as a result's `status`, perf and diag alike


def node_and_status(data: Any) -> tuple[str, str]:
    """A result object's `node` and `status`, both required: a result without its status is no verdict (never
    read as `fail`). `BadField` names the first that is not as the health script prints it."""
    if not isinstance(data, dict):
        raise BadField("", "expected a JSON object")
    node = node_field(data)
    if "status" not in data:
        raise BadField("status", f"missing: expected one of {', '.join(STATUSES)}")
    status = data["status"]
    if status not in STATUSES:
        raise BadField("status", f"expected one of {', '.join(STATUSES)}, got {status!r}"[:200])
    return node, status


def _claim(text: str) -> str | None:
    """The `node` an object names, read leniently (for saying which nodes a flood of results named)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    node = data.get("node") if isinstance(data, dict) else None
    return node if isinstance(node, str) else None


def _several(count: int, named: Iterable[str | None], where: str = "") -> str:
    names = sorted({n if NODE_NAME.match(n) else shown(n, 40) for n in named if n is not None})
    naming = f" naming {', '.join(names[:5])}{', …' if len(names) > 5 else ''}" if names else ""
    many = f"more than {KEPT}" if count > KEPT else f"{count:,}"
    return f"printed {many} results{naming}{where} where one is expected: none of them counts"


def live(printed: dict[str, TaskOutput], order: Sequence[str], parse: Callable[[Any], R]) -> list[Own[R]]:
    """Each node of ORDER whose task printed an object: its own result, or its problem."""
    out: list[Own[R]] = []
    for node in order:
        task = printed.get(node)
        if task is None:
            continue
        if task.count > 1:
            out.append(Own(node, None, _several(task.count, (_claim(p.text) for p in task.objects))))
            continue
        [one] = task.objects
        if one.cut:
            out.append(Own(node, None, f"unreadable result: {one.cut}"))
            continue
        try:
            data = json.loads(one.text)
            result = parse(data)
            claimed = node_field(data)
        except BadField as bad:
            out.append(Own(node, None, f"unreadable result: {bad.path}: {bad}"[:500]))
            continue
        except ValueError as error:  # json.JSONDecodeError, and a number too large for float
            out.append(Own(node, None, f"unreadable result: not JSON: {error}"[:500]))
            continue
        out.append(Own(node, result) if claimed == node else Own(node, None, f"printed a result naming {claimed}"))
    return out


def saved_text(printed: dict[str, TaskOutput], order: Sequence[str], command: str, hostlist: str) -> str:
    """The saved format of a live run: a comment saying what it is, then `NODE: OBJECT` for every object kept."""
    lines = [f"# {command} --save: one line per object a node's task printed, `NODE: OBJECT`. NODE is the node srun",
             f"# ran that task on (srun --label, task N on the N-th node of {hostlist}), not the object's own claim."]
    for node in order:
        task = printed.get(node)
        if task is None:
            continue
        lines += [f"{node}: {p.text}" if not p.cut else f"{node}: (not kept: {p.cut}) {p.text[:200]}"
                  for p in task.objects]
        if task.count > len(task.objects):
            lines.append(f"# {node} printed more than {len(task.objects)} objects; the first {len(task.objects)} "
                         "are above")
    return "\n".join(lines) + "\n"


def _line(raw: str, number: int, file: str, parse: Callable[[Any], R]) -> tuple[str, R, str]:
    """(NODE, its result, the node the object names) of one saved line; BadField or a Problem when it is not one."""
    text = raw.rstrip("\r\n")
    node, sep, rest = text.partition(": ")
    if not sep or not NODE_NAME.match(node):
        if text.lstrip().startswith("{"):
            raise _NotSaved(Problem(
                "a result without the node that printed it: in this older format the line's own `node` field is the "
                "only identity, and one node's task can print lines naming any node", file=file, line=number,
                hint="save a run with --save FILE: each line is `NODE: {...}`, NODE the node srun ran the task on"),
                older=True)
        raise _NotSaved(Problem(f"expected `NODE: {{...}}` (a saved result), got {shown(text)}", file=file,
                                line=number), older=False)
    data = json.loads(rest)
    return node, parse(data), node_field(data)


def _printed_by(raw: str) -> str:
    node = raw.partition(": ")[0]
    return f"printed by {node if NODE_NAME.match(node) else shown(node, 70)}; delete its lines to judge the rest"


def read_saved(lines: Iterable[str], file: str, parse: Callable[[Any], R]) -> list[Own[R]]:
    """Each node's result in a saved file, in the order the nodes first appear; every bad line is a problem at
    FILE:LINE (all of them, up to MAX_PROBLEMS, so one run shows what to fix)."""
    found: dict[str, list[tuple[int, R, str]]] = {}
    problems: list[Problem] = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        try:
            node, result, claimed = _line(raw, number, file, parse)
        except BadField as bad:
            problems.append(Problem(f"{bad} ({_printed_by(raw)})", file=file, line=number, path=bad.path))
        except ValueError as error:
            problems.append(Problem(f"not a JSON object: {str(error)[:100]} ({_printed_by(raw)})", file=file,
                                    line=number))
        except _NotSaved as bad:
            problems.append(bad.problem)
            if bad.older:
                break  # one line says it: every line of such a file is the same
        else:
            found.setdefault(node, []).append((number, result, claimed))
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem("more bad lines not shown", file=file))
            break
    if problems:
        raise ClusterforgeError(problems)
    out: list[Own[R]] = []
    for node, seen in found.items():
        where = f" (lines {', '.join(str(n) for n, _, _ in seen[:5])}{', …' if len(seen) > 5 else ''})"
        if len(seen) > 1:
            out.append(Own(node, None, _several(len(seen), (c for _, _, c in seen), where)))
        elif seen[0][2] != node:
            out.append(Own(node, None, f"printed a result naming {seen[0][2]} (line {seen[0][0]})"))
        else:
            out.append(Own(node, seen[0][1]))
    return out
