"""Ctrl-C (or SIGTERM, SIGHUP) during an ansible-playbook run: stop the playbook and what its workers started,
wait for it, then let the signal go on as this process's own.

ansible-playbook runs under ansible-runner in a pty of its own (a new session), out of reach of the terminal's
Ctrl-C, and each of its workers calls setsid again. ansible-runner's own answer to a signal is a SIGKILL to the
playbook's process group only, which leaves every worker's task (a `command`, an ssh) running with no parent,
and a handler that stays installed and turns the interrupt into a failed run (exit 1, a verdict).

Here the signal is noted and the playbook sent SIGTERM at once, which Ansible passes on to every worker before
it exits; ansible-runner then reaps it. Only a playbook that is still there after GRACE_S (or whose process id
is not known yet: no event has come from it) is cancelled through ansible-runner, its process group killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from clusterforge.files.atomic import write_text

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
POLL_S = 1  # how often ansible-runner asks the cancel callback


class Stop:
    """The cancel callback ansible-runner asks once per POLL_S, fed with the run's events and signals."""

    GRACE_S = 5.0

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.playbook_pid: int | None = None  # the pty's child is ansible-playbook itself; its events carry its pid
        self._terminated_at: float | None = None

    def seen(self, event: Mapping[str, Any]) -> None:
        pid = event.get("pid")
        if self.playbook_pid is None and isinstance(pid, int) and pid > 0:
            self.playbook_pid = pid
            if self.caught:
                self._terminate()

    def signalled(self, signum: int) -> None:
        self.caught.append(signum)
        self._terminate()

    def _terminate(self) -> None:
        if self._terminated_at is None and self.playbook_pid is not None:
            self._terminated_at = time.monotonic()
            with contextlib.suppress(OSError):  # already gone
                os.kill(self.playbook_pid, signal.SIGTERM)

    def __call__(self) -> bool:
        if not self.caught:
            return False
        self._terminate()
        return self._terminated_at is None or time.monotonic() - self._terminated_at > self.GRACE_S


def poll_often(private_dir: Path) -> None:
    """Make ansible-runner ask the cancel callback every POLL_S instead of every 5 s.

    Its `settings` argument is dropped when the private directory has no env/settings file, so the setting is
    written there (ansible-runner's own place for it).
    """
    settings = private_dir / "env" / "settings"
    settings.parent.mkdir(parents=True, exist_ok=True)
    write_text(settings, json.dumps({"pexpect_timeout": POLL_S}) + "\n")


@contextlib.contextmanager
def stopped_by_signals() -> Iterator[Stop]:
    """Handlers that stop the run (Stop) for the run's length; afterwards the previous handlers are back and the
    first signal caught is raised again, so Ctrl-C ends the command as an interrupt (exit 130), also when the
    run itself failed on the way out."""
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield stop
        return
    previous = {number: signal.getsignal(number) for number in SIGNALS}
    for number in SIGNALS:
        signal.signal(number, lambda signum, frame: stop.signalled(signum))
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        if stop.caught:
            signal.raise_signal(stop.caught[0])
