#!/usr/bin/env python3
"""A training job that survives the loss of its node: it checkpoints to shared storage every CKPT_EVERY steps and,
when SLURM requeues it (node failure, preemption, `scontrol requeue`), resumes from the newest checkpoint.

The pattern to copy into a real training script (the PyTorch lines are in the comments next to their stand-ins):

1. One directory per job on storage every node mounts, keyed by SLURM_JOB_ID (kept across requeues).
2. Resume first: load the newest checkpoint that is complete, else start at step 0. The same code path serves
   the first start and every restart.
3. Write checkpoints atomically: a temporary file, flush and fsync, then rename over `latest`. A reader (the
   restarted job) sees the old or the new checkpoint, never half of one. Keep KEEP older ones.
4. Stop after MAX_RESTARTS restarts (SLURM_RESTART_COUNT) so a job that keeps killing nodes cannot loop forever.
5. SIGUSR1 before the time limit (`#SBATCH --signal=B:USR1@120`) or before preemption: checkpoint now, requeue.

Without PyTorch it trains a stand-in "model" (a number), so the same file runs in `clusterforge lab`, which has no
GPU. Settings come from the environment: TOTAL_STEPS, CKPT_EVERY, STEP_TIME (seconds per step), CKPT_DIR, KEEP,
MAX_RESTARTS, and HOLD_FILE: when set, the job trains on past TOTAL_STEPS until that file exists (on storage every
node mounts), so a job that must outlast a change is still running however long the change takes and ends once
it is released (the lab's drills and tests). Every event is appended to CKPT_DIR/<job>/events.log with a
wall-clock timestamp: `clusterforge lab drill node-loss` reads it to measure the time to resume and the steps lost.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

JOB = os.environ.get("SLURM_JOB_ID", "local")
RESTART = int(os.environ.get("SLURM_RESTART_COUNT", "0"))
TOTAL_STEPS = int(os.environ.get("TOTAL_STEPS", "100"))
CKPT_EVERY = int(os.environ.get("CKPT_EVERY", "10"))
STEP_TIME = float(os.environ.get("STEP_TIME", "1.0"))
KEEP = int(os.environ.get("KEEP", "2"))
MAX_RESTARTS = int(os.environ.get("MAX_RESTARTS", "5"))
HOLD_FILE = os.environ.get("HOLD_FILE", "")
DIRECTORY = Path(os.environ.get("CKPT_DIR", "/shared/ckpt")) / JOB


class Log:
    """events.log: one line per event, written through (a killed node loses nothing already logged)."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("a", buffering=1)

    def event(self, kind: str, step: int, **extra: object) -> None:
        fields = " ".join(f"{k}={v}" for k, v in extra.items())
        self.file.write(f"{time.time():.3f} {kind} step={step} restart={RESTART} host={socket.gethostname()}"
                        f"{' ' + fields if fields else ''}\n")


def checkpoints() -> list[Path]:
    """Complete checkpoints, newest first (a `.tmp` is an interrupted write and never counts)."""
    return sorted(DIRECTORY.glob("step-*.json"), key=lambda p: int(p.stem.split("-")[1]), reverse=True)


def held() -> bool:
    """HOLD_FILE is set and not there yet: the job is not released."""
    return bool(HOLD_FILE) and not Path(HOLD_FILE).exists()


def load_latest() -> dict[str, float]:
    for path in checkpoints():
        try:
            state = json.loads(path.read_text())  # torch: torch.load(path, map_location=device)
        except (OSError, ValueError):
            continue  # unreadable: fall back to the one before it
        if isinstance(state, dict) and "step" in state:
            return state
    return {"step": 0, "loss": 10.0}


def save(state: dict[str, float]) -> None:
    path = DIRECTORY / f"step-{int(state['step']):08d}.json"
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as f:
        json.dump(state, f)  # torch: torch.save({"model": model.state_dict(), "optim": ..., "step": step}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    for old in checkpoints()[KEEP:]:
        old.unlink(missing_ok=True)


def main() -> int:
    DIRECTORY.mkdir(parents=True, exist_ok=True)
    log = Log(DIRECTORY / "events.log")
    if RESTART > MAX_RESTARTS:
        log.event("gave-up", 0, reason="too many restarts")
        print(f"restarted {RESTART} times (MAX_RESTARTS={MAX_RESTARTS}): giving up", file=sys.stderr)
        return 3
    state = load_latest()
    log.event("resume" if state["step"] else "start", int(state["step"]))
    stop = {"requested": False}

    def on_usr1(signum: int, frame: FrameType | None) -> None:
        stop["requested"] = True

    signal.signal(signal.SIGUSR1, on_usr1)
    while state["step"] < TOTAL_STEPS or held():
        time.sleep(STEP_TIME)  # torch: loss = model(batch); loss.backward(); optimizer.step()
        state["step"] += 1
        state["loss"] *= 0.99
        log.event("step", int(state["step"]))
        if state["step"] % CKPT_EVERY == 0 or stop["requested"]:
            save(state)
            log.event("ckpt", int(state["step"]))
        if stop["requested"]:  # time limit or preemption ahead: we just checkpointed, come back later
            log.event("requeue", int(state["step"]))
            subprocess.run(["scontrol", "requeue", JOB], check=False)
            return 0
    log.event("done", int(state["step"]), loss=f"{state['loss']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
