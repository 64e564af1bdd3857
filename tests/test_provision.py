"""provision: the summary folded from ansible-runner events, the recap, the command line, and the CLI's input errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from clusterforge.provision.runner import Outcome, Run, execute
from clusterforge.provision.summary import RunSummary, recap, summarize


def stats(**counts: dict[str, int]) -> dict:
    return {"event": "playbook_on_stats", "event_data": counts}


def failed(host: str, task: str, msg: str, ignore: bool = False) -> dict:
    return {"event": "runner_on_failed",
            "event_data": {"host": host, "task": task, "res": {"msg": msg}, "ignore_errors": ignore}}


def test_stats_give_per_host_counts() -> None:
    summary = summarize([stats(ok={"a": 10, "b": 9}, changed={"a": 2}, failures={"b": 1}, dark={},
                               skipped={"a": 3})])
    assert summary.finished
    assert (summary.hosts["a"].ok, summary.hosts["a"].changed, summary.hosts["a"].skipped) == (10, 2, 3)
    assert summary.hosts["b"].failed == 1 and summary.hosts["b"].status == "failed"
    assert summary.failed_hosts == ["b"] and not summary.ok
    assert summary.totals() == {"hosts": 2, "ok": 19, "changed": 2, "failed": 1, "unreachable": 0}


def test_unreachable_hosts_are_failures_with_their_reason() -> None:
    reason = {"msg": "ssh: connect to host c port 22: timed out"}
    summary = summarize([
        {"event": "runner_on_unreachable", "event_data": {"host": "c", "task": "Gathering Facts", "res": reason}},
        stats(ok={"a": 5}, dark={"c": 1}),
    ])
    assert summary.hosts["c"].status == "unreachable"
    assert summary.hosts["c"].errors == ["Gathering Facts: ssh: connect to host c port 22: timed out"]
    assert summary.failed_hosts == ["c"]


def test_ignored_failures_are_not_errors_and_messages_keep_one_line() -> None:
    summary = summarize([failed("a", "probe", "ignored", ignore=True), failed("a", "apt", "E: broken\nmore"),
                         stats(ok={"a": 1}, failures={"a": 1})])
    assert summary.hosts["a"].errors == ["apt: E: broken"]


def test_without_stats_the_run_did_not_finish() -> None:
    assert not RunSummary().ok
    assert not summarize([failed("a", "t", "m")]).finished


def test_all_ok_run_is_ok() -> None:
    assert summarize([stats(ok={"a": 3, "b": 3}, changed={"a": 1})]).ok


def test_recap_is_the_last_play_recap() -> None:
    out = "PLAY RECAP ***\nold : ok=1\n\nTASK [x]\nPLAY RECAP ***\na : ok=3 changed=0\nb : ok=3 changed=1\n\ntrailer"
    assert recap(out) == "PLAY RECAP ***\na : ok=3 changed=0\nb : ok=3 changed=1"
    assert recap("no recap") == ""


def test_outcome_problem_falls_back_to_the_output() -> None:
    outcome = Outcome(RunSummary(), 4, "ERROR! the role 'x' was not found\n\nsee above\n")
    assert "the role 'x' was not found" in outcome.problem("site.yml").message


def test_command_line() -> None:
    run = Run(project=Path("/p"), inventories=[Path("/i")], private_dir=Path("/d"), check=True, diff=True,
              tags="install", extra_vars_files=[Path("/v.yml")], extra_vars={"clusterforge_serial": "10%"},
              forks=200)
    assert run.cmdline() == ["-e", "@/v.yml", "-e", '{"clusterforge_serial": "10%"}', "--check", "--diff",
                             "--tags", "install", "--forks", "200"]


def test_a_real_run_keeps_no_credential_of_the_caller_on_disk(tmp_path, monkeypatch) -> None:
    """ansible-runner records the whole environment of each run; a cloud token there would outlive the run."""
    pytest.importorskip("ansible_runner")
    token = "cf-test-token-" + "7" * 24
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", token)
    (tmp_path / "ansible.cfg").write_text("[defaults]\nretry_files_enabled = false\n")
    (tmp_path / "play.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n"
                                       "    - ansible.builtin.debug: {msg: ran}\n")
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here: {ansible_connection: local, "
                                        f"ansible_python_interpreter: {sys.executable}}}\n")
    private = tmp_path / "private"
    outcome = execute(Run(project=tmp_path, inventories=[tmp_path / "hosts.yml"], private_dir=private,
                          playbook="play.yml"))
    assert outcome.summary.ok and outcome.summary.hosts["here"].ok == 1, outcome.stdout
    records = list(private.glob("artifacts/*/command"))
    assert records and all(json.loads(r.read_text())["command"][0].endswith("ansible-playbook") for r in records)
    leaking = [str(f) for f in private.rglob("*") if f.is_file() and token.encode() in f.read_bytes()]
    assert leaking == []


def test_provision_without_inventory_is_an_input_error(cli, tmp_path) -> None:
    result = cli("provision", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path}: no inventory/hosts.yml here (write one with `clusterforge render" in result.stderr
    assert "Traceback" not in result.output


def test_provision_missing_extra_vars_file(cli, tmp_path) -> None:
    (tmp_path / "inventory").mkdir()
    (tmp_path / "inventory" / "hosts.yml").write_text("all: {}\n")
    result = cli("provision", tmp_path, "-e", tmp_path / "vault.yml")
    assert result.exit_code == 2 and "vault.yml: --extra-vars: no such file" in result.stderr


def test_skip_messages_are_collected_with_their_hosts() -> None:
    def debug(host: str, msg: str) -> dict:
        return {"event": "runner_on_ok", "event_data": {"host": host, "task_action": "ansible.builtin.debug",
                                                        "res": {"msg": msg}}}

    summary = summarize([debug("a", "skipped modprobe: no HCA"), debug("b", "skipped modprobe: no HCA"),
                         debug("a", "libnccl.so.2 reports 22602")])
    assert summary.skipped == {"skipped modprobe: no HCA": ["a", "b"]}
