"""roles/telemetry's clusterforge-slurm-metrics, run against fake `sinfo`, `scontrol` and `sacctmgr` on PATH.

Its file must be valid text exposition format (a strict parser here, and `promtool check metrics` where promtool is
installed), carry drain reasons with quotes, backslashes and newlines intact, replace the old file in one rename
and never hang: a SLURM command that hangs is killed with everything it started after the timeout.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "roles" / "telemetry" / "files" / "clusterforge-slurm-metrics"

# One fake for the three commands; what it does comes from the environment.
FAKE = r'''#!PYTHON
import json, os, subprocess, sys, time
name = os.path.basename(sys.argv[0])
mode = os.environ.get("FAKE_" + name.upper(), "ok")
if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    with open(os.environ["FAKE_PIDS"], "a") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    time.sleep(300)
if mode == "fail":
    print(f"{name}: error: Unable to contact slurm controller (connect failure)", file=sys.stderr)
    sys.exit(1)
if name == "sinfo":
    fmt = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--format="))
    for node, state, reason in json.loads(os.environ["FAKE_NODES"]):
        sys.stdout.write(fmt.replace("%N", node).replace("%T", state).replace("%E", reason) + "\n")
elif name == "scontrol":
    assert sys.argv[1:] == ["ping"], sys.argv
    sys.stdout.write(os.environ.get("FAKE_PING", ""))
    sys.exit(int(os.environ.get("FAKE_PING_RC", "0")))
elif name == "sacctmgr":
    print("lab")
'''

REASON = 'disk "sda" at C:\\path\nsecond line'
NODES = [["n1", "drained", REASON], ["n1", "drained", REASON],   # n1 is in two partitions
         ["n2", "down*", "Not responding"], ["n3", "idle", "none"], ["n4", "mixed-", "none"],
         ["n5", "draining@", "kill task failed"], ["n6", "idle~", "none"]]
PING_HA = ("Slurmctld(primary) at ctl-1 is DOWN\nSlurmctld(backup) at ctl-2 is UP\n"
           "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
           "*****************************************\n")


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, str]:
    """PATH with the fakes first, and the environment that drives them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("sinfo", "scontrol", "sacctmgr"):
        path = bin_dir / name
        path.write_text(FAKE.replace("PYTHON", sys.executable))
        path.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_NODES": json.dumps(NODES),
            "FAKE_PING": "Slurmctld(primary) at ctl-1 is UP\n", "FAKE_PIDS": str(tmp_path / "pids")}


def run(out: Path, env: dict[str, str], *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--output", str(out), *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


# --- a strict reader of the text exposition format ---------------------------------------------------------------

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|NaN|[-+]?Inf)"
SAMPLE = re.compile(rf"^(?P<name>{NAME})(?:\{{(?P<labels>{LABEL}(?:,{LABEL})*)?\}})? (?P<value>{NUMBER})$")
HELP = re.compile(rf"^# HELP (?P<name>{NAME}) \S.*$")
TYPE = re.compile(rf"^# TYPE (?P<name>{NAME}) (?:gauge|counter|untyped)$")
ONE_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')


def unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\", '"': '"'}[m.group(1)], value)


def parse(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Every sample, after checking each line and that a family's HELP and TYPE come first, once."""
    assert text.endswith("\n"), "the file ends with a newline"
    samples: list[tuple[str, dict[str, str], float]] = []
    described: dict[str, set[str]] = {}
    seen_families: list[str] = []
    for line in text.splitlines():
        if (match := HELP.match(line)) or (match := TYPE.match(line)):
            kind = line.split()[1]
            assert kind not in described.setdefault(match["name"], set()), f"second {kind} for {match['name']}"
            described[match["name"]].add(kind)
            continue
        match = SAMPLE.match(line)
        assert match, f"not a valid sample line: {line!r}"
        name = match["name"]
        assert described.get(name) == {"HELP", "TYPE"}, f"{name}: a sample before its HELP and TYPE"
        if not seen_families or seen_families[-1] != name:
            assert name not in seen_families, f"{name}'s samples are not together"
            seen_families.append(name)
        labels = {key: unescape(value) for key, value in ONE_LABEL.findall(match["labels"] or "")}
        samples.append((name, labels, float(match["value"])))
    keys = [(name, tuple(sorted(labels.items()))) for name, labels, _ in samples]
    assert len(keys) == len(set(keys)), "a series appears twice"
    return samples


def series(samples: list[tuple[str, dict[str, str], float]], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(labels.items())): value for metric, labels, value in samples if metric == name}


def check_with_promtool(text: str) -> None:
    promtool = shutil.which("promtool")
    if promtool:
        result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                                check=False, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr


# --- the tests ---------------------------------------------------------------------------------------------------

