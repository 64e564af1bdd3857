"""roles/remediation's clusterforge-remediate, run for real against stand-in `scontrol` and `sinfo` that answer
what a test writes and record every argv: which nodes it reboots, when it gives up, what it leaves alone, and
that only the controller in control acts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.test_health_checks import check_exposition

SCRIPT = ROOT / "roles" / "remediation" / "files" / "clusterforge-remediate"
SEP = "\x1f"
XID = "clusterforge-health: gpu-xid (reboot): Xid 79 on 0000:9a:00: GPU has fallen off the bus"
ECC = "clusterforge-health: gpu-ecc (reboot): uncorrected ECC errors since the driver loaded (GPU 3: 2)"
ONE_CONTROLLER = "Slurmctld(primary) at ctl-0001 is UP\n"
HOUR = 3600
RECORD = (f'line=""; for a in "$@"; do line="$line$a{SEP}"; done\n'
          'printf \'%s\\n\' "$line" >>"$CF_FAKE/calls.${0##*/}"\n')


class Controller:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.state = tmp / "state" / "remediation.json"
        self.prom = tmp / "prom"
        self.prom.mkdir()
        self.ping(ONE_CONTROLLER)
        self.drained()
        self._script("sinfo", 'cat "$CF_FAKE/sinfo.out"\nexit "$(cat "$CF_FAKE/sinfo.rc" 2>/dev/null || echo 0)"\n')
        self._script("scontrol", 'if [ "$1" = ping ]; then cat "$CF_FAKE/ping.out"; exit 0; fi\n'
                     'exit "$(cat "$CF_FAKE/scontrol.rc" 2>/dev/null || echo 0)"\n')
        self.conf = tmp / "remediation.conf"
        self.conf.write_text(f"# test\nMAX_REBOOTS=2\nWINDOW_H=24\nSTATE_FILE={self.state}\nTEXTFILE_DIR={self.prom}\n"
                             "REASON_PREFIX=clusterforge-health:\n")

    def _script(self, name: str, body: str) -> None:
        path = self.bin / name
        path.write_text("#!/bin/sh\n" + RECORD + body)
        path.chmod(0o755)

    def ping(self, text: str) -> None:
        (self.tmp / "ping.out").write_text(text)

    def drained(self, *nodes: tuple[str, str, str]) -> None:
        """What `sinfo --Node --states=drain... --format=%N|%T|%E` prints: node|state|reason per line."""
        (self.tmp / "sinfo.out").write_text("".join(f"{n}|{s}|{r}\n" for n, s, r in nodes))

    def history(self, **nodes: dict[str, Any]) -> None:
        self.state.parent.mkdir(parents=True, exist_ok=True)
        self.state.write_text(json.dumps({"version": 1, "nodes": nodes}))

    def run(self, *args: str, me: str = "ctl-0001") -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}", "CF_FAKE": str(self.tmp)}
        return subprocess.run([sys.executable, str(SCRIPT), "--conf", str(self.conf), "--node-name", me, *args],
                              capture_output=True, text=True, env=env, timeout=60, check=False)

    def calls(self, command: str) -> list[list[str]]:
        path = self.tmp / f"calls.{command}"
        return [line.split(SEP)[:-1] for line in path.read_text().splitlines()] if path.exists() else []

    def actions(self) -> list[list[str]]:
        """What scontrol was asked to do besides ping."""
        return [argv for argv in self.calls("scontrol") if argv != ["ping"]]

    def recorded(self) -> dict[str, Any]:
        nodes: dict[str, Any] = json.loads(self.state.read_text())["nodes"]
        return nodes

    def metrics(self) -> dict[str, str]:
        return check_exposition((self.prom / "clusterforge_remediation.prom").read_text())


@pytest.fixture
def ctl(tmp_path: Path) -> Controller:
    return Controller(tmp_path)


def reboot(node: str, n: int, original: str, bound: int = 2) -> list[str]:
    return ["reboot", "ASAP", "nextstate=RESUME", f"reason=clusterforge-remediate: reboot {n}/{bound}: {original}",
            node]


def gave_up(node: str, original: str) -> list[str]:
    return ["update", f"NodeName={node}", "State=DRAIN",
            f"Reason=clusterforge-remediate: gave up after 2 reboots in 24h: {original}"]


def test_a_node_drained_for_a_reboot_is_rebooted_when_idle(ctl: Controller) -> None:
    ctl.drained(("gpu-0003", "drained", XID))
    before = time.time()
    result = ctl.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert ctl.calls("sinfo") == [["--noheader", "--Node", "--states=drain,drained,draining", "--format=%N|%T|%E"]]
    assert ctl.actions() == [reboot("gpu-0003", 1, XID)]
    assert result.stdout.splitlines() == [f"rebooting gpu-0003 when idle (1 of 2 in 24h): {XID}"]
    entry = ctl.recorded()["gpu-0003"]
    assert entry["total"] == 1 and len(entry["reboots"]) == 1 and before <= entry["reboots"][0] <= time.time()
    metrics = ctl.metrics()
    assert metrics['clusterforge_remediation_reboots_total{node="gpu-0003"}'] == "1"
    assert metrics['clusterforge_remediation_reboots_in_window{node="gpu-0003"}'] == "1"
    assert metrics["clusterforge_remediation_in_control"] == "1"
    assert not [name for name in metrics if name.startswith("clusterforge_remediation_gave_up")]
    assert abs(int(metrics["clusterforge_remediation_last_run_timestamp_seconds"]) - time.time()) < 5


def test_with_a_settle_time_a_new_drain_waits_and_its_counter_is_exported_at_zero(ctl: Controller) -> None:
    ctl.conf.write_text(ctl.conf.read_text() + "SETTLE_S=30\n")
    ctl.drained(("gpu-0003", "drained", XID))
    first = ctl.run()
    assert first.returncode == 0 and ctl.actions() == [], first.stdout
    assert "acting 30 s after first seeing it" in first.stdout
    assert ctl.metrics()['clusterforge_remediation_reboots_total{node="gpu-0003"}'] == "0"  # before it grows
    state = json.loads(ctl.state.read_text())
    state["nodes"]["gpu-0003"]["seen"]["at"] -= 31  # the next run, 31 s later
    ctl.state.write_text(json.dumps(state))
    assert ctl.run().returncode == 0
    assert ctl.actions() == [reboot("gpu-0003", 1, XID)]
    assert "seen" not in ctl.recorded()["gpu-0003"]


def test_the_second_reboot_counts_the_first(ctl: Controller) -> None:
    ctl.history(**{"gpu-0003": {"reboots": [time.time() - 2 * HOUR], "total": 1}})
    ctl.drained(("gpu-0003", "draining", ECC))
    ctl.run()
    assert ctl.actions() == [reboot("gpu-0003", 2, ECC)]
    assert ctl.recorded()["gpu-0003"]["total"] == 2
    assert len(ctl.recorded()["gpu-0003"]["reboots"]) == 2


def test_at_the_bound_it_gives_up_and_leaves_the_node_to_a_person(ctl: Controller) -> None:
    ctl.history(**{"gpu-0003": {"reboots": [time.time() - 5 * HOUR, time.time() - HOUR], "total": 2}})
    ctl.drained(("gpu-0003", "drained", XID))
    result = ctl.run()
    assert ctl.actions() == [gave_up("gpu-0003", XID)]
    assert "gave up on gpu-0003 after 2 reboots in 24h; it stays drained for a person" in result.stdout
    assert ctl.recorded()["gpu-0003"]["gave_up"] and ctl.recorded()["gpu-0003"]["total"] == 2
    assert ctl.metrics()['clusterforge_remediation_gave_up{node="gpu-0003"}'] == "1"
    # the next run sees the remediation's own reason: nothing more to do, still given up
    ctl.drained(("gpu-0003", "drained", gave_up("gpu-0003", XID)[3].removeprefix("Reason=")))
    ctl.run()
    assert ctl.actions() == [gave_up("gpu-0003", XID)]
    assert ctl.metrics()['clusterforge_remediation_gave_up{node="gpu-0003"}'] == "1"


def test_reboots_older_than_the_window_no_longer_count(ctl: Controller) -> None:
    ctl.history(**{"gpu-0003": {"reboots": [time.time() - 30 * HOUR, time.time() - 25 * HOUR], "total": 2}})
    ctl.drained(("gpu-0003", "drained", XID))
    ctl.run()
    assert ctl.actions() == [reboot("gpu-0003", 1, XID)]
    entry = ctl.recorded()["gpu-0003"]
    assert len(entry["reboots"]) == 1 and entry["total"] == 3
    assert ctl.metrics()['clusterforge_remediation_reboots_total{node="gpu-0003"}'] == "3"


@pytest.mark.parametrize("reason", [
    "clusterforge-health: disk (person): / 2% free (need writable, >= 5% free)",
    "clusterforge-health: gpu-remap (person): row remapping failed on 00000000:9A:00.0 (spare rows exhausted: RMA)",
    "replacing a DIMM",
    "Prolog error",
    "Not responding",
    "gpu-health: Xid 79 (reboot): someone else's prefix",
    "clusterforge-remediate: reboot 1/2: " + XID,
    "clusterforge-remediate: gave up after 2 reboots in 24h: " + XID,
    "none",
], ids=["person-disk", "person-rma", "admin", "prolog-error", "not-responding", "other-prefix", "ours-rebooting",
        "ours-gave-up", "no-reason"])
def test_other_drains_are_left_alone(ctl: Controller, reason: str) -> None:
    ctl.drained(("gpu-0005", "drained", reason))
    result = ctl.run()
    assert result.returncode == 0
    assert ctl.actions() == [] and result.stdout == ""
    assert ctl.recorded() == {}


@pytest.mark.parametrize("state", ["drained@", "draining@", "reboot^", "reboot", "REBOOT_REQUESTED"])
def test_a_node_with_a_reboot_pending_is_not_rebooted_again(ctl: Controller, state: str) -> None:
    ctl.drained(("gpu-0003", state, XID))
    result = ctl.run()
    assert ctl.actions() == []
    assert f"gpu-0003: a reboot is already pending ({state}); waiting" in result.stdout


def test_each_node_once_and_reasons_with_bars(ctl: Controller) -> None:
    odd = "clusterforge-health: gpu-xid (reboot): Xid 79 on 0000:9a:00: a|b||c"
    ctl.drained(("gpu-0003", "drained", XID), ("gpu-0003", "drained", XID), ("gpu-0007", "draining", odd),
                ("gpu-0009", "drained", "clusterforge-health: nccl (person): NCCL reports nothing, expected 22602"))
    ctl.run()
    assert ctl.actions() == [reboot("gpu-0003", 1, XID), reboot("gpu-0007", 1, odd)]


@pytest.mark.parametrize(("ping", "me", "acts"), [
    (ONE_CONTROLLER, "ctl-0001", True),
    (ONE_CONTROLLER, "ctl-0001.cluster.example", True),  # the host name may be the FQDN
    ("Slurmctld(primary) at ctl-0001 is UP\nSlurmctld(backup) at ctl-0002 is UP\n", "ctl-0001", True),
    ("Slurmctld(primary) at ctl-0001 is UP\nSlurmctld(backup) at ctl-0002 is UP\n", "ctl-0002", False),
    ("Slurmctld(primary) at ctl-0001 is DOWN\nSlurmctld(backup) at ctl-0002 is UP\n", "ctl-0002", True),
    ("Slurmctld(primary) at ctl-0001 is DOWN\nSlurmctld(backup) at ctl-0002 is UP\n", "ctl-0001", False),
    ("Slurmctld(primary) at ctl-0001 is DOWN\n*****\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n", "ctl-0001", False),
    (ONE_CONTROLLER, "login-0001", False),
    ("", "ctl-0001", False),
], ids=["single", "fqdn", "primary-of-two", "backup-while-primary-up", "backup-while-primary-down",
        "primary-while-down", "all-down", "not-a-controller", "no-answer"])
def test_only_the_controller_in_control_acts(ctl: Controller, ping: str, me: str, acts: bool) -> None:
    ctl.ping(ping)
    ctl.drained(("gpu-0003", "drained", XID))
    result = ctl.run(me=me)
    assert result.returncode == 0
    assert ctl.actions() == ([reboot("gpu-0003", 1, XID)] if acts else [])
    if not acts:
        assert result.stdout.startswith("not acting: ")
        assert ctl.calls("sinfo") == [] and not ctl.state.exists()
        assert ctl.metrics() == {"clusterforge_remediation_in_control": "0",
                                 "clusterforge_remediation_last_run_timestamp_seconds": ctl.metrics()[
                                     "clusterforge_remediation_last_run_timestamp_seconds"]}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"nodes": {"gpu-0003": {"reboots": "yesterday"}}}', ""])
def test_a_corrupt_state_file_counts_as_empty_with_a_warning(ctl: Controller, text: str) -> None:
    ctl.state.parent.mkdir(parents=True)
    ctl.state.write_text(text)
    ctl.drained(("gpu-0003", "drained", XID))
    result = ctl.run()
    assert result.returncode == 0
    assert re.match(rf"warning: {re.escape(str(ctl.state))} is (unreadable|not a remediation state)", result.stdout)
    assert ctl.actions() == [reboot("gpu-0003", 1, XID)]
    assert ctl.recorded()["gpu-0003"]["total"] == 1
    assert (ctl.state.parent / "remediation.json.corrupt").read_text() == text


def test_a_dry_run_says_what_it_would_do_and_changes_nothing(ctl: Controller) -> None:
    ctl.history(**{"gpu-0004": {"reboots": [time.time() - HOUR, time.time() - HOUR], "total": 2}})
    before = ctl.state.read_text()
    ctl.drained(("gpu-0003", "drained", XID), ("gpu-0004", "drained", ECC))
    result = ctl.run("--dry-run")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        f"would reboot gpu-0003: clusterforge-remediate: reboot 1/2: {XID}",
        f"would give up on gpu-0004: clusterforge-remediate: gave up after 2 reboots in 24h: {ECC}"]
    assert ctl.actions() == []
    assert ctl.state.read_text() == before
    assert not (ctl.prom / "clusterforge_remediation.prom").exists()


def test_forget_gives_a_node_its_count_back(ctl: Controller) -> None:
    ctl.history(**{"gpu-0003": {"reboots": [time.time()], "total": 5, "gave_up": time.time()},
                   "gpu-0004": {"reboots": [], "total": 1}})
    result = ctl.run("--forget", "gpu-0003")
    assert result.returncode == 0 and "gpu-0003: forgotten" in result.stdout
    assert list(ctl.recorded()) == ["gpu-0004"]
    assert ctl.calls("scontrol") == [] and ctl.calls("sinfo") == []


def test_a_node_a_person_resumed_is_no_longer_given_up(ctl: Controller) -> None:
    ctl.history(**{"gpu-0003": {"reboots": [time.time() - HOUR] * 2, "total": 2, "gave_up": time.time() - HOUR}})
    ctl.drained()
    result = ctl.run()
    assert "gpu-0003: no longer held by remediation" in result.stdout
    assert "gave_up" not in ctl.recorded()["gpu-0003"]
    assert not [name for name in ctl.metrics() if name.startswith("clusterforge_remediation_gave_up")]
    # failing again within the window: the bound still holds
    ctl.drained(("gpu-0003", "drained", XID))
    ctl.run()
    assert ctl.actions() == [gave_up("gpu-0003", XID)]


def test_a_failed_scontrol_is_reported_and_not_counted(ctl: Controller) -> None:
    (ctl.tmp / "scontrol.rc").write_text("1")
    ctl.drained(("gpu-0003", "drained", XID))
    result = ctl.run()
    assert result.returncode == 1
    assert result.stdout.startswith("error: could not reboot gpu-0003 (1)")
    assert ctl.recorded().get("gpu-0003", {}).get("total", 0) == 0


def test_sinfo_failing_is_an_error(ctl: Controller) -> None:
    (ctl.tmp / "sinfo.rc").write_text("1")
    result = ctl.run()
    assert result.returncode == 1 and result.stdout.startswith("error: sinfo failed (1)")
    assert ctl.actions() == []


def test_a_long_reason_is_clipped(ctl: Controller) -> None:
    long = "clusterforge-health: gpu-xid (reboot): " + "x" * 400
    ctl.drained(("gpu-0003", "drained", long))
    ctl.run()
    [argv] = ctl.actions()
    assert len(argv[3]) == len("reason=") + 250 and argv[3].endswith("x...")


def test_the_bound_and_window_come_from_the_settings_file(ctl: Controller) -> None:
    ctl.conf.write_text(ctl.conf.read_text().replace("MAX_REBOOTS=2", "MAX_REBOOTS=0"))
    ctl.drained(("gpu-0003", "drained", XID))
    ctl.run()
    assert ctl.actions() == [["update", "NodeName=gpu-0003", "State=DRAIN",
                              f"Reason=clusterforge-remediate: gave up after 0 reboots in 24h: {XID}"]]


def test_the_program_uses_only_the_standard_library() -> None:
    imports = re.findall(r"^(?:from|import) (\w+)", SCRIPT.read_text(), flags=re.MULTILINE)
    assert set(imports) <= set(sys.stdlib_module_names) | {"__future__"}, imports
    assert "shell=True" not in SCRIPT.read_text()
