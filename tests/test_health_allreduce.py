"""`clusterforge health allreduce`: the srun it runs, all_reduce_perf's output read (srun's, or a saved file), the
floor (--min-busbw, or the policy config's share of the blueprint nodes' line rate), the verdicts and exit status,
and --pairs, with a stand-in srun on PATH. Nothing leaves this machine."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app
from clusterforge.operations.allreduce import pairs, parse, srun_command

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HEADER = "\n".join([
    "# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
    "agg iters: 1 validation: 1 graph: 0",
    "#",
    "# Using devices",
    "#  Rank  0 Group  0 Pid  41721 on   gpu-0001 device  0 [0x18] NVIDIA H100 80GB HBM3",
    "#  Rank  1 Group  0 Pid  41722 on   gpu-0001 device  1 [0x2a] NVIDIA H100 80GB HBM3",
    "#  Rank  8 Group  0 Pid  39110 on   gpu-0002 device  0 [0x18] NVIDIA H100 80GB HBM3",
    "#",
    "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place" + " " * 10,  # nccl-tests pads these lines
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong",
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
    + " " * 7, ""])


def output(busbw: float = 362.4, wrong: int = 0, sizes: int = 1) -> str:
    """What rank 0 of `all_reduce_perf -b 8G -e 8G -f 2 -g 1` prints over 16 ranks (with -b 2G, the smaller sizes
    too), with NCCL's and srun's lines around it as srun's output has them."""
    rows = []
    for k in range(sizes - 1, -1, -1):
        size = 8589934592 >> k
        bw = busbw * (0.9 ** k)
        time_us = size / (bw / 1.875) / 1e3
        rows.append(f"{size:>12}  {size // 4:>12}     float     sum      -1  {time_us:7.0f}  {bw / 1.875:6.2f}  "
                    f"{bw:6.2f}  {wrong if k == 0 else 0:5}  {time_us:7.0f}  {bw / 1.875:6.2f}  {bw + 0.8:6.2f}  "
                    f"{wrong if k == 0 else 0:5}")
    status = "OK" if wrong == 0 else "FAILED"
    return ("gpu-0001:41721:41721 [0] NCCL INFO Bootstrap : Using ib0:10.1.0.1<0>\n" + HEADER + "\n".join(rows)
            + f"\n# Out of bounds values : {wrong} {status}\n# Avg bus bandwidth    : {busbw + 0.4:.3f} \n#\n")


@pytest.fixture
def srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An srun that logs its argv and prints the file named after its --nodelist in $SRUN_DIR (`all.out` when none
    is), exiting with the number in the matching `.rc` file (0 without one)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "srun"
    script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                      "with open(os.environ['TOOL_LOG'], 'a') as log:\n"
                      "    log.write(json.dumps(sys.argv) + '\\n')\n"
                      "nodes = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--nodelist=')][0]\n"
                      "d = os.environ['SRUN_DIR']\n"
                      "name = nodes if os.path.exists(os.path.join(d, nodes + '.out')) else 'all'\n"
                      "sys.stdout.write(open(os.path.join(d, name + '.out')).read())\n"
                      "rc = os.path.join(d, name + '.rc')\n"
                      "sys.exit(int(open(rc).read()) if os.path.exists(rc) else 0)\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOOL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("SRUN_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


