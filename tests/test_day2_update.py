"""The update's order, drain/requeue/reboot/health/resume steps, failure budget and resume (day2/update.py),
against a small simulation of slurmctld: the lab tests (tests/lab/test_lab_day2.py) run the real thing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.hostlist import compress, expand
from clusterforge.day2.diff import Action, Change, Diff
from clusterforge.day2.remote import Result
from clusterforge.day2.rendered import Host, Rendered
from clusterforge.day2.rolling import Progress
from clusterforge.day2.update import Settings, Updater, requeue_allowed
from clusterforge.provision.runner import Outcome
from clusterforge.provision.summary import RunSummary

CTL = "ctl-0001"
NODES = [f"node-000{i}" for i in range(1, 5)]
CONF = "NodeName=node-[0001-0004] CPUs=2\nPartitionName=debug Nodes=node-[0001-0004] Default=YES\nJobRequeue=1\n"


class FakeSlurm:
    """Nodes, drains and jobs as slurmctld keeps them; a requeued job restarts on idle, undrained nodes."""

    def __init__(self, jobs: dict[str, list[str]], failing_health: Sequence[str] = ()) -> None:
        self.drained: dict[str, str] = {}
        self.down: dict[str, str] = {}
        self.jobs = {job: list(nodes) for job, nodes in jobs.items()}
        self.requeues: dict[str, int] = {}
        self.reboots: list[str] = []
        self.failing_health = set(failing_health)
        self.log: list[str] = []

    def _state(self, node: str) -> str:
        if node in self.down:
            return "down"
        busy = any(node in nodes for nodes in self.jobs.values())
        if node in self.drained:
            return "draining" if busy else "drained"
        return "allocated" if busy else "idle"

    def run(self, host: str, argv: Sequence[str], timeout: float = 60) -> Result:
        args = list(argv)
        if args[0].endswith("clusterforge-health"):
            self.log.append(f"health {host}")
            return Result(1 if host in self.failing_health else 0, "fabric: port down" if host in self.failing_health
                          else "")
        assert host == CTL, args
        if args[0] == "sh":
            self.log.append(f"backup {args[2].split('&&')[1].split()[0]}")
            return Result(0, "")
        if args[0] == "sinfo":
            names = expand(args[args.index("--nodes") + 1])
            lines = [f"{n}|{self._state(n)}|{self.drained.get(n) or self.down.get(n) or 'none'}" for n in names]
            return Result(0, "\n".join(lines))
        if args[0] == "squeue" and "--nodelist" in args:
            wanted = set(expand(args[args.index("--nodelist") + 1]))
            return Result(0, "\n".join(f"{j}|{compress(n)}" for j, n in self.jobs.items() if wanted & set(n)))
        if args[0] == "squeue":
            return Result(0, "\n".join(compress(n) for n in self.jobs.values()))
        if args[:2] == ["scontrol", "update"]:
            names = expand(args[2].split("=", 1)[1])
            if args[3] == "State=DRAIN":
                self.drained.update(dict.fromkeys(names, args[4].split("=", 1)[1]))
                for name in names:
                    self.down.pop(name, None)
                self.log.append(f"drain {compress(names)}")
            else:
                for name in names:
                    self.drained.pop(name, None)
                    self.down.pop(name, None)
                self.log.append(f"resume {compress(names)}")
            return Result(0, "")
        if args[:2] == ["scontrol", "requeue"]:
            for job in args[2].split(","):
                self.requeues[job] = self.requeues.get(job, 0) + 1
                size = len(self.jobs[job])
                self.jobs[job] = []
                free = [n for n in NODES if self._state(n) == "idle"]
                self.jobs[job] = free[:size] if len(free) >= size else []
                self.log.append(f"requeue {job} -> {compress(self.jobs[job]) if self.jobs[job] else 'pending'}")
            return Result(0, "")
        if args[:2] == ["scontrol", "reboot"]:
            names = expand(args[-1])
            self.reboots.extend(names)
            self.down.update(dict.fromkeys(names, args[3].split("=", 1)[1]))
            return Result(0, "")
        raise AssertionError(args)


class FakeApply:
    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.failing = set(failing)

    def __call__(self, hosts: Sequence[str], extra_vars: dict[str, Any]) -> Outcome:
        assert extra_vars == {"slurm_verify_mpi": False}
        self.calls.append(tuple(hosts))
        summary = RunSummary(finished=True)
        for host in hosts:
            result = summary.host(host)
            if host in self.failing:
                result.failed = 1
                result.errors.append("apt: no such version")
        return Outcome(summary, 2 if self.failing & set(hosts) else 0, "")


def rendered(hosts: Sequence[str] = (CTL, *NODES), conf: str = CONF) -> Rendered:
    return Rendered({"slurm/slurm.conf": conf},
                    {h: Host(("slurm_controller",) if h == CTL else ("slurm_compute",), {}) for h in hosts},
                    {"slurm_dbd_host": CTL, "slurm_accounting_enabled": True})


def driver_pin(action: Action = Action.REBOOT) -> Diff:
    change = Change("group_vars", "nvidia_driver_version", "570.133.20", "570.158.01", action, tuple(NODES), None,
                    "the kernel module")
    return Diff((), (), (), (change,), ())


def updater(tmp_path: Path, slurm: FakeSlurm, apply: FakeApply, diff: Diff | None = None,
            **settings: Any) -> tuple[Updater, list[str]]:
    said: list[str] = []
    options = {"unit": "node", "max_fraction": 0.25, "drain_timeout_s": 0, "poll_s": 0, **settings}
    return Updater(diff or driver_pin(), rendered(), slurm, apply, Progress.load(tmp_path / "p.json", "k"),
                   Settings(**options), said.append), said


def test_a_reboot_change_rolls_one_node_at_a_time_idle_first_and_requeues_the_job_once(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({"7": ["node-0001", "node-0002"]}), FakeApply()
    update, _ = updater(tmp_path, slurm, apply)

    report = update.run()

    assert apply.calls == [(CTL,), ("node-0003",), ("node-0004",), ("node-0001",), ("node-0002",)]
    assert report.requeued == ["7"] and slurm.requeues == {"7": 1}
    assert slurm.jobs["7"] == ["node-0003", "node-0004"]  # restarted on nodes already done
    assert "drain node-0002" in slurm.log  # the job's other node waits drained for its turn
    assert slurm.reboots == ["node-0003", "node-0004", "node-0001", "node-0002"]
    assert [line for line in slurm.log if line.startswith("health")] == [f"health {n}" for n in
                                                                         ("node-0003", "node-0004", "node-0001",
                                                                          "node-0002")]
    assert not slurm.drained and not slurm.down and report.ok
    assert [len(b.hosts) for b, _ in report.batches] == [1, 1, 1, 1]


def test_a_drain_change_does_not_reboot_and_settings_that_need_no_drain_roll_nothing(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({}), FakeApply()
    updater(tmp_path, slurm, apply, driver_pin(Action.DRAIN))[0].run()
    assert not slurm.reboots and len(apply.calls) == 5
    reconfigure = Change("slurm.conf", "PartitionName=debug", "MaxTime=1", "MaxTime=2", Action.RECONFIGURE,
                         (CTL,), "slurmctld", "reconfigure")
    slurm2, apply2 = FakeSlurm({"7": ["node-0001"]}), FakeApply()
    report = updater(tmp_path / "b", slurm2, apply2, Diff((), (), (), (reconfigure,), ()))[0].run()
    assert apply2.calls == [(CTL, *NODES)] and not report.batches and not slurm2.log


def test_a_failed_host_stays_drained_and_the_budget_stops_the_update(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({}, failing_health=["node-0001"]), FakeApply(failing=["node-0002"])
    update, _ = updater(tmp_path, slurm, apply, max_failures=1)
    with pytest.raises(ClusterforgeError, match="more than the failure budget"):
        update.run()
    assert set(update.report.failed) == {"node-0001", "node-0002"}
    assert "health check: fabric: port down" in update.report.failed["node-0001"]
    assert set(slurm.drained) | set(slurm.down) == {"node-0001", "node-0002"}  # left out of service, with reasons
    assert apply.calls[-1] == ("node-0002",)


def test_an_interrupted_update_resumes_after_the_last_finished_host(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({}), FakeApply(failing=["node-0002"])
    with pytest.raises(ClusterforgeError):
        updater(tmp_path, slurm, apply)[0].run()
    slurm.drained.clear()
    slurm.down.clear()
    again = FakeApply()
    update, said = updater(tmp_path, slurm, again)
    update.run()
    assert again.calls == [("node-0002",), ("node-0003",), ("node-0004",)]  # ctl and node-0001 were done
    assert said[0].startswith("resuming: 1 step(s) and 1 host(s) done")


def test_without_requeue_a_busy_batch_is_skipped_and_resumed_untouched(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({"7": ["node-0001"]}), FakeApply()
    update = Updater(driver_pin(), rendered(conf=CONF.replace("JobRequeue=1", "JobRequeue=0")), slurm, apply,
                     Progress.load(tmp_path / "p.json", "k"),
                     Settings(unit="node", max_fraction=0.25, drain_timeout_s=0, poll_s=0, max_failures=5), print)
    report = update.run()
    assert report.failed == {"node-0001": "jobs still running after the drain timeout and requeue is off"}
    assert "node-0001" not in slurm.drained and slurm.jobs["7"] == ["node-0001"]  # the job ran on
    assert ("node-0001",) not in apply.calls


def test_nodes_drained_by_someone_else_are_updated_but_not_resumed(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({}), FakeApply()
    slurm.drained["node-0004"] = "clusterforge-health: gpu-xid (reboot): Xid 79"
    updater(tmp_path, slurm, apply)[0].run()
    assert ("node-0004",) in apply.calls and "node-0004" in slurm.reboots
    assert slurm.drained["node-0004"] == "clusterforge-health: gpu-xid (reboot): Xid 79"  # its reason, as it was
    assert "resume node-0004" not in slurm.log


def test_requeue_follows_the_rendered_job_requeue() -> None:
    assert requeue_allowed(rendered())
    assert not requeue_allowed(rendered(conf="JobRequeue=0\n"))


def test_update_dry_run_renders_and_lists_the_batches_without_touching_a_host(cli, tmp_path: Path) -> None:
    import yaml

    from tests.conftest import EXAMPLES

    data = yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(data))
    data.setdefault("software", {})["nvidia_driver"] = "595.71.05"
    (tmp_path / "new.yaml").write_text(yaml.safe_dump(data))

    result = cli("update", tmp_path / "old.yaml", tmp_path / "new.yaml", "-o", tmp_path / "out", "--dry-run",
                 "--max-fraction", "0.2")

    assert result.exit_code == 0, result.output
    assert "595.71.05" in (tmp_path / "out/inventory/group_vars/all.yml").read_text()
    assert "rolling: 16 host(s)" in result.output
    batches = [line.strip() for line in result.output.splitlines() if line.startswith("  rack ")]
    # 20 % of 16 is 3: whole racks; rack a01 holds the controller (gpu-0001) and goes last
    assert batches == ["rack a02: gpu-[0004-0006]", "rack a03: gpu-[0007-0009]", "rack b01: gpu-[0010-0012]",
                       "rack b02: gpu-[0013-0014]", "rack b03: gpu-[0015-0016]", "rack a01: gpu-[0001-0003]"]


def test_update_refuses_a_design_the_gate_rejects(cli, tmp_path: Path) -> None:
    from tests.conftest import EXAMPLES

    text = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    (tmp_path / "old.yaml").write_text(text)
    (tmp_path / "new.yaml").write_text(text.replace("amps: 60", "amps: 16"))
    result = cli("update", tmp_path / "old.yaml", tmp_path / "new.yaml", "-o", tmp_path / "out", "--dry-run")
    assert result.exit_code == 1 and "update refused" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_commands_reach_a_host_through_ansible_with_their_arguments_intact(tmp_path: Path) -> None:
    from clusterforge.day2.remote import AnsibleRemote
    from clusterforge.files.checkout import project_root

    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  hosts:\n    here:\n      ansible_connection: local\n"
                         "      ansible_python_interpreter: " + __import__("sys").executable + "\n")
    remote = AnsibleRemote(project_root(), inventory, tmp_path / "runner", become=False)
    said = remote.run("here", ["printf", "%s|", "a b", "$(id)", "; true"])
    assert (said.rc, said.stdout) == (0, "a b|$(id)|; true|")  # one argument each, no shell
    failed = remote.run("here", ["false"])
    assert failed.rc == 1


def test_a_slurm_upgrade_backs_up_then_upgrades_slurmdbd_then_the_controllers(tmp_path: Path) -> None:
    pin = Change("group_vars", "slurm_version", "24.11", "25.05", Action.RESTART, (CTL, *NODES), "slurmd", "upgrade")
    slurm, apply = FakeSlurm({"7": ["node-0001"]}), FakeApply()
    report = updater(tmp_path, slurm, apply, Diff((), (), (), (pin,), ()))[0].run()
    assert slurm.log == ["backup mysqldump", "backup tar"]  # the database, then StateSaveLocation, before any upgrade
    assert apply.calls == [(CTL,), (CTL,), (CTL, *NODES)]  # slurmdbd's host, the controllers, then in place
    assert report.ok and slurm.jobs["7"] == ["node-0001"]  # a daemon restart: the job runs on


def test_update_with_nothing_changed_touches_no_host(cli, tmp_path: Path) -> None:
    from tests.conftest import EXAMPLES

    result = cli("update", EXAMPLES / "onprem-dgx-h100.yaml", EXAMPLES / "onprem-dgx-h100.yaml",
                 "-o", tmp_path / "out")  # no --dry-run: any host contacted would fail the command
    assert result.exit_code == 0, result.output
    assert "nothing to change" in result.output and (tmp_path / "out/inventory/hosts.yml").is_file()


def test_a_removed_node_is_drained_and_emptied_before_slurm_conf_drops_it(tmp_path: Path) -> None:
    gone = Change("hosts.yml", "node-0004", "slurm_compute", None, Action.DRAIN, ("node-0004",), None, "removed")
    slurm, apply = FakeSlurm({"7": ["node-0004"]}), FakeApply()
    said: list[str] = []
    update = Updater(Diff((), ("node-0004",), (), (gone,), ()), rendered((CTL, *NODES[:3])), slurm, apply,
                     Progress.load(tmp_path / "p.json", "k"),
                     Settings(unit="node", max_fraction=0.25, drain_timeout_s=0, poll_s=0), said.append)
    update.run()
    assert slurm.log[:2] == ["drain node-0004", "requeue 7 -> node-0001"]  # before site.yml drops it
    assert apply.calls == [(CTL, *NODES[:3])] and said[0].startswith("retire node-0004")


def select_type_change() -> Diff:
    why = 'slurm.conf(5): "When changed, all job information (running and pending) will be lost"'
    return Diff((), (), (), (
        Change("slurm.conf", "SelectType", "select/cons_tres", "select/linear", Action.LOSE_JOBS, (CTL,),
               "slurmctld", why),
        Change("slurm.conf", "SelectType", "select/cons_tres", "select/linear", Action.LOSE_JOBS, tuple(NODES),
               "slurmd", why)), ())


def test_a_change_that_loses_jobs_is_refused_without_its_flag(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({"7": ["node-0001"]}), FakeApply()
    with pytest.raises(ClusterforgeError, match="--accept-job-loss"):
        updater(tmp_path, slurm, apply, select_type_change())[0].run()
    assert apply.calls == [] and slurm.log == []  # nothing touched


def test_a_change_that_loses_jobs_is_applied_in_place_with_its_flag(tmp_path: Path) -> None:
    slurm, apply = FakeSlurm({}), FakeApply()
    update, _ = updater(tmp_path, slurm, apply, select_type_change(), accept_job_loss=True)
    report = update.run()
    # the daemons restart with the new setting on every host at once: rolling nodes would keep nothing
    assert apply.calls == [(CTL, *NODES)] and not report.batches and report.ok


def test_update_refuses_a_change_that_loses_jobs_unless_accepted(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    from tests.conftest import EXAMPLES

    text = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    (tmp_path / "old.yaml").write_text(text)
    (tmp_path / "new.yaml").write_text(text.replace("default: true}]", "default: true}]\n  state_save_location: "
                                                    "/var/spool/slurmctld/state", 1))
    result = cli("update", tmp_path / "old.yaml", tmp_path / "new.yaml", "-o", tmp_path / "out")
    assert result.exit_code == 1, result.output  # refused before any host is contacted
    assert "StateSaveLocation" in result.output and "--accept-job-loss" in result.output
    assert "update refused" in result.output
    result = cli("update", tmp_path / "old.yaml", tmp_path / "new.yaml", "-o", tmp_path / "out", "--dry-run",
                 "--accept-job-loss")
    assert result.exit_code == 0, result.output
    assert "largest action lose_jobs" in result.output


def test_update_help_says_what_accepting_job_loss_means(cli) -> None:
    result = cli("update", "--help")
    assert "--accept-job-loss" in result.output and "LOSE_JOBS" in result.output
