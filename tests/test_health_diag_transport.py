"""`health diag --ssh HOST` / `--lab NAME`: when ssh itself fails (exit 255: no connection, no login) or the
login node has no srun (exit 127), nothing ran on the nodes. That is said as ssh's own reason and exit 2, not
as every node `missing` and exit 1 (a verdict about the nodes).

Only loopback addresses where nothing listens are contacted: nothing leaves this machine."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app

NOWHERE = "127.0.0.9"  # loopback: the connection is refused at once, no traffic leaves the machine


def _listening(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


@pytest.fixture
def real_ssh() -> None:
    if shutil.which("ssh") is None:
        pytest.skip("no ssh client")
    if _listening(NOWHERE, 22):
        pytest.skip(f"something listens on {NOWHERE}:22")


@pytest.mark.parametrize("host", [NOWHERE, f"ssh://{NOWHERE}:1"])
def test_an_unreachable_login_node_is_ssh_failing_exit_2(real_ssh: None, host: str) -> None:
    result = CliRunner().invoke(app, ["health", "diag", "--nodes", "gpu-0001,gpu-0002", "--ssh", host])
    assert result.exit_code == 2, result.output
    assert "missing" not in result.output
    [line] = result.output.splitlines()
    assert line.startswith(f"--ssh: ssh to {host} failed (exit 255): ssh: connect to host {NOWHERE}")
    assert "Connection refused" in line


def test_an_unreachable_login_node_in_json_is_exit_2_without_a_report(real_ssh: None) -> None:
    result = CliRunner().invoke(app, ["health", "diag", "-w", "gpu-0001", "--ssh", NOWHERE, "--format", "json"])
    assert result.exit_code == 2, result.output
    assert not result.output.lstrip().startswith("{")


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ssh that prints $SSH_SAYS on stderr, $SSH_PRINTS on stdout and exits $SSH_EXIT."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ssh = bin_dir / "ssh"
    ssh.write_text('#!/bin/sh\nprintf "%s" "$SSH_PRINTS"\nprintf "%s" "$SSH_SAYS" >&2\nexit "$SSH_EXIT"\n')
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SSH_PRINTS", "")
    return ssh


def test_a_login_node_without_srun_is_exit_2(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_SAYS", "bash: line 1: srun: command not found\n")
    monkeypatch.setenv("SSH_EXIT", "127")
    result = CliRunner().invoke(app, ["health", "diag", "-w", "gpu-0001", "--ssh", "login-0001"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("--ssh: srun is not installed on login-0001: bash: line 1: srun: command")


def test_exit_255_after_node_results_is_still_a_verdict(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """srun (or ssh after the job) may end with 255 once nodes have answered: their verdicts stand."""
    monkeypatch.setenv("SSH_PRINTS", "0: " + json.dumps({"node": "gpu-0001", "status": "pass", "seconds": 1}) + "\n")
    monkeypatch.setenv("SSH_SAYS", "Connection to login-0001 closed by remote host.\n")
    monkeypatch.setenv("SSH_EXIT", "255")
    result = CliRunner().invoke(app, ["health", "diag", "-w", "gpu-0001,gpu-0002", "--ssh", "login-0001"])
    assert result.exit_code == 1, result.output
    assert "gpu-0001  pass" in result.output and "gpu-0002  missing" in result.output


@pytest.mark.parametrize("host", ["-oProxyCommand=touch pwned", "", "login 0001"])
def test_a_host_that_is_not_a_host_name_is_refused(fake_ssh: Path, host: str) -> None:
    """HOST goes to ssh as its destination: an option (`-o...`) or an empty name is bad input, never run."""
    result = CliRunner().invoke(app, ["health", "diag", "-w", "gpu-0001", "--ssh", host])
    assert result.exit_code == 2, result.output
    assert "--ssh" in result.output and "not a host" in result.output