def calls(tmp: Path) -> list[list[str]]:
    log = tmp / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["health", "allreduce", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_the_srun_is_one_rank_per_gpu_on_every_node() -> None:
    assert srun_command("gpu-[0001-0016]", 8, "/opt/nccl-tests/all_reduce_perf", "maint", "rma") == [
        "srun", "--nodelist=gpu-[0001-0016]", "--ntasks-per-node=8", "--exclusive",
        "--job-name=clusterforge-allreduce", "--time=10", "--mpi=pmix", "--partition=maint", "--reservation=rma",
        "/opt/nccl-tests/all_reduce_perf", "-b", "8G", "-e", "8G", "-f", "2", "-g", "1"]


def test_the_largest_size_and_the_average_are_read_among_other_lines() -> None:
    measured = parse(output(busbw=350.0, sizes=3))
    assert [r.size_bytes for r in measured.rows] == [2147483648, 4294967296, 8589934592]
    assert measured.busbw == 350.0  # the lower of out-of-place (350.0) and in-place (350.8) of 8 GiB
    assert measured.avg_busbw == 350.4 and measured.out_of_bounds == 0 and measured.wrong == 0


def test_above_the_floor_exits_0(srun: Path) -> None:
    (srun / "all.out").write_text(output(362.4))
    code, out = run("-w", "gpu-[0001-0016]", "--min-busbw", "300", "--reservation", "maint")
    assert code == 0, out
    assert "NCCL all-reduce across 16 nodes (128 GPUs, 8 per node): gpu-[0001-0016]" in out
    assert "  8 GiB: bus bandwidth 362.40 GB/s, average over sizes 362.80 GB/s" in out
    assert out.splitlines()[-1] == "verdict: ok: bus bandwidth 362.4 GB/s, floor 300.0 GB/s"
    [argv] = calls(srun)
    assert argv[1:] == srun_command("gpu-[0001-0016]", 8, reservation="maint")[1:]


def test_below_the_floor_exits_1_and_points_at_pairs(srun: Path) -> None:
    (srun / "all.out").write_text(output(181.2))
    code, out = run("-w", "gpu-[0001-0016]", "--min-busbw", "300")
    assert code == 1, out
    assert "verdict: below-floor: bus bandwidth 181.2 GB/s, below the floor 300.0 GB/s (40% short)" in out
    assert out.splitlines()[-1] == "next (below-floor): rerun with --pairs to name the node or link below the floor"


def test_without_a_floor_the_figure_is_shown_not_judged(srun: Path) -> None:
    (srun / "all.out").write_text(output(20.0))
    code, out = run("-w", "gpu-[0001-0002]", "--gpus-per-node", "4")
    assert code == 0, out
    assert "floor: none" in out and "not judged" in out
    assert calls(srun)[0][2] == "--ntasks-per-node=4"


def test_wrong_values_are_nccl_wrong_however_fast(srun: Path) -> None:
    (srun / "all.out").write_text(output(362.4, wrong=3))
    code, out = run("-w", "gpu-[0001-0002]", "--min-busbw", "300", "-f", "json")
    assert code == 1, out
    [verdict] = json.loads(out)["runs"]
    assert (verdict["status"], verdict["wrong"], verdict["busbw"]) == ("nccl-wrong", 6, 362.4)


def test_a_time_limit_is_timeout_and_a_crash_is_failed(srun: Path) -> None:
    (srun / "all.out").write_text(HEADER + "slurmstepd: error: *** STEP 4411.0 ON gpu-0001 CANCELLED AT "
                                  "2026-11-30T02:14:07 DUE TO TIME LIMIT ***\n")
    (srun / "all.rc").write_text("137")
    code, out = run("-w", "gpu-[0001-0002]", "--min-busbw", "300")
    assert code == 1 and "verdict: timeout: SLURM cancelled the run at its time limit (10 min)" in out
    (srun / "all.out").write_text(HEADER + "gpu-0002: Test NCCL failure common.cu:1005 'unhandled system error'\n")
    (srun / "all.rc").write_text("1")
    code, out = run("-w", "gpu-[0001-0002]", "--min-busbw", "300")
    assert code == 1 and "verdict: failed: no result: gpu-0002: Test NCCL failure common.cu:1005" in out


def test_the_blueprint_gives_the_floor_and_the_gpus(srun: Path) -> None:
    (srun / "all.out").write_text(output(262.0))  # below 70 % of 8 x 400 Gb/s (400 GB/s) = 280 GB/s
    code, out = run("-w", "gpu-[0001-0002]", "--blueprint", str(EXAMPLES / "onprem-dgx-h100.yaml"))
    assert code == 1, out
    assert "floor: 280.0 GB/s bus bandwidth (70% of 400 GB/s, dgx-h100's 8 x 400 Gb/s NICs)" in out
    assert calls(srun)[0][2] == "--ntasks-per-node=8"
    code, out = run("-w", "gpu-[0001-0002]", "--blueprint", str(EXAMPLES / "aws-p5.yaml"), "-f", "json")
    assert json.loads(out)["floor"] == {"gbps": 280.0, "source": "70% of 400 GB/s, p5.48xlarge's 3,200 Gb/s EFA",
                                        "line_rate_gbps": 400.0}


def test_the_policy_config_sets_the_share(srun: Path, tmp_path: Path) -> None:
    (srun / "all.out").write_text(output(262.0))
    config = tmp_path / "policy.yaml"
    config.write_text("apiVersion: clusterforge/v1\nkind: PolicyConfig\nhealth:\n  perf: {allreduce_floor: 0.6}\n")
    code, out = run("-w", "gpu-[0001-0002]", "--blueprint", str(EXAMPLES / "onprem-dgx-h100.yaml"),
                    "--policy-config", str(config))
    assert code == 0 and "floor: 240.0 GB/s" in out, out


def test_from_a_saved_file_runs_nothing(srun: Path, tmp_path: Path) -> None:
    saved = tmp_path / "allreduce.out"
    saved.write_text(output(181.2, sizes=4))
    code, out = run("--from", str(saved), "--min-busbw", "300", "-w", "gpu-[0001-0016]")
    assert code == 1 and "below the floor 300.0 GB/s" in out
    code, out = run("--from", "-", "--min-busbw", "100")
    assert code == 2 and out.startswith("<stdin>: no all_reduce_perf result"), out
    assert calls(srun) == []


@pytest.mark.parametrize(("bad", "message"), [
    ("  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      0    47743  179.92\n",
     "allreduce.out:14: not a row of all_reduce_perf's table"),
    ("  8589934592    2147483648     float     sum      -1    47535  180.71  338.82      x    47743  179.92  337.35"
     "      0\n", "allreduce.out:14: #wrong 'x' is not a count"),
])
def test_a_bad_saved_row_is_exit_2_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str,
                                              message: str) -> None:
    monkeypatch.chdir(tmp_path)
    lines = output(350.0).splitlines(keepends=True)
    Path("allreduce.out").write_text("".join([*lines[:13], bad, *lines[14:]]))
    code, out = run("--from", "allreduce.out", "--min-busbw", "300")
    assert code == 2 and out.startswith(message), out


