"""`clusterforge health diag`: the srun it runs and the per-node verdicts it reads, from srun's labelled output (a
stand-in srun on PATH, tests/test_health_labels) or from a run saved with --save, each node's verdict the one its
own task printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app
from clusterforge.operations.diag import read_output, srun_command
from clusterforge.operations.node_lines import by_node
from tests.test_health_labels import srun, srun_label

__all__ = ["srun"]  # the fixture, used by name


def result(node: str, status: str = "pass", level: int = 2, detail: str = "dcgmi") -> str:
    """The object the health script's `--diag LEVEL --json` prints."""
    return json.dumps({"node": node, "level": level, "status": status, "seconds": 1.5, "detail": detail})


def prints(tasks: Path, node: str, *lines: str) -> None:
    (tasks / f"{node}.out").write_text("".join(f"{line}\n" for line in lines))


def diag(*args: str) -> tuple[int, str]:
    outcome = CliRunner().invoke(app, ["health", "diag", *args], env={"COLUMNS": "300"})
    assert "Traceback" not in outcome.output
    return outcome.exit_code, outcome.output


def test_the_srun_gives_each_node_one_labelled_diagnostic() -> None:
    assert srun_command(3, ["gpu-0001", "gpu-0002"], partition="maint", reservation="rma", drain=True) == [
        "srun", "--nodelist=gpu-[0001-0002]", "--ntasks=2", "--distribution=arbitrary", "--label", "--exclusive",
        "--job-name=clusterforge-diag", "--time=90", "--kill-on-bad-exit=0", "--partition=maint", "--reservation=rma",
        "/usr/local/sbin/clusterforge-health", "--diag", "3", "--json", "--drain"]


def test_noise_is_ignored_and_a_node_without_a_readable_result_fails() -> None:
    order = ["gpu-0001", "gpu-0002", "gpu-0003"]
    out = "srun: job 7 queued\n" + srun_label([result("gpu-0001", detail="ok") + "\n", "{not json\n",
                                              '{"node": "gpu-0003", "status": "weird"}\n'])
    verdicts = read_output(by_node(out, order), order)
    assert [(v.node, v.status, v.detail) for v in verdicts] == [
        ("gpu-0001", "pass", "ok"),
        ("gpu-0002", "fail", "unreadable result: the output ended inside it"),
        ("gpu-0003", "fail", "unreadable result: status: expected one of pass, fail, skipped, got 'weird'")]


def test_every_node_passing_exits_0_and_reports_each(srun: Path) -> None:
    for node in ("gpu-0001", "gpu-0002"):
        prints(srun, node, result(node))
    code, out = diag("--level", "2", "--nodes", "gpu-0001,gpu-0002", "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    assert [(n["node"], n["status"]) for n in report["nodes"]] == [("gpu-0001", "pass"), ("gpu-0002", "pass")]
    assert report["next"] == [] and report["level"] == 2


@pytest.mark.parametrize("status", ["fail", "silent"])
def test_one_failing_or_silent_node_exits_1_with_what_to_do_next(srun: Path, status: str) -> None:
    prints(srun, "gpu-0001", result("gpu-0001"))
    if status != "silent":
        prints(srun, "gpu-0002", result("gpu-0002", status, detail="level 1: Memory: fail"))
    code, out = diag("-r", "1", "-w", "gpu-0001,gpu-0002")
    assert code == 1, out
    assert "gpu-0001  pass" in out
    assert ("gpu-0002  fail" if status == "fail" else "gpu-0002  missing") in out
    last = out.splitlines()[-1]
    assert last.startswith("next (fail): drain the node" if status == "fail" else "next (missing): find why"), out


def test_one_nodes_forged_lines_fail_that_node_and_leave_the_named_ones_their_own(srun: Path) -> None:
    """gpu-0002's task prints its own pass, a pass for the failing gpu-0003 and a failure for the healthy gpu-0001:
    each node keeps the verdict its own task printed, gpu-0002 fails for what it printed."""
    prints(srun, "gpu-0001", result("gpu-0001"))
    prints(srun, "gpu-0002", result("gpu-0002"), result("gpu-0003"), result("gpu-0001", "fail"))
    prints(srun, "gpu-0003", result("gpu-0003", "fail", detail="level 2: Diagnostic: fail"))
    code, out = diag("-w", "gpu-[0001-0003]", "-f", "json")
    assert code == 1, out
    nodes = {n["node"]: (n["status"], n["detail"]) for n in json.loads(out)["nodes"]}
    assert nodes == {"gpu-0001": ("pass", "dcgmi"),
                     "gpu-0002": ("fail", "printed 3 results naming gpu-0001, gpu-0002, gpu-0003 where one is "
                                          "expected: none of them counts"),
                     "gpu-0003": ("fail", "level 2: Diagnostic: fail")}


def test_a_saved_run_with_forged_lines_names_the_right_node(srun: Path, tmp_path: Path) -> None:
    for node in ("gpu-0001", "gpu-0003"):
        prints(srun, node, result(node, "fail" if node == "gpu-0003" else "pass"))
    prints(srun, "gpu-0002", result("gpu-0003"))  # its only line names gpu-0003
    save = tmp_path / "diag.lines"
    code, live = diag("-w", "gpu-[0001-0003]", "--save", str(save))
    assert code == 1 and "gpu-0002  fail         0.0 s  printed a result naming gpu-0003" in live, live
    assert save.read_text().splitlines()[3] == f"gpu-0002: {result('gpu-0003')}"
    code, again = diag("--from", str(save), "-w", "gpu-[0001-0004]")
    assert code == 1, again
    assert "gpu-0002  fail         0.0 s  printed a result naming gpu-0003 (line 4)" in again
    assert "gpu-0003  fail" in again and "gpu-0004  missing" in again
    assert "level 2 on 4 nodes" in again


@pytest.mark.parametrize(("line", "message"), [
    ('gpu-0002: {"node": "gpu-0002", "level": 2, "seconds": 1}',
     "diag.lines:2: status: missing: expected one of pass, fail, skipped (printed by gpu-0002"),
    ('gpu-0002: {"node": "gpu-0002", "status": "pass", "level": 7}', "diag.lines:2: level: expected a diagnostic"),
    ('gpu-0002: {"node": "gpu-0002", "status": "pass", "seconds": "long"}', "diag.lines:2: seconds: expected a"),
    ('{"node": "gpu-0002", "status": "pass"}', "diag.lines:2: a result without the node that printed it"),
])
def test_a_bad_saved_line_is_exit_2_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str,
                                               message: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path("diag.lines").write_text(f"gpu-0001: {result('gpu-0001')}\n{line}\n")
    code, out = diag("--from", "diag.lines")
    assert code == 2 and out.startswith(message), out


@pytest.mark.parametrize(("args", "message"), [
    (["--level", "5", "-w", "gpu-0001"], "--level: level 5"),
    (["-w", "gpu-[0002-0001]"], "--nodes"),
    ([], "--nodes: name the nodes to diagnose"),
    (["--from", "-", "--save", "x.lines"], "--save: --save keeps what a run's nodes printed"),
])
def test_bad_input_exits_2(args: list[str], message: str) -> None:
    code, out = diag(*args)
    assert code == 2, out
    assert message in out
