"""Which node printed what: srun's labels read back (operations/node_lines.py), one result per node, its own
(operations/own_results.py), the srun line that makes task N run on the N-th node (operations/srun.py), and the
saved `NODE: {...}` format.

`srun_label` stands in for srun 24.11 with `--label`, written from its source: slurmstepd sends a task's output in
messages of at most 1,024 bytes (SLURM_IO_MAX_MSG_LEN; a longer line is cut), and srun writes each message with
`%*d: ` before every line in it, ending a message that does not end a line with a newline of its own
(src/common/write_labelled_message.c). `SRUN` is an srun on PATH built on it: it lays task N out on the N-th name of
--nodelist (the arbitrary distribution) and prints what `$SRUN_TASKS/<node>.out` holds as that node's task output.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.operations.node_lines import by_node, by_task, label
from clusterforge.operations.own_results import read_saved, saved_text
from clusterforge.operations.perf_run import node_result
from clusterforge.operations.srun import per_node_srun, task_order

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = 1024  # SLURM_IO_MAX_MSG_LEN


def srun_label(outputs: list[str], message: int = MESSAGE) -> str:
    """What `srun --label` writes for tasks whose stdout are OUTPUTS (task N printed outputs[N]): each task's output
    cut into messages at its newlines and every `message` bytes, the tasks' messages interleaved one by one (another
    task's message comes between two pieces of a long line)."""
    width = len(str(max(len(outputs) - 1, 0)))
    queues: list[list[str]] = []
    for text in outputs:
        pieces: list[str] = []
        for line in text.split("\n"):  # a newline only: a task's \r or U+2028 is text to srun
            line += "\n"
            pieces += [line[i:i + message] for i in range(0, len(line), message)]
        if text.endswith("\n") or not text:
            pieces.pop()  # the empty rest after the last newline
        queues.append(pieces)
    out: list[str] = []
    while any(queues):
        for task, pieces in enumerate(queues):
            if pieces:
                piece = pieces.pop(0)
                out.append(f"{task:>{width}}: {piece}" + ("" if piece.endswith("\n") else "\n"))
    return "".join(out)


SRUN = f"""#!{sys.executable}
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})
from clusterforge.core.hostlist import expand
from tests.test_health_labels import srun_label
args = sys.argv[1:]
with open(os.environ["TOOL_LOG"], "a") as log:
    log.write(json.dumps(["srun", *args]) + "\\n")
opt = dict(a.split("=", 1) for a in args if a.startswith("--") and "=" in a)
assert "--label" in args and opt["--distribution"] == "arbitrary", args
nodes = expand(opt["--nodelist"])
assert int(opt["--ntasks"]) == len(nodes), args
folder = os.environ["SRUN_TASKS"]
def printed(node):
    path = os.path.join(folder, node + ".out")
    return open(path).read() if os.path.exists(path) else ""
sys.stdout.write(os.environ.get("SRUN_SAYS", ""))
sys.stdout.write(srun_label([printed(node) for node in nodes]))
sys.exit(int(os.environ.get("SRUN_EXIT", "0")))
"""