@pytest.mark.parametrize(("args", "message"), [
    (["--min-busbw", "0"], "--min-busbw: 0 is not a bus bandwidth"),
    (["--min-busbw", "nan"], "--min-busbw: nan is not a bus bandwidth"),
    (["--program", "-oops"], "--program: '-oops' is not a program path"),
    (["--program", "all_reduce_perf; rm -rf /"], "is not a program path"),
    (["--pairs", "--from", "x.out"], "--pairs: --pairs runs the pairs"),
    (["--pool", "gpu"], "--pool: --pool names a pool of the blueprint"),
    (["-w", "gpu-[0002-0001]"], "--nodes"),
])
def test_bad_input_is_exit_2_and_runs_nothing(srun: Path, args: list[str], message: str) -> None:
    nodes = [] if "-w" in args else ["-w", "gpu-[0001-0004]"]
    code, out = run(*nodes, *args)
    assert code == 2, out
    assert message in out.splitlines()[0], out
    assert calls(srun) == []


def test_pairs_run_each_pair_and_name_the_bad_ones(srun: Path) -> None:
    (srun / "all.out").write_text(output(355.0))
    (srun / "gpu-0003,gpu-0004.out").write_text(output(97.5))
    (srun / "gpu-0007,gpu-0008.out").write_text(output(350.0, wrong=1))
    code, out = run("-w", "gpu-[0001-0010]", "--pairs", "--min-busbw", "300", "--parallel", "3")
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0] == "NCCL all-reduce on 5 pairs of 10 nodes (8 GPUs per node)"
    assert "  nccl-wrong: 1 pair, 350.0-350.0 GB/s: gpu-[0007-0008]" in lines
    assert "  below-floor: 1 pair, 97.5-97.5 GB/s: gpu-[0003-0004]" in lines
    assert "  ok: 3 pairs, 355.0-355.0 GB/s: gpu-[0001-0002,0005-0006,0009-0010]" in lines
    assert "      gpu-[0003-0004]: bus bandwidth 97.5 GB/s, below the floor 300.0 GB/s (68% short)" in lines
    assert "verdict: 2 of 5 pairs bad; run again with --shift 1" in out
    assert sorted(argv[1] for argv in calls(srun)) == [f"--nodelist=gpu-{a:04d},gpu-{a + 1:04d}"
                                                        for a in (1, 3, 5, 7, 9)]


def test_shifted_pairs_and_an_odd_node_name_the_node_in_two_bad_pairs(srun: Path) -> None:
    assert pairs(["a", "b", "c", "d", "e"]) == [("a", "b"), ("c", "d"), ("e", "a")]
    assert pairs(["a", "b", "c", "d"], shift=1) == [("b", "c"), ("d", "a")]
    (srun / "all.out").write_text(output(355.0))
    (srun / "gpu-0002,gpu-0003.out").write_text(output(120.0))
    (srun / "gpu-0004,gpu-0001.out").write_text(output(120.0))
    code, out = run("-w", "gpu-[0001-0004]", "--pairs", "--shift", "1", "--min-busbw", "300", "-f", "json")
    assert code == 1
    report = json.loads(out)
    assert [r["nodes"] for r in report["runs"]] == ["gpu-[0002-0003]", "gpu-[0001,0004]"]
    assert report["suspects"] == "" and report["ok"] is False
    (srun / "gpu-0004,gpu-0001.out").unlink()
    (srun / "gpu-0003,gpu-0001.out").write_text(output(120.0))  # the odd node out pairs with the first
    code, out = run("-w", "gpu-[0001-0003]", "--pairs", "--min-busbw", "300")
    assert code == 1 and "run again with --shift 1" in out, out
    (srun / "gpu-0001,gpu-0002.out").write_text(output(118.0))
    code, out = run("-w", "gpu-[0001-0003]", "--pairs", "--min-busbw", "300", "-f", "json")
    assert code == 1 and json.loads(out)["suspects"] == "gpu-0001"
    code, out = run("-w", "gpu-[0001-0003]", "--pairs", "--min-busbw", "300")
    lines = out.splitlines()
    assert "verdict: 2 of 2 pairs bad; in more than one bad pair: gpu-0001" in lines, out
    assert lines[lines.index("verdict: 2 of 2 pairs bad; in more than one bad pair: gpu-0001") + 1].startswith(
        "next (below-floor): drain the node in two bad pairs"), out


