"""The cluster collection's strategy (plugins/strategy/mitogen_linear.py), which a node's boot phase runs under:
mitogen's own strategy, with the bound on starting the host's interpreter taken from
CLUSTERFORGE_CONNECT_TIMEOUT_S (300 s by default, mitogen's is 30 s), run for real by ansible-playbook."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest.importorskip("ansible_mitogen")

PLAY = "- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  tasks: []\n"


def play(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    import ansible_mitogen

    (tmp_path / "play.yml").write_text(PLAY)
    environ = {**os.environ, "ANSIBLE_STRATEGY": "clusterforge.cluster.mitogen_linear",
               "PYTHONPATH": str(Path(ansible_mitogen.__file__).parents[1]), "ANSIBLE_NOCOLOR": "1",
               "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"), **env}
    return subprocess.run([str(Path(sys.executable).with_name("ansible-playbook")), "-c", "local", "-i", "here,",
                           "-e", f"ansible_python_interpreter={sys.executable}", str(tmp_path / "play.yml")],
                          capture_output=True, text=True, env=environ, timeout=300, check=False, cwd=tmp_path)


def test_the_bound_is_the_environments_and_a_run_within_it_gathers_facts(tmp_path: Path) -> None:
    done = play(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok=1" in done.stdout


def test_a_bound_too_short_to_start_the_interpreter_fails_the_connection(tmp_path: Path) -> None:
    """The environment's bound is the one mitogen applies: 1 ms is too short for any interpreter to start."""
    done = play(tmp_path, CLUSTERFORGE_CONNECT_TIMEOUT_S="0.001")
    assert done.returncode != 0
    assert "Connection timed out" in done.stdout + done.stderr


def test_a_bound_that_is_not_a_positive_number_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    import mitogen.parent

    monkeypatch.setattr(mitogen.parent.Options, "connect_timeout", 30.0)  # mitogen's, given back after the test
    monkeypatch.delenv("CLUSTERFORGE_CONNECT_TIMEOUT_S", raising=False)
    spec = importlib.util.spec_from_file_location("mitogen_linear", ROOT / "plugins" / "strategy" / "mitogen_linear.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)  # as Ansible's loader imports it
    assert mitogen.parent.Options.connect_timeout == plugin.DEFAULT_CONNECT_TIMEOUT_S == 300.0
    for value, seconds in (("45", 45.0), ("0", 300.0), ("-3", 300.0), ("soon", 300.0), ("inf", 300.0)):
        monkeypatch.setenv("CLUSTERFORGE_CONNECT_TIMEOUT_S", value)
        assert plugin.connect_timeout() == seconds, value
