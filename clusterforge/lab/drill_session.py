"""What the lab drills share: a session on a running lab (shell on a node, SLURM's view of nodes and jobs,
Alertmanager's and Prometheus' APIs), a timeline measured from the injected failure, and the result a drill
reports. The drills themselves are in drills.py.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import cluster, nodes, state
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.render import group_vars

JOBS_DIR = "/shared/jobs"
CKPT_DIR = "/shared/ckpt"
ALERTMANAGER_PORT = 9093
PROMETHEUS_PORT = 9090
POLL = 0.5
ALERTS = ("GpuXidNeedsAction", "NodeHealthCheckFailing")  # roles/monitoring: either names the drained node
# The line NVIDIA's driver logs when a GPU falls off the PCIe bus (Xid 79: the catalog's RESTART_BM bucket).
XID_79 = ("NVRM: Xid (PCI:0000:9a:00): 79, pid=1234, name=python3, GPU has fallen off the bus. "
          "(injected by clusterforge lab drill gpu-fault)")


def example_jobs() -> Path:
    """examples/jobs of the checkout, or of the installed release (clusterforge.files.checkout.shipped)."""
    from clusterforge.files.checkout import shipped

    candidate = shipped("examples/jobs")
    if candidate is not None and (candidate / "train.py").is_file():
        return candidate
    raise ClusterforgeError(Problem("examples/jobs/train.py is not installed", "examples/jobs",
                                    hint="run from a checkout, or reinstall clusterforge"))


@dataclass
class Result:
    """What a drill measured: figures in seconds (or counts) from the moment of the failure, the events as they
    were seen, what the blueprint's settings predict, and whether the cluster behaved as it must."""

    drill: str
    figures: dict[str, float | int | str] = field(default_factory=dict)
    expected: dict[str, float | int | str] = field(default_factory=dict)
    timeline: list[tuple[float, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_json(self) -> dict[str, Any]:
        return {"drill": self.drill, "ok": self.ok, "figures": self.figures, "expected": self.expected,
                "timeline": [{"t": round(t, 1), "event": e} for t, e in self.timeline], "failures": self.failures}


class Session:
    """A running lab, as the drills see it: shell on a node over SSH, the controller's view of nodes and jobs,
    Alertmanager's API (from this host to the monitoring node's address on the lab network)."""

    def __init__(self, name: str) -> None:
        self.paths = LabPaths.of(name)
        self.lab = state.require(self.paths)
        self.controller = self.lab.controller
        self.t0 = time.time()
        self.result: Result | None = None

    def sh(self, node: str, script: str, timeout: float = 60, check: bool = True) -> str:
        proc = nodes.ssh(self.paths, node, ["sh", "-c", script], timeout=timeout)
        if check and proc.returncode != 0:
            raise ClusterforgeError(Problem(f"{node}: `{script}` exited {proc.returncode}: "
                                            f"{(proc.stdout + proc.stderr).strip()[-300:]}", "lab drill"))
        return proc.stdout.strip()

    def compute(self) -> list[str]:
        return [n.name for n in self.lab.in_group("slurm_compute")]

    def node_state(self, node: str) -> tuple[str, str]:
        """SLURM's state of a node (long form, e.g. `drained`, `down*`, `idle`) and its reason."""
        out = self.sh(self.controller, f"sinfo --noheader --Node --nodes {node} --format '%T|%E' | head -1",
                      check=False)
        base, _, reason = out.partition("|")
        return base.strip(), reason.strip()

    def job(self, job: str) -> dict[str, str]:
        return dict(re.findall(r"(\w+)=(\S*)", self.sh(self.controller, f"scontrol -o show job {job}", check=False)))

    @cached_property
    def monitoring_address(self) -> str:
        """Read once: the drills poll Alertmanager every half second."""
        node = cluster.monitoring_node(self.paths, self.lab)
        if node is None:
            raise ClusterforgeError(Problem("the lab has no monitoring host", "operations.monitoring",
                                            hint="the lab blueprint must keep operations.monitoring.enabled"))
        return node.ip

    @cached_property
    def lab_vars(self) -> dict[str, Any]:
        """The lab's rendered group_vars."""
        return group_vars(self.paths.render)

    def alerts(self) -> list[dict[str, Any]]:
        """Alertmanager's active alerts ([] while it does not answer)."""
        url = f"http://{self.monitoring_address}:{ALERTMANAGER_PORT}/api/v2/alerts?active=true&silenced=false"
        try:
            with urllib.request.urlopen(url, timeout=3) as response:
                data = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return []
        return data if isinstance(data, list) else []

    def alert_for(self, node: str, names: tuple[str, ...]) -> str | None:
        """The name of an active alert among `names` about `node`, if Alertmanager has one."""
        for alert in self.alerts():
            labels = alert.get("labels", {})
            if labels.get("alertname") in names and node in (labels.get("node"), labels.get("instance"),
                                                               labels.get("hostname")):
                return str(labels["alertname"])
        return None

    # timeline
    def start(self, result: Result) -> None:
        self.result = result
        self.t0 = time.time()

    def now(self) -> float:
        return time.time() - self.t0

    def mark(self, event: str, at: float | None = None) -> float:
        when = self.now() if at is None else at
        assert self.result is not None
        self.result.timeline.append((when, event))
        return when

    def until(self, what: str, probe: Callable[[], bool], timeout: float) -> float | None:
        """Seconds since the failure when `probe` first held; None (and a failure noted) after `timeout`."""
        return self.watch({what: probe}, timeout)[what]

    def watch(self, probes: dict[str, Callable[[], bool]], timeout: float) -> dict[str, float | None]:
        """Poll every probe not yet seen, each cycle, until all have held: the seconds since the failure when each
        first held, whatever order they happen in; None (and a failure noted) for those still unseen after
        `timeout`."""
        seen: dict[str, float | None] = dict.fromkeys(probes)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(v is None for v in seen.values()):
            for what, probe in probes.items():
                if seen[what] is None and probe():
                    seen[what] = self.mark(what)
            time.sleep(POLL)
        assert self.result is not None
        self.result.failures += [f"{what}: not within {timeout:.0f} s" for what, v in seen.items() if v is None]
        return seen


def node_down_alert(result: Result, seconds: float, bound: float) -> None:
    """Record when NodeDown reached Alertmanager, and fail the drill beyond two scrape intervals plus `for:`
    (`bound`; 2 s more for Prometheus' evaluation, the POST to Alertmanager and the drill's polling)."""
    result.figures["alert_s"] = round(seconds, 1)
    if seconds > bound + 2:
        result.failures.append(f"NodeDown reached Alertmanager after {seconds:.1f} s, more than two scrape "
                               f"intervals plus for: ({bound} s)")


def settings(session: Session) -> dict[str, int]:
    """The timeouts of the lab's rendered slurm.conf and group_vars that the drills' expectations follow from."""
    conf = (session.paths.render / "slurm" / "slurm.conf").read_text()
    values = dict(re.findall(r"^(\w+)=(\S+)", conf, re.M))
    cred = re.search(r"cred_expire=(\d+)", values.get("AuthInfo", ""))
    sched = re.search(r"sched_interval=(\d+)", values.get("SchedulerParameters", ""))
    return {"slurmd_timeout_s": int(values.get("SlurmdTimeout", "300")),
            "cred_expire_s": int(cred[1]) if cred else 120, "sched_interval_s": int(sched[1]) if sched else 60,
            "health_check_interval_s": int(values.get("HealthCheckInterval", "0")),
            "resume_timeout_s": int(values.get("ResumeTimeout", "60")),
            "scrape_interval_s": int(str(session.lab_vars.get("monitoring_scrape_interval_s") or 15)),
            "node_down_for_s": int(str(session.lab_vars.get("monitoring_node_down_for_s") or 60)),
            "remediation_interval_s": int(str(session.lab_vars.get("remediation_interval_s") or 60))}


def idle(session: Session, node: str) -> bool:
    base, _ = session.node_state(node)
    return base == "idle"


def events(session: Session, job: str) -> list[tuple[float, str, int, str]]:
    """(time, kind, step, host) of every line of the job's events.log."""
    text = session.sh(session.controller, f"cat {CKPT_DIR}/{job}/events.log 2>/dev/null || true")
    out = []
    for line in text.splitlines():
        m = re.match(r"^([\d.]+) (\S+) step=(\d+) restart=\d+ host=(\S+)", line)
        if m:
            out.append((float(m[1]), m[2], int(m[3]), m[4]))
    return out


def restart_count(session: Session, node: str) -> int:
    """How often podman restarted the node's container because its systemd rebooted (RebootProgram)."""
    from clusterforge.lab import podman

    info = podman.inspect("container", session.lab.node(node).container)
    return int(info.get("RestartCount", 0) or 0)


def targets_up(session: Session) -> dict[str, bool]:
    url = f"http://{session.monitoring_address}:{PROMETHEUS_PORT}/api/v1/targets?state=active"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            data = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return {}
    return {f"{t['labels'].get('job')}/{t['labels'].get('instance')}": t.get("health") == "up"
            for t in data.get("data", {}).get("activeTargets", [])}