def test_ssh_failing_before_any_run_answered_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "sshbin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text("#!/bin/sh\necho 'ssh: Could not resolve hostname login-9' >&2\nexit 255\n")
    (bin_dir / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    code, out = run("-w", "gpu-[0001-0004]", "--pairs", "--ssh", "login-9", "--min-busbw", "300")
    assert code == 2 and "--ssh: ssh to login-9 failed (exit 255)" in out, out


def test_help_teaches_with_examples() -> None:
    code, out = run("--help")
    assert code == 0 and "--pairs --shift 1 --min-busbw 300" in out and "nccl-wrong" in out


@pytest.mark.parametrize(("line", "late"), [
    ("slurmstepd: error: *** STEP 4411.0 ON gpu-0001 CANCELLED AT 2026-11-30T02:14:07 DUE TO TIME LIMIT ***", True),
    ("srun: error: gpu-0002: task 3: time limit exceeded", True),
    ("srun: Job step aborted: Waiting up to 32 seconds for job step to finish. TIME", True),
    ("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", False),
    ("the time: Job step aborted", False),
])
def test_slurms_time_limit_words_are_found_by_plain_search(line: str, late: bool) -> None:
    assert parse(HEADER + line + "\n").timed_out is late


def test_a_2_mb_line_that_repeats_the_words_parses_and_is_read_right() -> None:
    """`Job step aborted.*time` scanned to the end of the line from each of its matches (an 85 KB line took
    seconds, 680 KB minutes); plain searches read the line once. benchmarks/health_bounds.py times it."""
    aborted = "Job step aborted " * (2_000_000 // 17)
    assert len(aborted) >= 1_999_000
    measured = parse(output(350.0) + aborted + "\n")
    assert (measured.busbw, measured.timed_out) == (350.0, False)
    assert parse(output(350.0) + aborted + "in time\n").timed_out
    assert parse("# " * 1_000_000 + "\n" + "1 " * 1_000_000 + "\n").rows == ()


def test_a_saved_line_past_1_mib_is_exit_2_at_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("allreduce.out").write_text(output(350.0) + "Job step aborted " * 120_000 + "\n")
    code, out = run("--from", "allreduce.out", "--min-busbw", "300")
    assert code == 2, out
    assert out.startswith("allreduce.out:16: a line longer than 1 MiB: not a health run's output"), out


@pytest.mark.parametrize(("planted", "status", "step"), [
    ("wrong", "nccl-wrong", "run `clusterforge health perf` on them"),
    ("late", "timeout", "rerun with --pairs to find the pair that hangs"),
    ("crash", "failed", "read the first error above"),
    ("slow-pair", "below-floor", "run each of the two nodes with a third, healthy one"),
])
def test_each_bad_verdict_ends_with_what_to_do_next(srun: Path, planted: str, status: str, step: str) -> None:
    text = {"wrong": output(362.4, wrong=3), "slow-pair": output(120.0),
            "late": HEADER + "slurmstepd: error: *** STEP 1.0 CANCELLED AT 2026-11-30T02:14:07 DUE TO TIME LIMIT ***\n",
            "crash": HEADER + "gpu-0002: Test NCCL failure common.cu:1005 'unhandled system error'\n"}[planted]
    (srun / "all.out").write_text(text)
    code, out = run("-w", "gpu-[0001-0002]", "--min-busbw", "300")
    assert code == 1, out
    last = " ".join(line.strip() for line in out[out.index("\nnext (") + 1:].split("\n")).strip()
    assert last.startswith(f"next ({status}):") and step in last, out
    code, out = run("-w", "gpu-[0001-0002]", "--min-busbw", "300", "-f", "json")
    [said] = json.loads(out)["next"]
    assert said["status"] == status and step in said["step"]
