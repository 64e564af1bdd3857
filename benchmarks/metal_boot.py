"""How long a server takes from power-on to a job, and what its boot costs the provisioning server: the metal lab
(`clusterforge lab up --metal`), two virtual servers with no disk, booted over the network under software
emulation on this machine.

`python benchmarks/metal_boot.py [--name NAME] [--keep] [--program PATH]` (root; scripts/metal-host-setup first;
`--program` runs an installed release's `clusterforge` from its own folder instead of this checkout's):

1. **both together**: `lab up --metal`, whose first job makes SLURM power both servers on through their BMCs; each
   server's milestones from power-on (its first DHCP lease, from the provisioning server's dnsmasq log; the
   kernel's first line, the image mounted and the boot unit, from its serial console), the boot phase's own
   seconds and steps (`/var/lib/clusterforge/boot.status`), and the job's end;
2. **both back for a job**: metal-0002's slurmd killed under a job, so reconcile powers it off through its BMC;
   metal-0001 powered down idle by SLURM's power saving; then one job on both, which SLURM powers on again: the
   same milestones for each server's second boot, and metal-0002's new registration;
3. **bytes on the wire** per boot, from the provisioning server's nginx log (every byte a server fetched: kernel,
   initramfs, image, overlays), and what that is for 12,500 servers from N provisioning servers (arithmetic).

Prints a table and writes `metal_boot.json` beside this file's output folder (`--out`). The lab is removed at
the end unless `--keep`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.lab import nodes  # noqa: E402
from clusterforge.lab.metal import up as metal  # noqa: E402
from clusterforge.lab.metal import virt  # noqa: E402
from clusterforge.lab.paths import LabPaths  # noqa: E402

NODES = 12_500
LINK_GBPS = (10, 25, 100, 200)  # one provisioning server's uplink, Gb/s
SERVERS = (1, 4, 16)


PROGRAM: list[str] = [sys.executable, "-m", "clusterforge"]  # `--program`: an installed release's instead


def cli(*args: str, timeout: float = 3600) -> str:
    installed = PROGRAM[0] != sys.executable  # run from the release's own folder, outside this checkout
    proc = subprocess.run([*PROGRAM, *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=Path(PROGRAM[0]).parent if installed else None, env={**os.environ, "COLUMNS": "200"})
    if proc.returncode != 0:
        raise SystemExit(f"clusterforge {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def ssh(paths: LabPaths, node: str, command: str, timeout: float = 1800) -> str:
    return nodes.ssh(paths, node, ["sh", "-c", command], timeout=timeout).stdout.strip()


def boot_status(paths: LabPaths, node: str) -> list[str]:
    return ssh(paths, node, "cat /var/lib/clusterforge/boot.status 2>/dev/null || true", 60).split()[:3]


def bytes_per_address(paths: LabPaths, since: float) -> dict[str, int]:
    """Bytes nginx sent each client since `since` (its access log's combined format)."""
    log = ssh(paths, "ctl-0001", "cat /var/log/nginx/access.log", 60)
    sent: dict[str, int] = {}
    for line in log.splitlines():
        found = re.match(r'(\S+) \S+ \S+ \[([^\]]+)\] "[^"]*" (\d{3}) (\d+)', line)
        if not found:
            continue
        when = time.mktime(time.strptime(found.group(2).split()[0], "%d/%b/%Y:%H:%M:%S")) - time.timezone
        if when >= since - 1 and found.group(3) == "200":
            sent[found.group(1)] = sent.get(found.group(1), 0) + int(found.group(4))
    return sent


def boot_id(paths: LabPaths, node: str) -> str:
    """The kernel's id of the server's current boot (a new one at every boot)."""
    return ssh(paths, node, "cat /proc/sys/kernel/random/boot_id", 60)


def wait_for(what: str, predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not within {timeout:.0f} s")
        time.sleep(2)


def back_for_a_job(paths: LabPaths, servers: list[virt.Server]) -> dict[str, Any]:
    """The second boot of each server, as a site meets it: the second server's slurmd dies under a job and the
    on-prem provider's reconcile powers it off through its BMC; the first is powered down idle by SLURM's power
    saving; then one job asks for both, so SLURM powers both on through their BMCs. Each must boot the image
    again, configure itself and register anew (tests/lab/test_lab_metal.py checks it; this records the times)."""
    idle, replaced = servers[0], servers[1]
    first_boots = {s.node: boot_id(paths, s.node) for s in servers}
    job = ssh(paths, "ctl-0001", f"sbatch --parsable --no-requeue -w {replaced.node} --time=20 --wrap 'sleep 1200'", 60)
    wait_for(f"the job on {replaced.node} running",
             lambda: "JobState=RUNNING" in ssh(paths, "ctl-0001", f"scontrol show job {job}", 60), 300)
    # its boot phase ended first (slurmd registers while the boot phase's last steps still run: a slurmd killed
    # then fails one of them, and the server is drained for repair, not replaced)
    wait_for(f"{replaced.node}'s boot phase ended", lambda: bool(boot_status(paths, replaced.node)), 900)
    ssh(paths, replaced.node, "systemctl kill --signal=KILL slurmd", 60)
    wait_for(f"{replaced.node} powered off", lambda: virt.state(replaced) == "shut off", 600)
    # reconcile powers it off through its BMC first, then gives slurmctld its reason (seconds later)
    wait_for(f"{replaced.node} handed back by reconcile", lambda: "clusterforge-reconcile: replacing: not responding"
             in ssh(paths, "ctl-0001", f"scontrol show node {replaced.node}", 60), 120)
    wait_for(f"{idle.node} powered down idle", lambda: virt.state(idle) == "shut off", 600)
    time.sleep(35)  # SuspendTimeout: slurmctld holds a node powering down that long before it may resume it
    for server in servers:  # the first boot's console log: libvirt starts a new one at power-on
        server.console.unlink(missing_ok=True)
    started, wall = time.monotonic(), time.time()
    job_proc = nodes.ssh_popen(paths, "ctl-0001", ["srun", "-N2", "-w", f"{idle.node},{replaced.node}", "--time=5",
                                                   "hostname"])
    seen = metal.watch(servers, started, lambda: job_proc.poll() is not None, metal.JOIN_S, print)
    output, _ = job_proc.communicate()
    took = time.monotonic() - started
    ran_on = sorted(str(output).split())
    if ran_on != sorted(s.node for s in servers):
        raise SystemExit(f"the job after the second boot ran on {ran_on}")
    # each server ran the job from a new boot: it registered anew with slurmctld
    again = [s.node for s in servers if boot_id(paths, s.node) == first_boots[s.node]]
    if again:
        raise SystemExit(f"{', '.join(again)} ran the job without booting again")
    wait_for("both boot phases ended", lambda: all(boot_status(paths, s.node) for s in servers), 900)
    for node, seconds in metal.dhcp_times(paths, "ctl-0001", wall).items():
        seen.setdefault(node, {})["dhcp"] = seconds
    for node in seen:
        seen[node]["job"] = round(took, 1)
    return {"milestones": seen, "boot_phase": {s.node: boot_status(paths, s.node) for s in servers},
            "bytes": bytes_per_address(paths, wall)}


def arithmetic(per_boot: int) -> list[str]:
    lines = [f"per boot: {per_boot / 1e6:,.0f} MB; {NODES:,} servers: {NODES * per_boot / 1e12:,.1f} TB"]
    for servers in SERVERS:
        cells = []
        for gbps in LINK_GBPS:
            seconds = NODES * per_boot / (servers * gbps * 1e9 / 8)
            cells.append(f"{gbps} Gb/s {seconds / 60:,.1f} min")
        lines.append(f"  {servers:>2} provisioning server(s): " + ", ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", default="cf-metal-bench")
    parser.add_argument("--out", type=Path, default=Path("/var/tmp/clusterforge-metal-boot"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--program", type=Path, help="the clusterforge to run (an installed release's "
                        "bin/clusterforge); default this checkout's")
    args = parser.parse_args()
    if args.program is not None:
        PROGRAM[:] = [str(args.program.resolve())]
    paths = LabPaths.of(args.name)
    load = os.getloadavg()[0]
    cli("lab", "down", "--name", args.name)
    started = time.time()
    try:
        up = cli("lab", "up", "--metal", "--name", args.name)
        together = json.loads((paths.root / "metal" / "boot-times.json").read_text())
        servers = [virt.Server(n, f"{args.name}-{n}", "", "", "") for n in sorted(together["servers"])]
        phases = {s.node: boot_status(paths, s.node) for s in servers}
        sent_together = bytes_per_address(paths, started)
        again = back_for_a_job(paths, servers)
    finally:
        if not args.keep:
            cli("lab", "down", "--name", args.name)
    per_boot = max(again["bytes"].values()) if again["bytes"] else 0
    result = {"load_at_start": round(load, 2), "together": together, "boot_phase": phases,
              "bytes_together": sent_together, "again": again, "per_boot_bytes": per_boot,
              "lab_up": [line for line in up.splitlines() if line.startswith("metal lab")]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "metal_boot.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"load at start {load:.2f}")
    for node, seen in together["servers"].items():
        print(f"together {node}: " + ", ".join(f"{k} {v:.0f} s" for k, v in sorted(seen.items(), key=lambda kv: kv[1]))
              + f"; boot phase {phases[node]}")
    print(f"together: the first job on both ended {together['job_seconds']:.0f} s after it was submitted")
    for node, seen in again["milestones"].items():
        print(f"again {node}: " + ", ".join(f"{k} {v:.0f} s" for k, v in sorted(seen.items(), key=lambda kv: kv[1]))
              + f"; boot phase {again['boot_phase'][node]}")
    for line in arithmetic(per_boot):
        print(line)


if __name__ == "__main__":
    main()
