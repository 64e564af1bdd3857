"""An interrupted render (SIGINT, SIGTERM or SIGHUP in the middle of writing) leaves the previous output exactly
as it was and no temporary files behind; a killed one (SIGKILL) leaves a staging folder the next render removes."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

# Runs the real CLI, with one renderer slowed down after the staging directory holds some files. Ctrl-C is
# restored to Python's default first, as in a terminal: a suite started in the background (`cmd &` without job
# control) passes an ignored SIGINT down, and the render would rightly keep ignoring it.
SLOW_RENDER = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
import clusterforge.render.cgroup_conf as slow
original = slow.render
def render(ctx):
    Path(sys.argv[-1] + ".started").write_text("x")
    time.sleep(60)
    return original(ctx)
slow.render = render
from clusterforge.cli.main import main
sys.argv = ["clusterforge", "render", sys.argv[1], "-o", sys.argv[2]]
main()
"""


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _start_slow_render(out: Path) -> subprocess.Popen[bytes]:
    """A render of another blueprint into `out`, held after its staging folder has some files."""
    marker = Path(str(out) + ".started")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RENDER, str(EXAMPLES / "onprem-dgx-h100-hall.yaml"),
                             str(out), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    marker.unlink()
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_interrupted_render_keeps_the_old_output(cli, tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "out"
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    before = _tree(out)
    proc = _start_slow_render(out)
    os.kill(proc.pid, sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode not in (0, 3)  # an interrupt is neither success nor an internal error
    assert b"Traceback" not in stderr and b"internal error" not in stderr
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging or .old directories left


def test_a_killed_render_leaves_what_the_next_render_removes(cli, tmp_path: Path) -> None:
    """SIGKILL cannot be caught: the staging folder stays, locked by nobody, and the next render removes it
    (while the killed one runs, a render beside it leaves its staging folder alone)."""
    out = tmp_path / "out"
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    before = _tree(out)
    proc = _start_slow_render(out)
    [staging] = [p.name for p in tmp_path.iterdir() if p.name not in ("out", ".out.lock")]
    assert staging.startswith(f".out.{proc.pid}-") and staging.endswith(".new")
    other = tmp_path / "other"
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", other).exit_code == 0
    assert (tmp_path / staging).is_dir()  # its writer is alive: not touched (a second writer of out waits for it)
    proc.kill()
    proc.communicate(timeout=30)
    assert (tmp_path / staging).is_dir()
    assert _tree(out) == before
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "out"]