def test_nodes_and_controllers_are_exported_in_valid_exposition_format(tmp_path: Path, fake: dict[str, str]) -> None:
    out = tmp_path / "clusterforge_slurm.prom"
    result = run(out, fake, "--accounting")
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    samples = parse(text)
    check_with_promtool(text)
    assert series(samples, "slurm_node_state") == {
        (("node", n), ("state", s)): 1 for n, s in [("n1", "drained"), ("n2", "down"), ("n3", "idle"),
                                                     ("n4", "mixed"), ("n5", "draining"), ("n6", "idle")]}
    assert series(samples, "slurm_node_drained") == {(("node", "n1"), ("reason", REASON)): 1,
                                                     (("node", "n5"), ("reason", "kill task failed")): 1}
    assert series(samples, "slurm_node_down") == {(("node", "n2"), ("reason", "Not responding")): 1}
    assert series(samples, "slurm_controller_up") == {(("host", "ctl-1"), ("role", "primary")): 1}
    assert series(samples, "slurm_controller_in_control") == {(("host", "ctl-1"), ("role", "primary")): 1}
    assert series(samples, "slurm_dbd_up") == {(): 1}
    assert series(samples, "clusterforge_slurm_metrics_command_success") == {
        (("command", c),): 1 for c in ("sinfo", "scontrol_ping", "sacctmgr")}
    stamp = series(samples, "clusterforge_slurm_metrics_last_run_timestamp_seconds")[()]
    assert abs(stamp - time.time()) < 60
    # the escaped form in the file itself
    assert 'reason="disk \\"sda\\" at C:\\\\path\\nsecond line"' in text


def test_the_backup_in_control_is_visible(tmp_path: Path, fake: dict[str, str]) -> None:
    out = tmp_path / "clusterforge_slurm.prom"
    # `scontrol ping` exits 1 when a controller is down; its lines still count
    result = run(out, {**fake, "FAKE_PING": PING_HA, "FAKE_PING_RC": "1"})
    assert result.returncode == 0, result.stderr
    samples = parse(out.read_text())
    assert series(samples, "slurm_controller_up") == {(("host", "ctl-1"), ("role", "primary")): 0,
                                                      (("host", "ctl-2"), ("role", "backup")): 1}
    assert series(samples, "slurm_controller_in_control") == {(("host", "ctl-1"), ("role", "primary")): 0,
                                                              (("host", "ctl-2"), ("role", "backup")): 1}
    assert series(samples, "clusterforge_slurm_metrics_command_success")[(("command", "scontrol_ping"),)] == 1
    # without --accounting there is no slurmdbd series
    assert series(samples, "slurm_dbd_up") == {}


def test_failing_commands_leave_their_series_out(tmp_path: Path, fake: dict[str, str]) -> None:
    out = tmp_path / "clusterforge_slurm.prom"
    env = {**fake, "FAKE_SINFO": "fail", "FAKE_SCONTROL": "fail", "FAKE_SACCTMGR": "fail"}
    result = run(out, env, "--accounting")
    assert result.returncode == 0, result.stderr
    samples = parse(out.read_text())
    check_with_promtool(out.read_text())
    assert series(samples, "slurm_node_state") == {} and series(samples, "slurm_controller_up") == {}
    assert series(samples, "slurm_dbd_up") == {(): 0}
    assert series(samples, "clusterforge_slurm_metrics_command_success") == {
        (("command", c),): 0 for c in ("sinfo", "scontrol_ping", "sacctmgr")}


def test_a_hanging_command_is_killed_with_its_children(tmp_path: Path, fake: dict[str, str]) -> None:
    out = tmp_path / "clusterforge_slurm.prom"
    out.write_text("# the previous run's file\n")
    env = {**fake, "FAKE_SINFO": "hang", "FAKE_SACCTMGR": "hang"}
    start = time.monotonic()
    result = run(out, env, "--accounting", "--timeout", "1", timeout=20)
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    assert took < 6, f"the run took {took:.1f} s with a 1 s timeout: the commands run at once and are killed"
    samples = parse(out.read_text())
    success = series(samples, "clusterforge_slurm_metrics_command_success")
    assert success == {(("command", "sinfo"),): 0, (("command", "scontrol_ping"),): 1, (("command", "sacctmgr"),): 0}
    assert series(samples, "slurm_controller_up") == {(("host", "ctl-1"), ("role", "primary")): 1}
    pids = [int(pid) for line in (tmp_path / "pids").read_text().split("\n") if line for pid in line.split()]
    assert len(pids) == 4
    time.sleep(0.2)
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)]
    assert not alive, f"processes left running: {alive}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "clusterforge_slurm.prom", "pids"]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"


def load_script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("clusterforge_slurm_metrics", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_script()
    out = tmp_path / "clusterforge_slurm.prom"
    out.write_text("old 1\n")

    def broken_replace(*_: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(module.os, "replace", broken_replace)
    with pytest.raises(OSError):
        module.write_atomically(str(out), "new 2\n" * 1000)
    assert out.read_text() == "old 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["clusterforge_slurm.prom"], "the temporary file is removed"
    monkeypatch.undo()
    module.write_atomically(str(out), "new 2\n")
    assert out.read_text() == "new 2\n" and out.stat().st_mode & 0o777 == 0o644


def test_label_values_are_escaped_for_the_exposition_format() -> None:
    module = load_script()
    assert module.escape('a\\b"c\nd') == 'a\\\\b\\"c\\nd'
    assert module.base_state("drained*") == "drained" and module.base_state("IDLE+DRAIN") == "idle"
    assert module.base_state("allocated#") == "allocated" and module.base_state("") == "unknown"