@pytest.fixture
def srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The labelling srun on PATH; write `<node>.out` in the folder it returns for what that node's task prints."""
    bin_dir = tmp_path / "srunbin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(SRUN)
    (bin_dir / "srun").chmod(0o755)
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SRUN_TASKS", str(tasks))
    monkeypatch.setenv("TOOL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("COLUMNS", "100")
    return tasks


def perf_object(node: str, status: str = "pass", checksum: str = "9f2c0a5b7e1d3c48", gpus: int = 8) -> str:
    """A perf result as the health script prints it: 8 GPUs make ~1.6 KB, more than one srun message."""
    return json.dumps({"node": node, "status": status, "seconds": 2.1, "codes": [], "detail": "",
                       "gpus": [{"index": i, "name": "NVIDIA H100 80GB HBM3", "gemm_tflops": 793.1,
                                 "hbm_gbps": 3030.5, "checksum": checksum, "checksum_ok": True, "seconds": 1.4,
                                 "status": "pass"} for i in range(gpus)]})


def test_the_srun_puts_task_n_on_the_nth_node_and_labels_its_lines() -> None:
    assert task_order(["gpu-0003", "gpu-0001", "gpu-0002", "gpu-0001"]) == ["gpu-0001", "gpu-0002", "gpu-0003"]
    assert per_node_srun(["gpu-0002", "gpu-0001"], "job", 5, "maint", None, "--x") == [
        "srun", "--nodelist=gpu-[0001-0002]", "--ntasks=2", "--distribution=arbitrary", "--label", "--exclusive",
        "--job-name=job", "--time=5", "--x", "--partition=maint"]


def test_a_long_result_cut_into_labelled_pieces_between_other_tasks_lines_is_put_back_together() -> None:
    first, second = perf_object("gpu-0001"), perf_object("gpu-0002", gpus=72)
    assert len(first) > MESSAGE and len(second) > 10 * MESSAGE
    out = srun_label([first + "\n", "stray line\n" + second + "\n", ""])
    assert out.count("\n0: ") >= 1 and "1: stray line\n" in out
    printed = by_node(out, ["gpu-0001", "gpu-0002", "gpu-0003"])
    assert sorted(printed) == ["gpu-0001", "gpu-0002"]
    assert [p.text for p in printed["gpu-0001"].objects] == [first]
    assert [p.text for p in printed["gpu-0002"].objects] == [second]


@pytest.mark.parametrize("cut", [1, 7, 100, 1024])
def test_strings_with_braces_and_escapes_survive_any_cut(cut: int) -> None:
    text = json.dumps({"node": "n1", "status": "fail", "detail": 'a "}{" \\ and \\" ] [ {{'})
    printed = by_node(srun_label([text + "\n"], message=cut), ["n1"])
    assert [p.text for p in printed["n1"].objects] == [text]


def test_labels_are_srun_s_never_the_task_s() -> None:
    """A task that prints another task's label, a carriage return or a line separator (which str.splitlines breaks
    at) before it still only speaks for itself: srun labels the start of each of its lines."""
    forged, own = perf_object("gpu-0001", status="fail"), perf_object("gpu-0002")
    task_1 = f"0: {forged}\n\r0: {forged}\n\u20280: {forged}\n{own}\n"
    out = srun_label(["", task_1])
    printed = by_node(out, ["gpu-0001", "gpu-0002"])
    assert list(printed) == ["gpu-0002"] and [p.text for p in printed["gpu-0002"].objects] == [own]
    assert label("  7: text") == (7, "text") and label("srun: error: x") is None and label("x7: y") is None


def test_a_result_past_the_line_bound_or_cut_off_is_not_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    import clusterforge.operations.node_lines as node_lines

    monkeypatch.setattr(node_lines, "MAX_LINE_BYTES", 4096)
    printed = by_task(srun_label(["{" + '"x": 1, ' * 2000 + "}\n", '{"node": "n2", "status": "pa']).split("\n"), 2)
    assert printed[0].objects[0].cut == "longer than 0 MiB" and printed[0].count == 1
    assert printed[1].objects[0].cut == "the output ended inside it"


def test_a_2_mb_line_of_braces_and_quotes_reads_in_one_pass() -> None:
    """A hostile task's output that would make a backtracking pattern quadratic: read once, kept bounded."""
    line = '{"a": "' + '\\"{[' * 500_000 + '"}'
    printed = by_task([f"0: {line}"], 1)
    assert printed[0].count == 1 and printed[0].objects[0].cut.startswith("longer than")
    many = by_task(["0: " + "{}" * 1_000_000, "0: {}"], 1)
    assert many[0].count == 17 and len(many[0].objects) == 16  # the rest of a flood is not read


def test_the_saved_format_names_the_node_that_printed_each_object(tmp_path: Path) -> None:
    own, forged = perf_object("gpu-0001"), perf_object("gpu-0001", status="fail")
    printed = by_node(srun_label([own + "\n", forged + "\n"]), ["gpu-0001", "gpu-0002"])
    text = saved_text(printed, ["gpu-0001", "gpu-0002"], "clusterforge health perf", "gpu-[0001-0002]")
    assert text.splitlines()[2:] == [f"gpu-0001: {own}", f"gpu-0002: {forged}"]
    results = read_saved(text.splitlines(keepends=True), "perf.lines", node_result)
    assert [(o.node, o.result is not None, o.problem) for o in results] == [
        ("gpu-0001", True, ""), ("gpu-0002", False, "printed a result naming gpu-0001 (line 4)")]


def test_an_older_bare_json_file_is_refused_with_how_to_save() -> None:
    with pytest.raises(ClusterforgeError) as caught:
        read_saved([perf_object("gpu-0001") + "\n"] * 3, "old.jsonl", node_result)
    [problem] = caught.value.problems
    assert (problem.file, problem.line) == ("old.jsonl", 1)
    assert "without the node that printed it" in problem.message and "--save" in problem.hint
