"""The JSON objects nodes print into a job's output, one a line, told apart from everything else there.

`health diag` and `health perf` run the health check on every node as one srun; each node prints one JSON object
naming itself, and srun, slurmstepd and the nodes' own stray output print other lines. Only a line that is a whole
JSON object with a string `node` counts; anything else is passed over, never guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def node_objects(output: str) -> Iterator[dict[str, Any]]:
    """Each line of OUTPUT that is a JSON object with a string `node`, in order."""
    for line in output.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("node"), str):
            yield data
