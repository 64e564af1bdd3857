"""Prometheus's file of powered-up nodes (clusterforge/powersave/targets.py), which the power-save programs write on
the controller: which nodes it lists for each SLURM state, the pool label the monitoring role relabels from, the
atomic write (a reader sees the old file or the new one, never a part), writers taking turns, and suspend taking
its nodes out before their instances go."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.powersave import programs, targets
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch
from clusterforge.powersave.slurm import RESUME_PREFIX, NodeState, parse_sinfo

CONFIG = PowerSaveConfig(cluster="c1", provider="lab", groups=(
    NodeGroup(name="gpu", nodes="gpu-[0001-0008]"),
    NodeGroup(name="burst", nodes="burst-[0001-0003]")))

# sinfo -h -N -o '%N|%T|%H|%E' as SLURM 24.11 prints each state (flags: ~ powered down, % powering down, # powering
# up, ! power down pending, * not responding)
SINFO = """\
gpu-0001|idle|Unknown|none
gpu-0002|allocated|Unknown|none
gpu-0003|mixed|Unknown|none
gpu-0004|idle#|Unknown|none
gpu-0005|idle~|Unknown|none
gpu-0006|idle%|Unknown|none
gpu-0007|down*|2026-11-25T21:00:00|Not responding
gpu-0008|draining|2026-11-25T21:00:00|health: gpu-xid
burst-0001|idle!|Unknown|none
burst-0002|down~|2026-11-25T21:00:00|clusterforge-resume: InsufficientInstanceCapacity
burst-0003|down|2026-11-25T21:00:00|clusterforge-resume: InsufficientInstanceCapacity
node-0001|idle|Unknown|none
"""


class Sinfo:
    """slurmctld's node states as the programs read them, counted."""

    def __init__(self, text: str = SINFO) -> None:
        self.text = text
        self.calls = 0

    def nodes(self) -> dict[str, NodeState]:
        self.calls += 1
        return parse_sinfo(self.text)

    def set_addresses(self, addresses: Mapping[str, str]) -> None: ...

    def mark_down(self, nodes: Sequence[str], reason: str) -> None: ...

    def power_down(self, nodes: Sequence[str], reason: str) -> None: ...

    def power_up(self, nodes: Sequence[str]) -> None: ...


def listed(path: Path) -> dict[str, list[str]]:
    return {group["labels"][targets.POOL_LABEL]: group["targets"] for group in json.loads(path.read_text())}


@pytest.mark.parametrize(("state", "reason", "wanted"), [
    ("idle", "", True), ("allocated", "", True), ("mixed", "", True), ("completing", "", True),
    ("draining", "health: gpu-xid", True), ("drained", "health: gpu-xid", True),
    ("idle!", "", True),                       # power down pending: still powered, still answering
    ("down*", "Not responding", True),         # SLURM believes it powered: NodeDown must fire
    ("down", "clusterforge-reconcile: replacing", True),
    ("idle#", "", False), ("allocated#", "", False), ("mixed#", "", False),   # powering up: not booted yet
    ("idle~", "", False), ("down~", "", False),                               # powered down
    ("idle%", "", False), ("down%", "", False),                               # powering down
    ("down", f"{RESUME_PREFIX} InsufficientInstanceCapacity", False),         # resume gave it no instance
    ("down#", f"{RESUME_PREFIX} InsufficientInstanceCapacity", False),
])
def test_a_node_is_a_target_while_slurm_holds_it_powered_and_up(state: str, reason: str, wanted: bool) -> None:
    assert targets.is_target(NodeState(state, reason)) is wanted


def test_the_file_lists_each_pools_powered_up_nodes_under_its_pool_label(tmp_path: Path) -> None:
    path = tmp_path / "targets" / "powered-nodes.json"
    path.parent.mkdir()
    slurm = Sinfo()
    line = targets.refresh(CONFIG, slurm, path).line
    assert json.loads(path.read_text()) == [
        {"targets": ["gpu-0001", "gpu-0002", "gpu-0003", "gpu-0007", "gpu-0008"],
         "labels": {"__clusterforge_pool": "gpu"}},
        {"targets": ["burst-0001"], "labels": {"__clusterforge_pool": "burst"}}]
    # node-0001 is in no power-saved group (a static target of its own): not here
    assert "node-0001" not in path.read_text()
    assert slurm.calls == 1
    assert line == f"targets: 6 powered-up nodes in 2 groups (changed): {path}"


def test_a_pool_without_a_powered_up_node_has_no_group_and_none_at_all_is_an_empty_list(tmp_path: Path) -> None:
    path = tmp_path / "powered-nodes.json"
    targets.refresh(CONFIG, Sinfo("gpu-0001|idle~|Unknown|none\nburst-0001|idle|Unknown|none\n"), path)
    assert listed(path) == {"burst": ["burst-0001"]}
    targets.refresh(CONFIG, Sinfo("gpu-0001|idle~|Unknown|none\nburst-0001|idle%|Unknown|none\n"), path)
    assert json.loads(path.read_text()) == []


