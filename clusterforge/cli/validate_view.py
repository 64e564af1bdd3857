"""`validate --format json`: one document for CI and editors' tasks, whatever the number of files.

    {"ok": false,
     "errors": [],                        problems that belong to no one blueprint (a --catalog file)
     "files": [{"file": "a.yaml", "ok": false, "cluster": null,
                "errors": [{"file": "site.yaml", "line": 12, "path": "rows[0].name", "message": "...", "hint": ""}]},
               {"file": "b.yaml", "ok": true, "errors": [],
                "cluster": {"name": "vision", "target": "onprem", "nodes": 16, "pools": 1, "racks": 4}}]}

Every key is always there. An error's `file` may be a file the blueprint includes; files are named as the other
machine outputs name them (relative, files.paths.machine_path).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clusterforge.core.errors import Problem
from clusterforge.files.paths import machine_path


@dataclass(frozen=True)
class Summary:
    """What a valid blueprint holds, as the text output says it."""

    name: str
    target: str
    nodes: int
    pools: int
    racks: int | None

    def text(self) -> str:
        pools = f"{self.pools} pool{'s' if self.pools != 1 else ''}"
        racks = f", {self.racks} racks" if self.racks is not None else ""
        return f"{self.name}, target {self.target}, {self.nodes} nodes in {pools}{racks}"


@dataclass(frozen=True)
class FileResult:
    file: str
    problems: tuple[Problem, ...] = ()
    summary: Summary | None = None


def problem_data(problem: Problem) -> dict[str, Any]:
    return {"file": machine_path(problem.file), "line": problem.line, "path": problem.path,
            "message": problem.message, "hint": problem.hint}


def _file_data(result: FileResult) -> dict[str, Any]:
    summary = result.summary
    return {"file": machine_path(result.file), "ok": not result.problems,
            "errors": [problem_data(p) for p in result.problems],
            "cluster": None if summary is None else {"name": summary.name, "target": summary.target,
                                                     "nodes": summary.nodes, "pools": summary.pools,
                                                     "racks": summary.racks}}


def document(results: Sequence[FileResult], errors: Sequence[Problem] = ()) -> str:
    files = [_file_data(r) for r in results]
    ok = not errors and all(f["ok"] for f in files)
    data = {"ok": ok, "errors": [problem_data(p) for p in errors], "files": files}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
