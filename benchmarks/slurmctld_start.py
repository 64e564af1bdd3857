"""How long a real slurmctld 24.11 takes to start with the rendered 100,000-GPU config, with and without topology.

    python benchmarks/slurmctld_start.py                 # (a) and (b) 3 rounds each, then (c) once
    python benchmarks/slurmctld_start.py --repeats 5 --full-repeats 0
    python benchmarks/slurmctld_start.py --switch qm9700     # the 5,079-switch tree issue 16 measured

The 100,000-GPU hall of benchmarks/generate.py (12,500 DGX H100, rail-optimized Q3400 fabric) is rendered with
`clusterforge render`; its slurm.conf and topology.conf go to one slurmctld (Debian trixie's 24.11 package, in a
podman container of its own) in three forms:

  (a) no topology: the rendered slurm.conf without TopologyPlugin;
  (b) the rendered topology.conf (the compact tree, plan/compact.py);
  (c) the full tree as render wrote it before: every spine and core on its own line (plan.slurm.full_switches).

Every start has an empty StateSaveLocation and runs `slurmctld -D -i`; the time is from starting the process
until it logs `Running as primary controller`, with its CPU seconds at that moment and its RSS 5 s later; then
`sinfo` and `scontrol show topology` confirm what it loaded. (a) and (b) alternate, so a busy machine slows both
alike; (c) runs after them. Only lines the lone controller needs are changed: SlurmctldHost (the container),
accounting and job accounting gather off (nothing to store them in), the state, pid and log locations.

Node names resolve only to loopback addresses: the container's /etc/hosts maps the 12,500 names to
127.1.x.y (glibc's files backend, as on a cluster without DNS) and its name service reads files only. slurmctld
will not start without a non-loopback interface (it listens with AI_ADDRCONFIG), so the container sits on a
podman network of its own, `cf-bench-net`, created `--internal --disable-dns` (no route out, no DNS server);
a packet socket on the network's bridge counts every frame the container sends there during the runs (IPv6
is off in the container, so the kernel's own neighbour discovery stays quiet too). The image
`localhost/cf-bench-slurmctld:trixie` is built once from the lab's base image (`localhost/cf-lab-base:trixie`;
`clusterforge lab up` makes it) with `podman build --network=host` and kept; the container and the network are
removed at the end.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from clusterforge.blueprint.load import load_blueprint  # noqa: E402
from clusterforge.core.hostlist import expand  # noqa: E402
from clusterforge.plan import build_plan  # noqa: E402
from clusterforge.plan.slurm import full_switches  # noqa: E402
from clusterforge.render import RenderContext, topology_conf  # noqa: E402

BASE = "localhost/cf-lab-base:trixie"
IMAGE = "localhost/cf-bench-slurmctld:trixie"
NETWORK = "cf-bench-net"
CONTAINER = "cf-bench-slurmctld"
HOSTNAME = "cf-bench-ctl"
CONTAINERFILE = f"""FROM {BASE}
ENV DEBIAN_FRONTEND=noninteractive
RUN printf '#!/bin/sh\\nexit 101\\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \\
 && apt-get update && apt-get install -y --no-install-recommends slurmctld slurm-client \\
 && rm -f /usr/sbin/policy-rc.d && apt-get clean && rm -rf /var/lib/apt/lists/* \\
 && sed -i 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf
CMD ["sleep", "infinity"]
"""
# the lines of the rendered slurm.conf a lone controller in a container replaces
REPLACED = ("SlurmctldHost", "ControlMachine", "BackupController", "StateSaveLocation", "SlurmctldPidFile",
            "SlurmctldLogFile")
REPLACED_PREFIXES = ("AccountingStorage", "JobAcctGather", "JobComp")
STATE = "/var/spool/cf-bench-state"
OVERRIDES = [
    f"SlurmctldHost={HOSTNAME}",
    "AccountingStorageType=accounting_storage/none",
    "JobAcctGatherType=jobacct_gather/none",
    f"StateSaveLocation={STATE}",
    "SlurmctldPidFile=/run/cf-bench/slurmctld.pid",
]
# what every first start with an empty StateSaveLocation logs, and the agent threads cut short at SIGTERM
EXPECTED = ("Could not open", "NOTE: Trying backup state save file", "agent_fini: left")
CASES = {"a": "(a) no topology", "b": "(b) rendered topology (compact)", "c": "(c) full tree (before)"}

# Runs inside the container (python3 of the image): one start, measured; prints one JSON line.
DRIVER = r'''
import json, os, pwd, shutil, signal, subprocess, sys, threading, time
conf = sys.argv[1]
slurm = pwd.getpwnam("slurm")
for folder in ("/var/spool/cf-bench-state", "/run/cf-bench"):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    os.chown(folder, slurm.pw_uid, slurm.pw_gid)
env = dict(os.environ, SLURM_CONF=conf + "/slurm.conf")
lines, ready = [], threading.Event()
start = time.perf_counter()
proc = subprocess.Popen(["slurmctld", "-D", "-i", "-f", conf + "/slurm.conf"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE, text=True, env=env)
def drain():
    for line in proc.stderr:
        lines.append(line.rstrip())
        if "Running as primary controller" in line:
            ready.set()
    ready.set()
threading.Thread(target=drain, daemon=True).start()
ready.wait(float(sys.argv[2]))
seconds = time.perf_counter() - start
up = proc.poll() is None and any("Running as primary controller" in l for l in lines)
tick = os.sysconf("SC_CLK_TCK")
def cpu():
    fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick
out = {"up": up, "seconds": round(seconds, 2)}
if up:
    out["cpu_s"] = round(cpu(), 1)
    time.sleep(5)
    rss = next(l for l in open(f"/proc/{proc.pid}/status") if l.startswith("VmRSS:"))
    out["rss_mib"] = round(int(rss.split()[1]) / 1024)
    run = lambda *cmd: subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120).stdout
    out["nodes"] = sum(int(n) for n in run("sinfo", "-h", "-o", "%D").split())
    out["switches"] = run("scontrol", "show", "topology").count("SwitchName=")
proc.send_signal(signal.SIGTERM)
try:
    proc.wait(60)
except subprocess.TimeoutExpired:
    proc.kill()
    proc.wait()
out["errors"] = [l for l in lines if "error:" in l or "fatal:" in l]
out["warnings"] = [l for l in lines if "warning:" in l]
print(json.dumps(out))
'''


def sh(*cmd: str, check: bool = True, quiet: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=check, text=True, capture_output=quiet)


def podman(*args: str, check: bool = True) -> str:
    return subprocess.run(["podman", *args], check=check, text=True, capture_output=True).stdout


def render(folder: Path, switch: str | None) -> tuple[Path, Path]:
    """The 100,000-GPU hall (on `switch` instead of the generator's Q3400) and its rendered output folder."""
    hall = folder / "hall-100000.yaml"
    sh(sys.executable, str(HERE / "generate.py"), "--gpus", "100000", "--compact", "-o", str(hall))
    if switch:
        hall.write_text(hall.read_text().replace("switch: q3400,", f"switch: {switch},"))
    out = folder / "rendered"
    sh(sys.executable, "-m", "clusterforge.cli.main", "render", str(hall), "-o", str(out), "--force", quiet=True)
    return hall, out


def full_tree(hall: Path) -> str:
    """topology.conf with every spine and core on its own line, written by the same renderer."""
    loaded = load_blueprint(hall)
    plan = build_plan(loaded.cluster, loaded.catalog)
    assert plan.slurm is not None and plan.topology is not None
    fabric = loaded.cluster.fabric
    switches = full_switches(plan.topology, bool(getattr(fabric, "rail_optimized", False)))
    ctx = RenderContext(loaded, dataclasses.replace(plan, slurm=dataclasses.replace(plan.slurm, switches=switches)),
                        hall.parent)
    return topology_conf.render(ctx)["slurm/topology.conf"]


def bench_conf(rendered: str, topology: bool) -> str:
    """The rendered slurm.conf with the lone controller's lines in front; without TopologyPlugin for (a)."""
    kept = []
    for line in rendered.splitlines():
        key = line.split("=", 1)[0].strip()
        if key in REPLACED or key.startswith(REPLACED_PREFIXES) or (not topology and key.startswith("Topology")):
            continue
        kept.append(line)
    return "\n".join(["# slurm.conf rendered by clusterforge; lines for benchmarks/slurmctld_start.py first",
                      *OVERRIDES, *kept]) + "\n"


def hosts_file(slurm_conf: str) -> tuple[str, int]:
    """/etc/hosts for every node of slurm.conf on a loopback address (127.1.0.1, 127.1.0.2, ...)."""
    names = [name for line in slurm_conf.splitlines() if line.startswith("NodeName=")
             for name in expand(line.split()[0].split("=", 1)[1])]
    assert len(names) < 250 * 256, "more nodes than 127.1.0.0/16 holds here"
    lines = ["127.0.0.1 localhost", f"127.0.0.1 {HOSTNAME}"]
    lines += [f"127.1.{i // 250}.{i % 250 + 1} {name}" for i, name in enumerate(names)]
    return "\n".join(lines) + "\n", len(names)


def prepare(folder: Path, hall: Path, out: Path, full: bool) -> tuple[Path, dict[str, int], int]:
    """The folder mounted at /bench: hosts, the driver, one config folder per case."""
    bench = folder / "bench"
    rendered = (out / "slurm" / "slurm.conf").read_text()
    hosts, nodes = hosts_file(rendered)
    bench.mkdir()
    (bench / "hosts").write_text(hosts)
    (bench / "driver.py").write_text(DRIVER)
    topologies = {"a": None, "b": (out / "slurm" / "topology.conf").read_text()}
    if full:
        topologies["c"] = full_tree(hall)
    switches = {}
    for case, topology in topologies.items():
        conf = bench / case
        conf.mkdir()
        (conf / "slurm.conf").write_text(bench_conf(rendered, topology is not None))
        for extra in ("gres.conf", "cgroup.conf"):
            if (out / "slurm" / extra).exists():
                shutil.copy(out / "slurm" / extra, conf / extra)
        if topology is not None:
            (conf / "topology.conf").write_text(topology)
        switches[case] = sum(line.startswith("SwitchName=") for line in (topology or "").splitlines())
    for path in bench.rglob("*"):  # the container's slurm user reads them
        path.chmod(0o755 if path.is_dir() else 0o644)
    bench.chmod(0o755)
    return bench, switches, nodes


def build_image(rebuild: bool) -> None:
    if not rebuild and subprocess.run(["podman", "image", "exists", IMAGE]).returncode == 0:
        return
    if subprocess.run(["podman", "image", "exists", BASE]).returncode != 0:
        sys.exit(f"{BASE} is missing: `clusterforge lab up` builds it (mmdebstrap of Debian trixie)")
    with tempfile.TemporaryDirectory(prefix="cf-bench-image-") as context:
        (Path(context) / "Containerfile").write_text(CONTAINERFILE)
        sh("podman", "build", "--network=host", "-t", IMAGE, context, quiet=True)


def start_container(bench: Path) -> None:
    podman("rm", "-f", CONTAINER, check=False)
    podman("network", "rm", "-f", NETWORK, check=False)
    podman("network", "create", "--internal", "--disable-dns", NETWORK)
    podman("run", "-d", "--name", CONTAINER, "--hostname", HOSTNAME, "--network", NETWORK, "--no-hosts",
           "--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "--sysctl", "net.ipv6.conf.default.disable_ipv6=1",
           "-v", f"{bench}:/bench:ro", "-v", f"{bench / 'hosts'}:/etc/hosts:ro", IMAGE)
    # munged for sinfo/scontrol afterwards (the key is the one the munge package made in the image)
    podman("exec", CONTAINER, "sh", "-c", "install -d -o munge -g munge /run/munge && runuser -u munge -- munged")


class Sniffer(threading.Thread):
    """Counts the frames the container sends on its network's bridge (host side), by kind and destination:
    everything slurmctld sends to nodes should stay on the container's loopback. Needs root (a packet socket)."""

    def __init__(self, interface: str) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(3))  # ETH_P_ALL
        self.sock.bind((interface, 0))
        self.sock.settimeout(0.5)
        self.seen: dict[str, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                frame, address = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            if address[2] == socket.PACKET_OUTGOING:  # the host's own frames towards the container
                continue
            kind = int.from_bytes(frame[12:14], "big")
            if kind == 0x0800:
                key = f"IPv4 protocol {frame[23]} to {socket.inet_ntop(socket.AF_INET, frame[30:34])}"
            elif kind == 0x86DD:
                key = f"IPv6 next header {frame[20]} to {socket.inet_ntop(socket.AF_INET6, frame[38:54])}"
            else:
                key = f"ethertype {kind:#06x}"
            self.seen[key] = self.seen.get(key, 0) + 1


def sniffer() -> Sniffer | None:
    interface = podman("network", "inspect", NETWORK, "--format", "{{.NetworkInterface}}").strip()
    try:
        return Sniffer(interface)
    except (OSError, AttributeError) as error:  # not root, or not Linux
        print(f"not watching {interface}: {error}", file=sys.stderr)
        return None


def measure(case: str, timeout: float) -> dict[str, Any]:
    text = podman("exec", CONTAINER, "python3", "/bench/driver.py", f"/bench/{case}", str(timeout))
    result: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    return result


def table(runs: dict[str, list[dict[str, Any]]], switches: dict[str, int]) -> list[str]:
    base = statistics.median(r["seconds"] for r in runs["a"]) if runs.get("a") else None
    rows = ["| configuration (12,500 nodes) | switches | start (s), median | runs (s) | × (a) | CPU (s) | RSS (MiB) "
            "| nodes / switches slurmctld reports | other error lines |",
            "|---|---|---|---|---|---|---|---|---|"]
    for case, results in runs.items():
        if not results:
            continue
        seconds = statistics.median(r["seconds"] for r in results)
        up = [r for r in results if r["up"]]
        ratio = f"{seconds / base:.2f}" if base else ""
        cpu = statistics.median(r["cpu_s"] for r in up) if up else float("nan")
        rss = max(r["rss_mib"] for r in up) if up else 0
        seen = f"{up[-1]['nodes']:,} / {up[-1]['switches']:,}" if up else "did not start"
        errors = max(len([e for e in r["errors"] if not any(x in e for x in EXPECTED)]) for r in results)
        each = ", ".join(f"{r['seconds']:.1f}" for r in results)
        count = f"{switches[case]:,}" if switches[case] else "—"
        rows.append(f"| {CASES[case]} | {count} | {seconds:.1f} | {each} | {ratio} | {cpu:.1f} | {rss} "
                    f"| {seen} | {errors} |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="rounds of (a) and (b), alternating")
    parser.add_argument("--full-repeats", type=int, default=1, help="starts of (c), the full tree; 0 skips it")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one start may take")
    parser.add_argument("--switch", help="fabric switch instead of q3400; qm9700 is the 5,079-switch tree of "
                        "issue 16 (beyond what three tiers of it carry: rendered with --force)")
    parser.add_argument("--rebuild", action="store_true", help="build the image again")
    parser.add_argument("--keep", action="store_true", help="leave the container and network for a look")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="cf-bench-slurmctld-"))
    folder.chmod(0o755)
    try:
        hall, out = render(folder, args.switch)
        bench, switches, nodes = prepare(folder, hall, out, args.full_repeats > 0)
        build_image(args.rebuild)
        start_container(bench)
        version = podman("exec", CONTAINER, "slurmctld", "-V").strip()
        watch = sniffer()
        if watch is not None:
            watch.start()
        load_before = os.getloadavg()
        runs: dict[str, list[dict[str, Any]]] = {"a": [], "b": [], "c": []}
        for _ in range(args.repeats):
            for case in ("a", "b"):
                runs[case].append(measure(case, args.timeout))
                print(f"{case}: {runs[case][-1]['seconds']} s", file=sys.stderr)
        for _ in range(args.full_repeats):
            runs["c"].append(measure("c", args.timeout))
            print(f"c: {runs['c'][-1]['seconds']} s", file=sys.stderr)
        load_after = os.getloadavg()
        if watch is not None:
            watch.stop.set()
            watch.join()
            sent = ", ".join(f"{n} × {kind}" for kind, n in watch.seen.items()) or "nothing"
        else:
            sent = "not watched"
    finally:
        if not args.keep:
            podman("rm", "-f", "-t", "0", CONTAINER, check=False)
            podman("network", "rm", "-f", NETWORK, check=False)
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{version}, {nodes:,} nodes in /etc/hosts on 127.1.0.0/16, {os.cpu_count()} CPUs; load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after; the container sent on {NETWORK} during the "
          f"runs: {sent}\n")
    print("\n".join(table(runs, switches)) + "\n")
    for case, results in runs.items():
        lines = [e for r in results for e in r["errors"] if not any(x in e for x in EXPECTED)]
        for line in dict.fromkeys(lines + [w for r in results for w in r["warnings"]]):
            print(f"{case}: {line}")


if __name__ == "__main__":
    main()