def test_nodes_the_caller_gives_back_are_left_out_whatever_sinfo_still_says(tmp_path: Path) -> None:
    path = tmp_path / "powered-nodes.json"
    targets.refresh(CONFIG, Sinfo(), path, leaving=["gpu-0001", "gpu-0007", "burst-0001"])
    assert listed(path) == {"gpu": ["gpu-0002", "gpu-0003", "gpu-0008"]}


def test_the_file_is_replaced_whole_readable_by_prometheus_and_only_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "powered-nodes.json"
    path.write_text("[]\n")
    first = path.stat().st_ino
    old = os.umask(0o077)  # slurmctld's programs may run with a strict umask: Prometheus must still read it
    try:
        targets.refresh(CONFIG, Sinfo(), path)
    finally:
        os.umask(old)
    replaced = path.stat()
    assert replaced.st_ino != first  # renamed over, not rewritten in place: no reader sees half a file
    assert stat.S_IMODE(replaced.st_mode) & 0o044 == 0o044
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    line = targets.refresh(CONFIG, Sinfo(), path).line
    assert path.stat().st_ino == replaced.st_ino and "(changed)" not in line  # same content: left alone


def test_a_new_file_is_readable_by_others_under_a_strict_umask(tmp_path: Path) -> None:
    path = tmp_path / "powered-nodes.json"
    old = os.umask(0o077)
    try:
        targets.refresh(CONFIG, Sinfo(), path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_reader_never_sees_a_partial_file(tmp_path: Path) -> None:
    """Prometheus reads the file whenever it changes: while writers replace it with two different contents, every
    read parses and is one of the two."""
    path = tmp_path / "powered-nodes.json"
    many = PowerSaveConfig(cluster="c1", provider="lab", groups=(
        NodeGroup(name="big", nodes="big-[00001-20000]"),))
    up = Sinfo("".join(f"big-{i:05d}|idle|Unknown|none\n" for i in range(1, 20001)))
    down = Sinfo("big-00001|idle|Unknown|none\n")
    targets.refresh(many, down, path)
    seen: set[int] = set()
    broken: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            text = path.read_text()
            try:
                seen.add(sum(len(g["targets"]) for g in json.loads(text)))
            except ValueError:
                broken.append(text[:40])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(20):
            targets.refresh(many, up, path)
            targets.refresh(many, down, path)
    finally:
        stop.set()
        reader.join()
    assert not broken, broken[:3]
    assert seen <= {1, 20000} and seen


def test_writers_take_turns_and_each_reads_sinfo_inside_its_turn(tmp_path: Path) -> None:
    """A reconcile pass that read sinfo before a suspend wrote must not write its older view after it: the lock is
    taken before sinfo is read, so a second writer waits and then reads the newer state."""
    path = tmp_path / "powered-nodes.json"
    order: list[str] = []
    entered = threading.Event()
    release = threading.Event()

    class Slow(Sinfo):
        def nodes(self) -> dict[str, NodeState]:
            order.append("slow reads")
            entered.set()
            release.wait(5)
            return super().nodes()

    class Fast(Sinfo):
        def nodes(self) -> dict[str, NodeState]:
            order.append("fast reads")
            return super().nodes()

    slow = threading.Thread(target=targets.refresh, args=(CONFIG, Slow(), path))
    slow.start()
    assert entered.wait(5)
    fast = threading.Thread(target=targets.refresh, args=(CONFIG, Fast("burst-0001|idle|Unknown|none\n"), path))
    fast.start()
    time.sleep(0.3)
    assert order == ["slow reads"]  # the second writer waits for the first one's turn, before reading sinfo
    release.set()
    slow.join(5)
    fast.join(5)
    assert order == ["slow reads", "fast reads"]
    assert listed(path) == {"burst": ["burst-0001"]}  # the later read is the file's content


def test_a_folder_nobody_made_is_a_clusterforge_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "powered-nodes.json"
    with pytest.raises(ClusterforgeError) as caught:
        targets.refresh(CONFIG, Sinfo(), path)
    assert str(path) in caught.value.problems[0].render()


class Recorded:
    """A provider that notes what the targets file held when it was asked to terminate."""

    def __init__(self, path: Path, live: dict[str, Instance]) -> None:
        self.path = path
        self.live = live
        self.file_at_terminate: dict[str, list[str]] | None = None

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        return {n: i for n, i in self.live.items() if n in nodes}

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        return Launch({n: Instance(f"i-{n}", n, None) for n in nodes})

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        return {i.node: "10.0.0.1" for i in instances}

    def terminate(self, instances: Sequence[Instance]) -> None:
        self.file_at_terminate = listed(self.path) if self.path.exists() else None

    def everything(self) -> list[Instance]:
        return list(self.live.values())

    def impaired(self) -> list[Instance]:
        return []

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """None: a launch makes a new instance, so resume looks a node up with `find` first."""
        return {}


@pytest.fixture
def program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Recorded]:
    """The programs as slurmctld runs them, with this provider and sinfo answering SINFO."""
    config = tmp_path / "clusterforge-powersave.json"
    config.write_text(CONFIG.model_dump_json())
    path = tmp_path / "powered-nodes.json"
    provider = Recorded(path, {n: Instance(f"i-{n}", n, "10.0.0.9") for n in ("gpu-0001", "gpu-0002", "burst-0001")})
    monkeypatch.setattr(programs, "provider_for", lambda cfg: provider)
    monkeypatch.setattr(programs, "Scontrol", Sinfo)
    monkeypatch.setattr(programs.time, "sleep", lambda s: None)  # suspend's grace, tested on its own
    monkeypatch.setenv("CLUSTERFORGE_POWERSAVE", str(config))
    monkeypatch.setenv("CLUSTERFORGE_TARGETS", str(path))
    monkeypatch.delenv("SLURM_RESUME_FILE", raising=False)
    return path, provider


