"""examples/jobs/train.py, the checkpoint/resume pattern users copy: run for real as SLURM would start it, first
and after a requeue, killed mid-run, with a torn checkpoint write, and signalled before its time limit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT

TRAIN = ROOT / "examples" / "jobs" / "train.py"


def run(tmp_path: Path, restart: int = 0, steps: int = 25, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "SLURM_JOB_ID": "7", "SLURM_RESTART_COUNT": str(restart), "CKPT_DIR": str(tmp_path),
                   "TOTAL_STEPS": str(steps), "CKPT_EVERY": "10", "STEP_TIME": "0", **env}
    return subprocess.run([sys.executable, str(TRAIN)], env=environment, capture_output=True, text=True,
                          timeout=60, check=False)


def events(tmp_path: Path) -> list[tuple[str, int, int]]:
    out = []
    for line in (tmp_path / "7" / "events.log").read_text().splitlines():
        _, kind, step, restart, *_ = line.split()
        out.append((kind, int(step.split("=")[1]), int(restart.split("=")[1])))
    return out


def reached(tmp_path: Path, step: int) -> bool:
    return (tmp_path / "7" / "events.log").exists() and any(k == "step" and s >= step for k, s, _ in events(tmp_path))


def test_a_requeued_job_resumes_from_its_newest_checkpoint(tmp_path: Path) -> None:
    killed = subprocess.Popen([sys.executable, str(TRAIN)], env={
        **os.environ, "SLURM_JOB_ID": "7", "CKPT_DIR": str(tmp_path), "TOTAL_STEPS": "100", "CKPT_EVERY": "10",
        "STEP_TIME": "0.02"})
    deadline = time.monotonic() + 30
    while not reached(tmp_path, 27):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)  # a node that dies: no signal handler runs
    killed.wait()
    assert run(tmp_path, restart=1, steps=40).returncode == 0
    log = events(tmp_path)
    resume = next(e for e in log if e[0] == "resume")
    assert resume[1:] == (20, 1) or resume[1:] == (30, 1)  # the newest complete checkpoint before the kill
    assert log[-1][:2] == ("done", 40)
    assert sorted(p.name for p in (tmp_path / "7").glob("step-*.json")) == ["step-00000030.json",
                                                                             "step-00000040.json"]  # KEEP=2


def test_a_torn_write_is_never_restored(tmp_path: Path) -> None:
    assert run(tmp_path, steps=20).returncode == 0
    (tmp_path / "7" / "step-00000030.tmp").write_text('{"step": 3')  # killed while writing the next one
    (tmp_path / "7" / "step-00000025.json").write_text("garbage")    # and an unreadable one
    assert run(tmp_path, restart=1, steps=22).returncode == 0
    assert ("resume", 20, 1) in events(tmp_path)


def test_too_many_restarts_give_up(tmp_path: Path) -> None:
    result = run(tmp_path, restart=6, MAX_RESTARTS="5")
    assert result.returncode == 3 and "giving up" in result.stderr


def test_usr1_checkpoints_now_and_requeues(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path}/scontrol.args\n")
    (bin_dir / "scontrol").chmod(0o755)
    proc = subprocess.Popen([sys.executable, str(TRAIN)], env={
        **os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SLURM_JOB_ID": "7",
        "CKPT_DIR": str(tmp_path), "TOTAL_STEPS": "1000", "CKPT_EVERY": "100", "STEP_TIME": "0.02"})
    deadline = time.monotonic() + 30
    while not reached(tmp_path, 5):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGUSR1)
    assert proc.wait(timeout=30) == 0
    kinds = [k for k, _, _ in events(tmp_path)]
    assert kinds[-2:] == ["ckpt", "requeue"]
    assert (tmp_path / "scontrol.args").read_text().split() == ["requeue", "7"]


def test_a_held_job_trains_past_its_steps_until_released(tmp_path: Path) -> None:
    release = tmp_path / "release"
    proc = subprocess.Popen([sys.executable, str(TRAIN)], env={
        **os.environ, "SLURM_JOB_ID": "7", "CKPT_DIR": str(tmp_path), "TOTAL_STEPS": "5", "CKPT_EVERY": "10",
        "STEP_TIME": "0.02", "HOLD_FILE": str(release)})
    try:
        deadline = time.monotonic() + 30
        while not reached(tmp_path, 40):  # well past TOTAL_STEPS: still going
            assert proc.poll() is None, "the held job ended before it was released"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        release.touch()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
    log = events(tmp_path)
    assert log[-1][0] == "done" and log[-1][1] >= 40, log[-1]
    assert ("ckpt", 40, 0) in log  # it kept checkpointing while held
