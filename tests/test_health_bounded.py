"""The health script's `bounded` helper, its own code run in bash: a command that has exited ends the wait even
while the shell has not reaped it (a zombie, which `kill -0` still finds), and the bound is wall time however long
each turn of the wait takes (a server booted under software emulation waited out whole bounds on both)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.test_health_checks import SCRIPT


def helpers() -> str:
    """The script's tick, nap, running and bounded definitions, as it has them."""
    text = SCRIPT.read_text()
    start = text.index("{ exec {tick}<> <(:); }")
    end = text.index("first_line() {")
    return text[start:end]


def bash(script: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", helpers() + script], capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture
def zombie() -> Iterator[int]:
    """A process that has exited and that nobody has reaped yet."""
    pid = os.fork()
    if pid == 0:
        os._exit(3)
    deadline = time.monotonic() + 10
    while not re.search(r"\) Z ", Path(f"/proc/{pid}/stat").read_text()):
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.01)
    yield pid
    os.waitpid(pid, 0)


def test_an_exited_process_not_yet_reaped_is_not_running(zombie: int) -> None:
    assert os.kill(zombie, 0) is None  # kill -0 finds a zombie: the old test of "still running"
    done = bash(f"running {zombie}; echo $?; running $$; echo $?")
    assert done.stdout.split() == ["1", "0"], done.stderr


def test_the_bound_is_wall_time_however_slow_each_turn_is() -> None:
    """Each turn of the wait made 50 ms instead of 5 (as on an emulated CPU): a 1-s bound still ends in about a
    second, where counting 200 turns took ten."""
    started = time.monotonic()
    done = bash("nap() { sleep 0.05; }; bounded 1 /dev/null sleep 30; echo $?")
    took = time.monotonic() - started
    assert done.stdout.split() == ["124"], done.stderr
    assert took < 5, f"{took:.1f} s"


def test_a_command_that_ends_gives_its_own_status_and_output(tmp_path: Path) -> None:
    done = bash(f"bounded 5 {tmp_path}/out sh -c 'echo said; exit 7'; echo $?")
    assert done.stdout.split() == ["7"], done.stderr
    assert (tmp_path / "out").read_text() == "said\n"
