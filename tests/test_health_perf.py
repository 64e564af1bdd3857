"""`clusterforge health perf`: the srun it runs, the results it reads (srun's output or a saved file), its verdict
and exit status, the policy config's tolerances, and the drains, with stand-in srun, scontrol and ssh on PATH and
the lab's controller mocked. Nothing leaves this machine."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app
from clusterforge.operations.perf_run import read_output, srun_command

H100 = "NVIDIA H100 80GB HBM3"
CHECKSUM = "9f2c0a5b7e1d3c48"


def node_line(node: str, seed: int, slow: dict[int, float] | None = None, checksum: dict[int, str] | None = None,
              error: dict[int, str] | None = None) -> str:
    """The line `clusterforge-health --perf --json` prints, 8 H100s spread ±3 % around the measured figures."""
    rng = random.Random(seed)
    gpus: list[dict[str, object]] = []
    for i in range(8):
        if error and i in error:
            gpus.append({"index": i, "error": error[i]})
            continue
        gemm = 793.1 * rng.gauss(1, 0.01) * (slow or {}).get(i, 1)
        gpus.append({"index": i, "name": H100, "gemm_tflops": round(gemm, 1),
                     "hbm_gbps": round(3030.5 * rng.gauss(1, 0.01), 1), "checksum": (checksum or {}).get(i, CHECKSUM),
                     "checksum_ok": True, "bad_rows": 0, "bad_cols": 0, "seconds": 1.4, "status": "pass"})
    return json.dumps({"node": node, "status": "pass", "seconds": 2.1, "gpus": gpus, "nccl_busbw_gbps": None,
                       "codes": [], "detail": ""})


def fleet_lines(count: int, **planted: dict[str, dict[int, object]]) -> list[str]:
    """`count` nodes gpu-0001...; planted: {"slow": {node: {gpu: factor}}, "checksum": ..., "error": ...}."""
    return [node_line(f"gpu-{n:04d}", n, **{kind: by_node[f"gpu-{n:04d}"] for kind, by_node in planted.items()  # type: ignore[arg-type]
                                            if f"gpu-{n:04d}" in by_node})
            for n in range(1, count + 1)]


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """srun that logs its argv and prints $SRUN_PRINTS (a file); scontrol that logs its argv and exits
    $SCONTROL_EXIT. Both log one JSON argv per line to $TOOL_LOG."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in (("srun", "sys.stdout.write(open(os.environ['SRUN_PRINTS']).read())"),
                       ("scontrol", "sys.exit(int(os.environ.get('SCONTROL_EXIT', '0')))")):
        script = bin_dir / tool
        script.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                          "with open(os.environ['TOOL_LOG'], 'a') as log:\n"
                          "    log.write(json.dumps(sys.argv) + '\\n')\n" + body + "\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOOL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("SRUN_PRINTS", str(tmp_path / "srun.out"))
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


def calls(tools: Path) -> list[list[str]]:
    log = tools / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_srun_gives_each_node_to_the_perf_tier() -> None:
    assert srun_command("gpu-[0001-0002]", partition="maint", reservation="rma") == [
        "srun", "--nodelist=gpu-[0001-0002]", "--ntasks-per-node=1", "--exclusive", "--job-name=clusterforge-perf",
        "--time=10", "--kill-on-bad-exit=0", "--partition=maint", "--reservation=rma",
        "/usr/local/sbin/clusterforge-health", "--perf", "--json"]


def test_srun_noise_is_skipped_and_a_malformed_node_line_fails_that_node() -> None:
    out = ("srun: job 7 queued and waiting for resources\n" + node_line("gpu-0001", 1) + "\n{not json\n"
           '{"node": "gpu-0002", "status": "pass", "gpus": [{"index": "zero"}]}\n')
    results = read_output(out)
    assert [(r.node, r.status) for r in results] == [("gpu-0001", "pass"), ("gpu-0002", "fail")]
    assert results[1].detail.startswith("unreadable result: gpus[0].index")


