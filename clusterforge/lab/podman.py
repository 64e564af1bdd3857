"""The one place that runs podman: commands fail with a ClusterforgeError that quotes podman's own words."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem


def run(args: Sequence[str], *, check: bool = True, input_bytes: bytes | None = None,
        timeout: float | None = 600) -> subprocess.CompletedProcess[str]:
    """`podman ARGS`; on failure raises with the last lines of stderr."""
    proc = subprocess.run(["podman", *args], capture_output=True, text=input_bytes is None,
                          input=input_bytes, timeout=timeout, check=False)
    if input_bytes is not None:  # binary input: decode output for messages
        proc = subprocess.CompletedProcess(proc.args, proc.returncode,
                                           _text(proc.stdout), _text(proc.stderr))
    if check and proc.returncode != 0:
        raise ClusterforgeError(Problem(f"podman {' '.join(args[:2])} failed: {_tail(proc.stderr)}",
                                        "podman", hint="see `clusterforge lab status` and podman's message"))
    return proc


def _text(data: Any) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")


def _tail(text: str, lines: int = 3) -> str:
    kept = [line for line in text.strip().splitlines() if "failed to connect to syslog" not in line]
    return " | ".join(kept[-lines:]) or "no message"


def exists(kind: str, name: str) -> bool:
    """Whether an image, container, network or volume of that name exists."""
    return run([kind, "exists", name], check=False).returncode == 0


def inspect(kind: str, name: str) -> dict[str, Any]:
    data = json.loads(run([kind, "inspect", name]).stdout)
    item: dict[str, Any] = data[0] if isinstance(data, list) else data
    return item


def labelled(kind: str, label: str) -> list[str]:
    """Names of containers, networks or volumes carrying `label` (what `lab down` removes)."""
    if kind == "container":
        out = run(["ps", "-a", "--filter", f"label={label}", "--format", "{{.Names}}"]).stdout
    else:
        out = run([kind, "ls", "--filter", f"label={label}", "--format", "{{.Name}}"]).stdout
    return [line for line in out.split() if line]
