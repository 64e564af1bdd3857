"""`clusterforge health perf`: the srun it runs, the results it reads (srun's labelled output or a saved file), its
verdict and exit status, the policy config's tolerances, and the drains, with stand-in srun (tests/test_health_labels:
labels and 1,024-byte pieces as srun's), scontrol and ssh on PATH and the lab's controller's ssh stood in for.
Nothing leaves this machine."""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.app import app
from clusterforge.core.hostlist import expand
from clusterforge.operations.node_lines import by_node
from clusterforge.operations.perf_run import read_output, srun_command
from tests.test_health_labels import SRUN, srun_label

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


def own(line: str) -> str:
    """The node a result line names: the node whose task prints it, when nothing is forged."""
    return str(json.loads(line)["node"])


def saved(lines: list[str]) -> str:
    """A saved run (`--save`'s format): each line as `NODE: {...}`, NODE the node that printed it."""
    return "".join(f"{own(line)}: {line}\n" for line in lines)


def prints(tools: Path, lines: list[str], extra: dict[str, list[str]] | None = None) -> None:
    """Each line printed by the task of the node it names, and EXTRA[node]'s lines by that node's task after it."""
    by_node_: dict[str, list[str]] = {}
    for line in lines:
        by_node_.setdefault(own(line), []).append(line)
    for node, more in (extra or {}).items():
        by_node_.setdefault(node, []).extend(more)
    for node, printed in by_node_.items():
        (tools / "tasks" / f"{node}.out").write_text("".join(f"{line}\n" for line in printed))


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The labelling srun (each node's task prints tasks/<node>.out) and an scontrol that exits $SCONTROL_EXIT;
    both log one JSON argv per line to $TOOL_LOG."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "tasks").mkdir()
    (bin_dir / "srun").write_text(SRUN)
    (bin_dir / "scontrol").write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                                      "with open(os.environ['TOOL_LOG'], 'a') as log:\n"
                                      "    log.write(json.dumps(sys.argv) + '\\n')\n"
                                      "sys.exit(int(os.environ.get('SCONTROL_EXIT', '0')))\n")
    for tool in ("srun", "scontrol"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("TOOL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("SRUN_TASKS", str(tmp_path / "tasks"))
    monkeypatch.setenv("COLUMNS", "100")
    return tmp_path


def calls(tools: Path) -> list[list[str]]:
    log = tools / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_srun_gives_each_node_to_the_perf_tier_as_a_labelled_task() -> None:
    assert srun_command(["gpu-0002", "gpu-0001"], partition="maint", reservation="rma") == [
        "srun", "--nodelist=gpu-[0001-0002]", "--ntasks=2", "--distribution=arbitrary", "--label", "--exclusive",
        "--job-name=clusterforge-perf", "--time=10", "--kill-on-bad-exit=0", "--partition=maint",
        "--reservation=rma", "/usr/local/sbin/clusterforge-health", "--perf", "--json"]


def test_srun_noise_is_skipped_and_a_malformed_result_fails_its_node() -> None:
    order = ["gpu-0001", "gpu-0002", "gpu-0003"]
    out = ("srun: job 7 queued and waiting for resources\n"
           + srun_label([node_line("gpu-0001", 1) + "\n",
                         '{"node": "gpu-0002", "status": "pass", "gpus": [{"index": "zero"}]}\n',
                         '{"node": "gpu-0003", "gpus": []}\nwarning: stray\n']))
    results = read_output(by_node(out, order), order)
    assert [(r.node, r.status) for r in results] == [("gpu-0001", "pass"), ("gpu-0002", "unreadable"),
                                                     ("gpu-0003", "unreadable")]
    assert results[1].detail.startswith("unreadable result: gpus[0].index")
    assert results[2].detail == "unreadable result: status: missing: expected one of pass, fail, skipped"


def test_a_healthy_fleet_exits_0(tools: Path) -> None:
    prints(tools, fleet_lines(32))
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0032]", "--reservation", "maint"])
    assert result.exit_code == 0, result.output
    assert "H100-SXM5 (NVIDIA H100 80GB HBM3): 256 GPUs" in result.output
    assert result.output.splitlines()[-1] == "verdict: no outlier among 256 GPUs on 32 nodes"
    [srun] = calls(tools)
    assert srun[1:] == srun_command(expand("gpu-[0001-0032]"), reservation="maint")[1:]


def test_slow_wrong_and_missing_are_named_grouped_and_drained_once_per_reason(tools: Path) -> None:
    lines = fleet_lines(40, slow={"gpu-0003": {1: 0.8}, "gpu-0004": {6: 0.78}},
                        checksum={"gpu-0020": {0: "0123456789abcdef"}})
    del lines[36]  # gpu-0037 printed nothing
    prints(tools, lines)
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
    prints(tools, fleet_lines(16, slow={"gpu-0009": {2: 0.8}}))
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
    saved_file = tmp_path / "perf.lines"
    saved_file.write_text(saved(fleet_lines(8, error={"gpu-0002": {5: "CUDA error: an illegal memory access"}})))
    result = CliRunner().invoke(app, ["health", "perf", "--from", str(saved_file), "-w", "gpu-[0001-0009]"])
    assert result.exit_code == 1, result.output
    assert "  error gpu-perf: the test failed on a GPU: 1 node, 1 GPU: gpu-0002" in result.output
    assert "missing gpu-perf: no result: 1 node: gpu-0009" in result.output
    assert calls(tools) == []


def test_from_standard_input(tools: Path) -> None:
    result = CliRunner().invoke(app, ["health", "perf", "--from", "-"], input=saved(fleet_lines(4)))
    assert result.exit_code == 0, result.output
    assert "verdict: no outlier among 32 GPUs on 4 nodes" in result.output


@pytest.mark.parametrize(("bad", "message"), [
    ("gpu-0003: {not json", "perf.lines:3: not a JSON object: Expecting property name"),
    ('gpu-0003: {"node": "gpu-0003", "status": "pass", "gpus": [{"index": 0, "gemm_tflops": "fast"}]}',
     "perf.lines:3: gpus[0].gemm_tflops: expected a non-negative number, got 'fast' (printed by gpu-0003"),
    ('gpu-0003: {"node": "gpu-[0001-0009]", "status": "pass", "gpus": []}', "perf.lines:3: node: expected a node name"),
    ('gpu-0003: {"node": "gpu-0003", "status": "pass", "gpus": [{"index": 0, "checksum": "zz"}]}',
     "perf.lines:3: gpus[0].checksum: expected hex"),
    ('gpu-0003: {"node": "gpu-0003", "gpus": []}',
     "perf.lines:3: status: missing: expected one of pass, fail, skipped (printed by gpu-0003; delete its lines"),
    ('gpu-0003: {"node": "gpu-0003", "status": "pass", "gpus": [{"name": "H100"}]}',
     "perf.lines:3: gpus[0].index: expected a GPU index 0 to 1023, got None"),
    ('gpu 0003: {"node": "gpu-0003", "status": "pass"}', "perf.lines:3: expected `NODE: {...}` (a saved result)"),
    ('{"node": "gpu-0003", "status": "pass", "gpus": []}',
     "perf.lines:3: a result without the node that printed it: in this older format"),
])
def test_a_bad_saved_line_is_exit_2_at_its_line(tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               bad: str, message: str) -> None:
    """A saved line that is not one node's readable result is input to fix, never a verdict: a result without its
    status is not read as `fail` (five healthy nodes were once called failed that way)."""
    monkeypatch.chdir(tmp_path)
    lines = fleet_lines(4)
    Path("perf.lines").write_text(saved(lines[:2]) + bad + "\n" + saved(lines[3:]))
    result = CliRunner().invoke(app, ["health", "perf", "--from", "perf.lines", "--drain"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(message), result.output
    assert "Traceback" not in result.output and calls(tools) == []


def test_an_older_file_of_bare_json_lines_says_how_to_save_one() -> None:
    result = CliRunner().invoke(app, ["health", "perf", "--from", "-"], input="\n".join(fleet_lines(3)) + "\n")
    assert result.exit_code == 2, result.output
    [line] = result.output.splitlines()
    assert line.startswith("<stdin>:1: a result without the node that printed it") and "--save FILE" in line


def test_the_policy_config_sets_the_tolerance_and_the_option_overrides_it(tools: Path, tmp_path: Path) -> None:
    prints(tools, fleet_lines(16, slow={"gpu-0005": {3: 0.93}}))  # 7 % short
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
    out.write_text(srun_label([f"{line}\n" for line in fleet_lines(8, slow={"gpu-0002": {0: 0.7}})]))
    monkeypatch.setenv("SSH_PRINTS", str(out))
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0008]", "--ssh", "login-0001", "--drain"])
    assert result.exit_code == 1, result.output
    logged = [json.loads(line) for line in (fake_ssh / "ssh.jsonl").read_text().splitlines()]
    assert [argv[:4] for argv in logged] == [["-o", "BatchMode=yes", "--", "login-0001"]] * 2
    assert logged[0][4].startswith("srun '--nodelist=gpu-[0001-0008]' --ntasks=8 --distribution=arbitrary --label "
                                   "--exclusive")
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


def test_in_a_lab_srun_and_the_drains_run_on_its_controller(fake_ssh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from clusterforge.lab import state

    out = fake_ssh / "srun.out"
    out.write_text(srun_label([f"{line}\n" for line in fleet_lines(4, checksum={"gpu-0003": {7: "deadbeefdeadbeef"}})]))
    monkeypatch.setenv("SSH_PRINTS", str(out))
    monkeypatch.setattr(state, "require", lambda paths: SimpleNamespace(controller="ctl-0001"))
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0004]", "--lab", "clusterforge", "--drain"])
    assert result.exit_code == 1, result.output
    logged = [json.loads(line) for line in (fake_ssh / "ssh.jsonl").read_text().splitlines()]
    assert [(argv[:2], argv[6], argv[7].split()[0]) for argv in logged] == [
        (["-F", argv[1]], "ctl-0001", command) for argv, command in zip(logged, ("srun", "scontrol"), strict=True)]
    assert logged[0][1].endswith("clusterforge/ssh_config") and logged[1][7].split()[2:4] == [
        "NodeName=gpu-0003", "State=DRAIN"]
    assert "corruption gpu-sdc" in result.output


def test_a_drain_that_fails_is_said_and_exits_1(tools: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prints(tools, fleet_lines(8, slow={"gpu-0001": {0: 0.5}}))
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


def test_one_nodes_extra_lines_fail_that_node_and_never_drain_the_node_they_name(tools: Path) -> None:
    """gpu-0003 computes a wrong checksum; gpu-0002's task also prints a line calling gpu-0003 healthy and one
    calling the healthy gpu-0001 wrong. Keyed by the lines' own `node`, the last line won: gpu-0003 was hidden and
    gpu-0001 drained. Keyed by the node srun ran the task on, gpu-0003 is drained for gpu-sdc, gpu-0002 for its
    output, and gpu-0001 is never named."""
    lines = fleet_lines(8, checksum={"gpu-0003": {5: "0123456789abcdef"}})
    forged = [node_line("gpu-0003", 3), node_line("gpu-0001", 1, checksum={2: "0123456789abcdef"})]
    prints(tools, lines, extra={"gpu-0002": forged})
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0008]", "--drain"], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    out = result.output
    assert "  corruption gpu-sdc: checksum differs from the fleet's (H100-SXM5): 1 node, 1 GPU: gpu-0003" in out
    assert "  error gpu-perf: no readable result of its own: 1 node: gpu-0002" in out
    assert ("gpu-0002: printed 3 results naming gpu-0001, gpu-0002, gpu-0003 where one is expected: none of them "
            "counts") in out
    drains = {argv[2]: argv[4] for argv in calls(tools) if argv[0].endswith("scontrol")}
    assert sorted(drains) == ["NodeName=gpu-0002", "NodeName=gpu-0003"], drains
    assert drains["NodeName=gpu-0003"].startswith("Reason=clusterforge-health: gpu-sdc")
    assert drains["NodeName=gpu-0002"].startswith("Reason=clusterforge-health: gpu-perf")
    assert "verdict: 2 outliers on 2 of 8 nodes" in out


def test_a_node_that_prints_another_nodes_result_fails_itself(tools: Path) -> None:
    lines = fleet_lines(4)
    prints(tools, [*lines[:1], *lines[2:]], extra={"gpu-0002": [node_line("gpu-0001", 1, slow={0: 0.5})]})
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0004]", "-f", "json"])
    assert result.exit_code == 1, result.output
    [outlier] = json.loads(result.output)["outliers"]
    assert (outlier["node"], outlier["class"], outlier["detail"]) == ("gpu-0002", "error",
                                                                      "printed a result naming gpu-0001")


def test_a_result_without_its_status_fails_its_node_in_a_run(tools: Path) -> None:
    lines = fleet_lines(4)
    lines[1] = json.dumps({k: v for k, v in json.loads(lines[1]).items() if k != "status"})
    prints(tools, lines)
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0004]"])
    assert result.exit_code == 1, result.output
    assert "gpu-0002: unreadable result: status: missing" in result.output
    assert "reported a failure" not in result.output


