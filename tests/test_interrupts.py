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
    assert proc.returncode == 128 + sig  # as a shell reports it: neither success, a verdict nor an internal error
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


# Ctrl-C in any command: exit 130 (128 + SIGINT, as shells report it) with one line, never 1 (a policy failure)
# nor a traceback; what the command started is stopped with it.

CLUSTERFORGE = Path(sys.executable).parent / "clusterforge"

WAITING_SSH = """#!/bin/sh
echo $$ > "$SSH_PID"
exec sleep 60
"""


def _wait_for(path: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() or not path.read_text().strip():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _gone(pid: int) -> bool:
    """Not running: no such process, or a zombie nobody has reaped yet."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _interrupt(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    os.kill(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, stderr.decode()


def _terminal_like() -> None:
    """Ctrl-C as in a terminal, for the children started below (see SLOW_RENDER)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_in_a_waiting_command_exits_130_and_stops_its_child(tmp_path: Path) -> None:
    """`health diag --ssh` waits on ssh: the real entry point, interrupted there, exits 130 and ssh goes too."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh").write_text(WAITING_SSH)
    (bin_dir / "ssh").chmod(0o755)
    pid_file = tmp_path / "ssh.pid"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "SSH_PID": str(pid_file)}
    proc = subprocess.Popen([str(CLUSTERFORGE), "health", "diag", "--nodes", "gpu-0001", "--ssh", "login-0001"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_terminal_like)
    _wait_for(pid_file, proc)
    code, stderr = _interrupt(proc)
    assert (code, stderr) == (130, "clusterforge: interrupted\n")
    deadline = time.monotonic() + 10
    while not _gone(int(pid_file.read_text())):
        assert time.monotonic() < deadline, "ssh still running"
        time.sleep(0.1)


SLOW_CHECK = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
import clusterforge.cli.check_inputs as slow
original, marker = slow.load_all, Path(sys.argv[2])
def load_all(*args, **kwargs):
    loaded = original(*args, **kwargs)
    marker.write_text("x")
    time.sleep(60)
    return loaded
slow.load_all = load_all
from clusterforge.cli.main import main
sys.argv = ["clusterforge", "check", sys.argv[1]]
main()
"""


def test_ctrl_c_in_check_of_a_large_hall_exits_130(tmp_path: Path) -> None:
    hall = tmp_path / "hall.yaml"
    subprocess.run([sys.executable, str(Path(__file__).parents[1] / "benchmarks" / "generate.py"), "--gpus",
                    "100000", "-o", str(hall)], check=True)
    marker = tmp_path / "loaded"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_CHECK, str(hall), str(marker)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _wait_for(marker, proc)
    code, stderr = _interrupt(proc)
    assert (code, stderr) == (130, "clusterforge: interrupted\n")


def test_ctrl_c_at_a_prompt_exits_130(tmp_path: Path) -> None:
    """click turns Ctrl-C at a prompt into its own Abort ("Aborted!", exit 1): it is an interrupt all the same."""
    proc = subprocess.Popen([str(CLUSTERFORGE), "new", "aws-p5-capacity-block", "-i", "-o", str(tmp_path / "bp.yaml")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_terminal_like)
    assert proc.stderr is not None
    asked = b""
    while not asked.endswith(b"]:"):  # the first prompt (its last space goes to stdout), waiting for an answer
        chunk = proc.stderr.read(1)
        assert chunk, proc.communicate()
        asked += chunk
    code, stderr = _interrupt(proc)
    assert (code, stderr.strip().splitlines()[-1]) == (130, "clusterforge: interrupted")
    assert not (tmp_path / "bp.yaml").exists()


SLOW_PLAY = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from clusterforge.provision.runner import Run, execute
here = Path(sys.argv[1])
try:
    execute(Run(project=here, inventories=[here / "hosts.yml"], private_dir=here / "private"))
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_in_provision_stops_ansible(tmp_path: Path) -> None:
    """ansible-playbook runs in a session of its own (a pty), out of reach of the terminal's Ctrl-C: the
    runner stops it, and what its tasks started, before the interrupt goes on."""
    pytest.importorskip("ansible_runner")
    pid_file = tmp_path / "task.pid"
    (tmp_path / "ansible.cfg").write_text("[defaults]\nretry_files_enabled = false\n")
    (tmp_path / "site.yml").write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n"
        f"    - ansible.builtin.shell: echo $$ > {pid_file}; exec sleep 60\n")
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here: {ansible_connection: local, "
                                        f"ansible_python_interpreter: {sys.executable}}}\n")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_PLAY, str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _wait_for(pid_file, proc)
    task = int(pid_file.read_text())
    started = time.monotonic()
    code, stderr = _interrupt(proc)
    assert code == 130, stderr
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 10
    while not _gone(task):
        assert time.monotonic() < deadline, "the playbook's task still running"
        time.sleep(0.1)


def test_a_finished_run_gives_the_signal_handlers_back(tmp_path: Path) -> None:
    """ansible-runner's own handlers would stay installed after a run and swallow the next Ctrl-C for good."""
    pytest.importorskip("ansible_runner")
    from clusterforge.provision.runner import Run, execute

    (tmp_path / "ansible.cfg").write_text("[defaults]\nretry_files_enabled = false\n")
    (tmp_path / "site.yml").write_text("- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n")
    (tmp_path / "hosts.yml").write_text("all:\n  hosts:\n    here: {ansible_connection: local, "
                                        f"ansible_python_interpreter: {sys.executable}}}\n")
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    outcome = execute(Run(project=tmp_path, inventories=[tmp_path / "hosts.yml"], private_dir=tmp_path / "private"))
    assert outcome.rc == 0 and outcome.summary.ok
    assert {s: signal.getsignal(s) for s in before} == before


# Ctrl-C that code other than ours drops: the interrupt is recorded before anything can drop it, so the command
# still exits 130 with its one line and prints nothing else; where the dropping is seen (an "Exception ignored"
# from native code, a call into pydantic-core) it is raised again as soon as Python code runs on, so the command
# goes no further. `load_all` is interrupted in one of these ways, then writes a marker if it went on.
DROPPED = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
import clusterforge.cli.check_inputs as inputs
original, how, marker = inputs.load_all, sys.argv[2], Path(sys.argv[3])

class Dropped:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # its KeyboardInterrupt can only be reported: "Exception ignored"

# pydantic-core calls back into Python from native code and drops what is raised there; a function that runs in
# pydantic's own module stands for such a call (the same frames the signal handler sees)
import pydantic.plugin._schema_validator as pydantic_module
exec("def native(raise_signal=signal.raise_signal):\\n    try:\\n        raise_signal(signal.SIGINT)\\n"
     "    except KeyboardInterrupt:\\n        pass\\n    return 1\\n", {**vars(pydantic_module), "signal": signal},
     namespace := {})
namespace["native"].__globals__["__name__"] = pydantic_module.__name__

def load_all(*args, **kwargs):
    if how == "swallowed":
        try:
            signal.raise_signal(signal.SIGINT)
        except BaseException:  # a library that catches everything
            pass
    elif how == "unraisable":
        Dropped()
    else:
        namespace["native"]()
    loaded = original(*args, **kwargs)
    marker.write_text("went on")
    return loaded

inputs.load_all = load_all
from clusterforge.cli.main import main
sys.argv = ["clusterforge", "check", sys.argv[1]]
main()
"""


@pytest.mark.parametrize(("how", "goes_on"), [("swallowed", True), ("unraisable", False), ("pydantic", False)])
def test_an_interrupt_that_is_dropped_still_exits_130_with_one_line(tmp_path: Path, how: str, goes_on: bool) -> None:
    marker = tmp_path / "went-on"
    proc = subprocess.run([sys.executable, "-c", DROPPED, str(EXAMPLES / "onprem-dgx-h100.yaml"), how, str(marker)],
                          capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, b"", b"clusterforge: interrupted\n")
    assert marker.exists() == goes_on  # raised again at once where the dropping is seen
