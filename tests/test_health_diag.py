"""`clusterforge health diag`: the srun it runs and the per-node verdicts it reads, with a stand-in srun on PATH
that prints what the health script's `--diag --json` mode prints on each node."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app
from clusterforge.operations.diag import parse, srun_command


def test_the_srun_gives_each_node_to_one_diagnostic() -> None:
    assert srun_command(3, "gpu-[0001-0002]", partition="maint", reservation="rma", drain=True) == [
        "srun", "--nodelist=gpu-[0001-0002]", "--ntasks-per-node=1", "--exclusive", "--job-name=clusterforge-diag",
        "--time=90", "--kill-on-bad-exit=0", "--partition=maint", "--reservation=rma",
        "/usr/local/sbin/clusterforge-health", "--diag", "3", "--json", "--drain"]


def test_a_node_that_printed_nothing_is_missing_and_noise_is_ignored() -> None:
    out = ('srun: job 7 queued\n{"node": "gpu-0001", "level": 1, "status": "pass", "seconds": 4.2, "detail": "ok"}\n'
           '{not json\n{"node": "gpu-0003", "status": "weird"}\n')
    verdicts = parse(out, ["gpu-0001", "gpu-0002"])
    assert [(v.node, v.status) for v in verdicts] == [("gpu-0001", "pass"), ("gpu-0002", "missing"),
                                                      ("gpu-0003", "fail")]


@pytest.fixture
def fake_srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An srun that answers for each node of --nodelist with the status named in $DIAG_<node> (default pass)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text("""#!/usr/bin/env python3
import json, os, sys
nodes = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--nodelist="))
level = int(sys.argv[sys.argv.index("--diag") + 1])
with open(os.environ["SRUN_LOG"], "w") as f:
    json.dump(sys.argv[1:], f)
for node in nodes.split(","):
    status = os.environ.get("DIAG_" + node.replace("-", "_"), "pass")
    if status != "silent":
        print(json.dumps({"node": node, "level": level, "status": status, "seconds": 1.5, "detail": "dcgmi"}))
""")
    srun.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SRUN_LOG", str(tmp_path / "argv.json"))
    return tmp_path / "argv.json"


def test_every_node_passing_exits_0_and_reports_each(fake_srun: Path) -> None:
    result = CliRunner().invoke(app, ["health", "diag", "--level", "2", "--nodes", "gpu-0001,gpu-0002",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert [(n["node"], n["status"]) for n in report["nodes"]] == [("gpu-0001", "pass"), ("gpu-0002", "pass")]
    assert json.loads(fake_srun.read_text())[-3:] == ["--diag", "2", "--json"]


@pytest.mark.parametrize("status", ["fail", "silent"])
def test_one_failing_or_silent_node_exits_1(fake_srun: Path, monkeypatch: pytest.MonkeyPatch, status: str) -> None:
    monkeypatch.setenv("DIAG_gpu_0002", status)
    result = CliRunner().invoke(app, ["health", "diag", "-r", "1", "-w", "gpu-0001,gpu-0002"])
    assert result.exit_code == 1, result.output
    assert "gpu-0001  pass" in result.output
    assert ("gpu-0002  fail" if status == "fail" else "gpu-0002  missing") in result.output


@pytest.mark.parametrize(("args", "message"), [(["--level", "5", "-w", "gpu-0001"], "--level: level 5"),
                                               (["-w", "gpu-[0002-0001]"], "--nodes")])
def test_bad_input_exits_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["health", "diag", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