def test_lines_forged_in_a_saved_file_name_the_node_that_printed_them(tools: Path, tmp_path: Path) -> None:
    lines = fleet_lines(8, checksum={"gpu-0003": {5: "0123456789abcdef"}})
    text = saved(lines) + f"gpu-0002: {node_line('gpu-0003', 3)}\ngpu-0002: {node_line('gpu-0001', 1, slow={1: .5})}\n"
    (tmp_path / "perf.lines").write_text(text)
    result = CliRunner().invoke(app, ["health", "perf", "--from", str(tmp_path / "perf.lines"), "--drain"],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert "gpu-0002: printed 3 results naming gpu-0001, gpu-0002, gpu-0003 (lines 2, 9, 10)" in result.output
    drains = sorted(argv[2] for argv in calls(tools) if argv[0].endswith("scontrol"))
    assert drains == ["NodeName=gpu-0002", "NodeName=gpu-0003"]


def test_a_saved_run_is_judged_again_the_same(tools: Path, tmp_path: Path) -> None:
    prints(tools, fleet_lines(16, slow={"gpu-0009": {2: 0.8}}), extra={"gpu-0004": ["warning: a stray line"]})
    save = tmp_path / "perf.lines"
    live = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0016]", "--save", str(save)])
    assert live.exit_code == 1, live.output
    assert save.read_text().splitlines()[2].startswith('gpu-0001: {"node": "gpu-0001"')
    again = CliRunner().invoke(app, ["health", "perf", "--from", str(save), "-w", "gpu-[0001-0016]"])
    assert (again.exit_code, again.output) == (live.exit_code, live.output)
    both = CliRunner().invoke(app, ["health", "perf", "--from", str(save), "--save", str(tmp_path / "x")])
    assert both.exit_code == 2 and both.output.startswith("--save: --save keeps what a run's nodes printed")


