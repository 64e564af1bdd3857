"""What one SSH connection to a lab node costs this machine, with OpenSSH's default key exchange and with the lab's
ssh_config (curve25519-sha256 alone, clusterforge/lab/nodes.py), side by side in one run against one node.

`python benchmarks/lab_ssh.py [--name LAB] [--node NODE] [--count N]` (a lab that is up: `clusterforge lab up`):
each way opens N connections one after another (`ssh NODE true`, no connection sharing) and reads the whole
machine's busy CPU time from /proc/stat around them, so the client, the node's sshd and its PAM session all count.
`lab exec`, the lab's tests and Ansible open one for each command they run, on a machine whose CPU is what the lab
tier waits on (benchmarks/README.md, "CI"; in a CI run the saving did not show beside the tier's other work).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clusterforge.lab.paths import LabPaths

DEFAULT_KEX = ("-o", "KexAlgorithms=sntrup761x25519-sha512@openssh.com,curve25519-sha256")


def busy_seconds() -> float:
    """The machine's CPU seconds spent busy (every CPU; idle and I/O wait left out), from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def connections(config: Path, node: str, count: int, options: tuple[str, ...]) -> tuple[float, float]:
    """(wall seconds, busy CPU seconds) per connection, averaged over `count`."""
    cpu, started = busy_seconds(), time.monotonic()
    for _ in range(count):
        subprocess.run(["ssh", "-F", str(config), "-o", "BatchMode=yes", "-o", "ControlPath=none", *options, node,
                        "true"], check=True, capture_output=True, timeout=60)
    return (time.monotonic() - started) / count, (busy_seconds() - cpu) / count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default="cf-lab", help="the lab (default: the one `clusterforge lab up` makes)")
    parser.add_argument("--node", default="node-0001")
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    config = LabPaths.of(args.name).ssh_config
    if not config.is_file():
        print(f"{config}: no such file (is the lab `{args.name}` up?)", file=sys.stderr)
        return 2
    print(f"{args.count} connections each to {args.node}, one after another; load {os.getloadavg()[0]:.2f}")
    rows = [("OpenSSH's default (sntrup761x25519 first)", DEFAULT_KEX), ("the lab's ssh_config (curve25519)", ())]
    figures = [(label, *connections(config, args.node, args.count, options)) for label, options in rows]
    for label, wall, cpu in figures:
        print(f"  {label:44s} {wall * 1000:6.0f} ms wall  {cpu * 1000:6.0f} ms CPU per connection")
    print(f"  ratio (lab / default CPU): {figures[1][2] / figures[0][2]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
