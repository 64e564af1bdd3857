"""How long and in how much memory `clusterforge power` meets hostile BMCs: each case runs the command as its own
process against stand-in BMCs on loopback (tests/bmc_standins.py), one hostile beside one honest, and reports the
wall time, the process's peak resident memory, and each node's verdict. No test asserts these figures; the tests
(tests/test_bmc_hostile.py) assert the verdicts, and this file measures the rest.

`python benchmarks/bmc_hostile.py` prints a Markdown table (`power off` of both nodes; default flags unless a case
names its own), the first row two honest BMCs: the process's start, the asking and one settling round. The
figures are this machine's; what they show is the shape: a hostile BMC costs its node at most `--timeout` per
try beyond that row, and memory stays at the process's own size, whatever the BMC sends.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.bmc_standins import standin

CASES = [  # (name, the hostile BMC's behaviour, drip seconds, extra flags)
    ("none: two honest BMCs", "honest", 0.0, ["--timeout", "4"]),
    ("reset target on another BMC", "reset-elsewhere", 0.0, ["--timeout", "4"]),
    ("Systems member on another BMC", "member-elsewhere", 0.0, ["--timeout", "4"]),
    ("Systems link on another BMC", "link-elsewhere", 0.0, ["--timeout", "4"]),
    ("an answer that never ends", "endless", 0.0, ["--timeout", "4"]),
    ("1 byte every 3 s", "drip", 3.0, ["--timeout", "4", "--attempts", "1"]),
    ("1 byte every 3 s, default attempts", "drip", 3.0, ["--timeout", "4"]),
    ("a port that closes at once", "closes", 0.0, ["--timeout", "1", "--attempts", "1"]),
    ("a refused port", "refused", 0.0, ["--timeout", "1", "--attempts", "1"]),
]


def run(folder: Path, hostile: str, drip_s: float, extra: list[str]) -> tuple[float, float, dict]:
    with ExitStack() as stack:
        honest = stack.enter_context(standin("honest"))
        if hostile == "refused":
            with standin("honest") as gone:
                url = gone.url
        else:
            url = stack.enter_context(standin(hostile, elsewhere=honest.url, drip_s=drip_s)).url
        document = folder / "bmcs.yaml"
        document.write_text(yaml.safe_dump({"bmcs": {"node-x": {"url": url}, "node-h": {"url": honest.url}}}))
        env = {**os.environ, "CLUSTERFORGE_BMC_USERNAME": "admin", "CLUSTERFORGE_BMC_PASSWORD": "x"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "clusterforge", "power", "off", "node-x,node-h", "--bmcs",
                               str(document), "-f", "json", *extra], capture_output=True, text=True, env=env,
                              timeout=600)
        seconds = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        answer = json.loads(done.stdout) if done.stdout.startswith("{") else {"failed": {"?": done.stderr[-200:]}}
        return seconds, max(peak, before) / 1024, answer


def main() -> None:
    print(f"load at start: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    print("| hostile BMC | flags | seconds | peak RSS (MiB) | the hostile node | the honest node |")
    print("|---|---|---:|---:|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, behaviour, drip_s, extra in CASES:
            seconds, rss, answer = run(Path(folder), behaviour, drip_s, extra)
            hostile = answer.get("failed", {}).get("node-x") or answer.get("nodes", {}).get("node-x", {}).get("did")
            honest = answer.get("nodes", {}).get("node-h", {}).get("did", "FAILED")
            print(f"| {name} | `{' '.join(extra)}` | {seconds:.1f} | {rss:.0f} | {hostile} | {honest} |")


if __name__ == "__main__":
    main()