def test_a_healthy_fleet_exits_0(tools: Path) -> None:
    (tools / "srun.out").write_text("\n".join(fleet_lines(32)) + "\n")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0032]", "--reservation", "maint"])
    assert result.exit_code == 0, result.output
    assert "H100-SXM5 (NVIDIA H100 80GB HBM3): 256 GPUs" in result.output
    assert result.output.splitlines()[-1] == "verdict: no outlier among 256 GPUs on 32 nodes"
    [srun] = calls(tools)
    assert srun[1:] == srun_command("gpu-[0001-0032]", reservation="maint")[1:]


def test_slow_wrong_and_missing_are_named_grouped_and_drained_once_per_reason(tools: Path) -> None:
    lines = fleet_lines(40, slow={"gpu-0003": {1: 0.8}, "gpu-0004": {6: 0.78}},
                        checksum={"gpu-0020": {0: "0123456789abcdef"}})
    del lines[36]  # gpu-0037 printed nothing
    (tools / "srun.out").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0040]", "--drain"])
    assert result.exit_code == 1, result.output
    out = result.output
    assert ("  corruption gpu-sdc: checksum differs from the fleet's (H100-SXM5): 1 node, 1 GPU: gpu-0020"
            in out)
    assert "  slow gpu-slow: GEMM below the fleet median (H100-SXM5): 2 nodes, 2 GPUs: gpu-[0003-0004]" in out
    assert "  missing gpu-perf: no result: 1 node: gpu-0037" in out
    assert "gpu-0004 GPU 6: GEMM" in out and "% short)" in out
    assert "verdict: 4 outliers on 4 of 40 nodes" in out
    drains = [argv[1:] for argv in calls(tools) if argv[0].endswith("scontrol")]
    assert [d[:3] for d in drains] == [["update", "NodeName=gpu-0020", "State=DRAIN"],
                                       ["update", "NodeName=gpu-[0003-0004]", "State=DRAIN"]]
    assert drains[0][3].startswith("Reason=clusterforge-health: gpu-sdc (person): ")
    assert drains[1][3].startswith("Reason=clusterforge-health: gpu-slow (person): ")
    assert "drained for gpu-slow: gpu-[0003-0004] (2 nodes)" in out


def test_json_lists_every_outlier_and_the_medians(tools: Path) -> None:
    (tools / "srun.out").write_text("\n".join(fleet_lines(16, slow={"gpu-0009": {2: 0.8}})) + "\n")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0016]", "-f", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    [outlier] = report["outliers"]
    assert (outlier["node"], outlier["gpu"], outlier["class"], outlier["code"], outlier["metric"]) == (
        "gpu-0009", 2, "slow", "gpu-slow", "gemm")
    assert 15 < outlier["short_pct"] < 25 and outlier["median"] == pytest.approx(793.1, rel=0.02)
    [median] = report["medians"]
    assert (median["model"], median["gpus"], median["gemm_peak"], median["hbm_peak"]) == ("H100-SXM5", 128, 989, 3350)
    assert report["tolerances"] == {"fleet_tolerance": 0.1, "gemm_floor": 0.5, "hbm_floor": 0.6}
    assert report["ok"] is False and report["drains"] == []


def test_from_a_saved_file_runs_nothing(tools: Path, tmp_path: Path) -> None:
    saved = tmp_path / "perf.jsonl"
    saved.write_text("\n".join(fleet_lines(8, error={"gpu-0002": {5: "CUDA error: an illegal memory access"}})) + "\n")
    result = CliRunner().invoke(app, ["health", "perf", "--from", str(saved), "-w", "gpu-[0001-0009]"])
    assert result.exit_code == 1, result.output
    assert "  error gpu-perf: the test failed on a GPU: 1 node, 1 GPU: gpu-0002" in result.output
    assert "missing gpu-perf: no result: 1 node: gpu-0009" in result.output
    assert calls(tools) == []


def test_from_standard_input(tools: Path) -> None:
    result = CliRunner().invoke(app, ["health", "perf", "--from", "-"], input="\n".join(fleet_lines(4)) + "\n")
    assert result.exit_code == 0, result.output
    assert "verdict: no outlier among 32 GPUs on 4 nodes" in result.output