def test_the_text_ends_with_what_to_do_next_per_class(tools: Path) -> None:
    lines = fleet_lines(8, slow={"gpu-0002": {0: 0.7}}, checksum={"gpu-0005": {1: "0123456789abcdef"}})
    prints(tools, lines[:-1])
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0008]"], env={"COLUMNS": "300"})
    tail = [line for line in result.output.splitlines() if line.startswith("next (")]
    assert [line.split(":")[0] for line in tail] == ["next (corruption gpu-sdc)", "next (missing gpu-perf)",
                                                    "next (slow gpu-slow)"], result.output
    assert "RMA the GPU" in tail[0] and "scontrol show node" in tail[1] and "reset the GPU" in tail[2]


@pytest.mark.parametrize(("bound", "value", "message"), [
    ("MAX_LINE_BYTES", 2_000, r"srun's output:1: a line longer than 2,000 bytes: not a health run's output \(a node"),
    ("MAX_CAPTURED_BYTES", 20_000, r"srun's output:\d+: more than 20,000 bytes in all: not a health run's output"),
])
def test_srun_output_past_its_bounds_is_exit_2(tools: Path, monkeypatch: pytest.MonkeyPatch, bound: str, value: int,
                                               message: str) -> None:
    import clusterforge.operations.bounds as bounds

    monkeypatch.setattr(bounds, bound, value)
    monkeypatch.setenv("SRUN_SAYS", "srun: " + "x" * 3_000 + "\n" if bound == "MAX_LINE_BYTES" else "")
    prints(tools, fleet_lines(32))
    result = CliRunner().invoke(app, ["health", "perf", "-w", "gpu-[0001-0032]", "--drain"])
    assert result.exit_code == 2, result.output
    assert re.match(message, result.output), result.output
    assert not [argv for argv in calls(tools) if argv[0].endswith("scontrol")]


@pytest.mark.parametrize(("bound", "value", "message"), [
    ("MAX_LINE_BYTES", 1_000, "perf.lines:1: a line longer than 1,000 bytes: not a health run's output"),
    ("MAX_SAVED_BYTES", 10_000, "perf.lines:6: more than 10,000 bytes in all: not a health run's output"),
])
def test_a_saved_file_past_its_bounds_is_exit_2(tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                bound: str, value: int, message: str) -> None:
    import clusterforge.operations.bounds as bounds

    monkeypatch.setattr(bounds, bound, value)
    monkeypatch.chdir(tmp_path)
    Path("perf.lines").write_text(saved(fleet_lines(32)))
    result = CliRunner().invoke(app, ["health", "perf", "--from", "perf.lines"])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(message), result.output