def test_suspend_takes_its_nodes_out_of_the_file_before_it_terminates_them(program: tuple[Path, Recorded]) -> None:
    _, provider = program
    assert programs.suspend_main(["gpu-[0001-0002]"]) == 0
    assert provider.file_at_terminate == {"gpu": ["gpu-0003", "gpu-0007", "gpu-0008"], "burst": ["burst-0001"]}


def test_suspend_waits_for_prometheus_to_drop_its_nodes_only_when_the_file_listed_them(
        program: tuple[Path, Recorded], monkeypatch: pytest.MonkeyPatch) -> None:
    """Prometheus applies a changed file within seconds, not at once: suspend terminates after DROP_GRACE_S, so an
    instance is not gone while its target is still scraped (up == 0 would start NodeDown's clock)."""
    path, provider = program
    events: list[str] = []
    monkeypatch.setattr(programs.time, "sleep", lambda s: events.append(f"sleep {s}"))
    terminate = provider.terminate
    monkeypatch.setattr(provider, "terminate", lambda found: (events.append("terminate"), terminate(found)))
    targets.refresh(CONFIG, Sinfo(), path)  # gpu-0001 is listed
    assert programs.suspend_main(["gpu-0001"]) == 0
    assert events == [f"sleep {targets.DROP_GRACE_S}", "terminate"]
    events.clear()
    assert programs.suspend_main(["gpu-0001"]) == 0  # no longer listed: nothing to wait for
    assert events == ["terminate"]
    assert 0 < targets.DROP_GRACE_S < 10  # below the smallest SuspendTimeout the blueprint allows


def test_resume_and_reconcile_write_the_file_too(program: tuple[Path, Recorded]) -> None:
    path, _ = program
    assert programs.resume_main(["gpu-0004"]) == 0
    assert listed(path) == {"gpu": ["gpu-0001", "gpu-0002", "gpu-0003", "gpu-0007", "gpu-0008"],
                            "burst": ["burst-0001"]}
    path.unlink()
    assert programs.reconcile_main([]) == 0
    assert listed(path)["burst"] == ["burst-0001"]


def test_a_file_that_cannot_be_written_is_logged_and_does_not_fail_the_program(
        program: tuple[Path, Recorded], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("CLUSTERFORGE_TARGETS", str(tmp_path / "nowhere" / "powered-nodes.json"))
    assert programs.suspend_main(["gpu-0001"]) == 0
    assert program[1].file_at_terminate is None  # terminated all the same
    assert any("targets: " in r.getMessage() and "cannot lock" in r.getMessage() for r in caplog.records)


def test_the_programs_the_slurm_role_and_the_monitoring_role_name_one_file() -> None:
    """The programs write where the slurm role points them (and makes the folder), and Prometheus reads there."""
    import yaml

    from tests.conftest import ROOT

    slurm = yaml.safe_load((ROOT / "roles/slurm/defaults/main.yml").read_text())
    monitoring = yaml.safe_load((ROOT / "roles/monitoring/defaults/main.yml").read_text())
    wrapper = (ROOT / "roles/slurm/templates/clusterforge-power-save.sh.j2").read_text()
    assert slurm["slurm_power_save_targets_file"] == monitoring["monitoring_power_saved_targets_file"]
    assert slurm["slurm_power_save_targets_file"] == targets.DEFAULT_FILE
    assert "CLUSTERFORGE_TARGETS={{ slurm_power_save_targets_file }}" in wrapper