@pytest.mark.parametrize(("bad", "message"), [
    ("{not json", "perf.jsonl:3: not a JSON line: Expecting property name"),
    ('{"node": "gpu-0003", "gpus": [{"index": 0, "gemm_tflops": "fast"}]}',
     "perf.jsonl:3: gpus[0].gemm_tflops: expected a non-negative number, got 'fast'"),
    ('{"node": "gpu-[0001-0009]", "gpus": []}', "perf.jsonl:3: node: expected a node name"),
    ('{"node": "gpu-0003", "gpus": [{"index": 0, "checksum": "zz"}]}', "perf.jsonl:3: gpus[0].checksum: expected hex"),
])
def test_a_bad_saved_line_is_exit_2_at_its_line(tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               bad: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    Path("perf.jsonl").write_text("\n".join([*fleet_lines(2), bad, *fleet_lines(1)]) + "\n")
    result = CliRunner().invoke(app, ["health", "perf", "--from", "perf.jsonl"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(message), result.output
    assert "Traceback" not in result.output


def test_the_policy_config_sets_the_tolerance_and_the_option_overrides_it(tools: Path, tmp_path: Path) -> None:
    (tools / "srun.out").write_text("\n".join(fleet_lines(16, slow={"gpu-0005": {3: 0.93}})) + "\n")  # 7 % short
    config = tmp_path / "policy.yaml"
    config.write_text("apiVersion: clusterforge/v1\nkind: PolicyConfig\nhealth:\n  perf: {fleet_tolerance: 0.05}\n")
    args = ["health", "perf", "-w", "gpu-[0001-0016]"]
    assert CliRunner().invoke(app, args).exit_code == 0
    named = CliRunner().invoke(app, [*args, "--policy-config", str(config)])
    assert named.exit_code == 1 and "gpu-0005 GPU 3" in named.output
    assert CliRunner().invoke(app, [*args, "--policy-config", str(config), "--tolerance", "0.2"]).exit_code == 0


@pytest.mark.parametrize(("args", "config", "message"), [
    (["--tolerance", "1.5"], "", "--tolerance: 1.5 is not a tolerance"),
    (["--tolerance", "0"], "", "--tolerance: 0 is not a tolerance"),
    (["--tolerance", "nan"], "", "--tolerance: nan is not a tolerance"),
    ([], "health:\n  perf:\n    gemm_floor: 1.2\n",
     "policy.yaml:3: health.perf.gemm_floor: Input should be less than 1"),
    ([], "health:\n  perf: {fleet_tolerence: 0.2}\n", "policy.yaml:2: health.perf.fleet_tolerence"),
    (["-w", "gpu-[0002-0001]"], "", "--nodes"),
])
def test_bad_tolerances_and_nodes_are_exit_2(tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             args: list[str], config: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    extra = []
    if config:
        Path("policy.yaml").write_text(config)
        extra = ["--policy-config", "policy.yaml"]
    nodes = [] if "-w" in args else ["-w", "gpu-0001"]
    result = CliRunner().invoke(app, ["health", "perf", *nodes, *args, *extra])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(message) or message in result.output, result.output
    assert calls(tools) == []


@pytest.fixture
def fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ssh that logs its argv, prints $SSH_PRINTS (a file, when it exists) and exits $SSH_EXIT."""
    bin_dir = tmp_path / "sshbin"
    bin_dir.mkdir()
    ssh = bin_dir / "ssh"
    ssh.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                   "open(os.environ['SSH_LOG'], 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                   "p = os.environ.get('SSH_PRINTS', '')\n"
                   "sys.stdout.write(open(p).read() if p and os.path.exists(p) else '')\n"
                   "sys.stderr.write(os.environ.get('SSH_SAYS', ''))\n"
                   "sys.exit(int(os.environ.get('SSH_EXIT', '0')))\n")
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SSH_LOG", str(tmp_path / "ssh.jsonl"))
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


def test_over_ssh_srun_and_the_drains_run_on_the_login_node(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = fake_ssh / "srun.out"
    out.write_text("\n".join(fleet_lines(8, slow={"gpu-0002": {0: 0.7}})) + "\n")
    monkeypatch.setenv("SSH_PRINTS", str(out))
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0008]", "--ssh", "login-0001", "--drain"])
    assert result.exit_code == 1, result.output
    logged = [json.loads(line) for line in (fake_ssh / "ssh.jsonl").read_text().splitlines()]
    assert [argv[:4] for argv in logged] == [["-o", "BatchMode=yes", "--", "login-0001"]] * 2
    assert logged[0][4].startswith("srun '--nodelist=gpu-[0001-0008]' --ntasks-per-node=1 --exclusive")
    assert logged[1][4].startswith("scontrol update NodeName=gpu-0002 State=DRAIN "
                                   "'Reason=clusterforge-health: gpu-slow (person): GEMM or memory")


def test_ssh_failing_before_any_node_answered_is_exit_2(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_SAYS", "ssh: connect to host 127.0.0.9 port 22: Connection refused\n")
    monkeypatch.setenv("SSH_EXIT", "255")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-0001", "--ssh", "127.0.0.9", "--drain"])
    assert result.exit_code == 2, result.output
    [line] = result.output.splitlines()
    assert "--ssh: ssh to 127.0.0.9 failed (exit 255): ssh: connect to host 127.0.0.9 port 22" in line
    assert len((fake_ssh / "ssh.jsonl").read_text().splitlines()) == 1  # no drain after a failed run


def test_a_host_that_is_not_a_host_name_is_refused(fake_ssh: Path) -> None:
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-0001", "--ssh", "-oProxyCommand=touch pwned"])
    assert result.exit_code == 2 and "not a host name" in result.output
    assert not (fake_ssh / "ssh.jsonl").exists()


def test_in_a_lab_srun_and_the_drains_run_on_its_controller(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from clusterforge.lab import nodes, state

    ran: list[tuple[str, list[str]]] = []
    srun_out = "\n".join(fleet_lines(4, checksum={"gpu-0003": {7: "deadbeefdeadbeef"}})) + "\n"

    def fake_ssh(paths: object, node: str, argv: list[str], timeout: float | None = 30,
                 control: bool = True) -> subprocess.CompletedProcess[str]:
        ran.append((node, list(argv)))
        return subprocess.CompletedProcess(argv, 0, srun_out if argv[0] == "srun" else "", "")

    monkeypatch.setattr(state, "require", lambda paths: SimpleNamespace(controller="ctl-0001"))
    monkeypatch.setattr(nodes, "ssh", fake_ssh)
    monkeypatch.setenv("COLUMNS", "100")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0004]", "--lab", "clusterforge", "--drain"])
    assert result.exit_code == 1, result.output
    assert [(node, argv[0]) for node, argv in ran] == [("ctl-0001", "srun"), ("ctl-0001", "scontrol")]
    assert ran[1][1][2:4] == ["NodeName=gpu-0003", "State=DRAIN"]
    assert "corruption gpu-sdc" in result.output


def test_a_drain_that_fails_is_said_and_exits_1(tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tools / "srun.out").write_text("\n".join(fleet_lines(8, slow={"gpu-0001": {0: 0.5}})) + "\n")
    monkeypatch.setenv("SCONTROL_EXIT", "1")
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0008]", "--drain", "-f", "json"])
    assert result.exit_code == 1
    [drain] = json.loads(result.output)["drains"]
    assert (drain["code"], drain["hostlist"], drain["exit"]) == ("gpu-slow", "gpu-0001", 1)


def test_help_teaches_with_examples() -> None:
    result = CliRunner().invoke(app, ["health", "perf", "--help"])
    assert result.exit_code == 0
    assert "clusterforge health perf -w gpu-[00001-12500] --reservation maint --ssh login-0001 --drain" in result.output
    assert "corruption (gpu-sdc)" in result.output


def test_a_long_hostlist_is_cut_at_a_whole_range_with_the_count_left_out() -> None:
    from clusterforge.cli.perf_view import hosts

    scattered = [f"gpu-{n:06d}" for n in range(1000, 13000, 1000)]
    assert hosts(scattered, 40) == "gpu-[001000,002000,003000,004000],…(+8 more)"
    assert hosts(["gpu-0001", "gpu-0002", "login-01"], 40) == "gpu-[0001-0002],login-01"
    assert hosts([f"gpu-{n:04d}" for n in (*range(1, 51), *range(60, 70))], 14) == "gpu-[0001-0050],…(+10 more)"
