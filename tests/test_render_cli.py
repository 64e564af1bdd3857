"""`clusterforge render` exit codes: 0 written, 1 refused on policy errors (unless --force), 2 bad input."""

from __future__ import annotations

import datetime as dt

import yaml

from tests.conftest import EXAMPLES
from tests.test_render_atomic import snapshot

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
UNDERPOWERED = ONPREM.read_text().replace("amps: 60", "amps: 40")  # 23.0 kW per side for 30.6 kW racks


def test_render_ok(cli, tmp_path) -> None:
    result = cli("render", ONPREM, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "wrote 8 files" in result.stderr  # and the manifest
    assert sorted(snapshot(tmp_path / "out")) == [
        ".clusterforge-render", "inventory/group_vars/all.yml", "inventory/hosts.yml", "manifest.json",
        "slurm/cgroup.conf", "slurm/gres.conf", "slurm/plugstack.conf", "slurm/slurm.conf", "slurm/topology.conf"]


def test_render_aws_writes_the_stack_config(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    result = cli("render", "examples/aws-p5.yaml", "-o", tmp_path / "out")
    assert result.exit_code == 0
    stack = yaml.safe_load((tmp_path / "out" / "pulumi" / "Pulumi.nlp-p5.yaml").read_text())
    assert stack == {"config": {"aws:region": "us-east-1", "clusterforge-aws:blueprint": "../../examples/aws-p5.yaml"}}
    assert not (tmp_path / "out" / "slurm" / "topology.conf").exists()


def test_policy_errors_refuse_and_write_nothing(cli, write, tmp_path) -> None:
    result = cli("render", write(UNDERPOWERED), "-o", tmp_path / "out")
    assert result.exit_code == 1
    assert "bp.yaml:28: PWR-002: rack a01 draws 30.6 kW" in result.stderr
    assert "render refused" in result.stderr
    assert not (tmp_path / "out").exists()


def test_force_renders_despite_policy_errors(cli, write, tmp_path) -> None:
    result = cli("render", write(UNDERPOWERED), "-o", tmp_path / "out", "--force")
    assert result.exit_code == 0
    assert "PWR-002" in result.stderr and "rendering anyway" in result.stderr
    assert (tmp_path / "out" / "slurm" / "slurm.conf").exists()


def test_waived_errors_do_not_refuse(cli, write, tmp_path) -> None:
    expires = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    waivers = write(yaml.safe_dump({"waivers": [
        {"rule": "PWR-002", "cluster": "vision-h100", "target": "site.rows[*].racks[*].feeds",
         "reason": "temporary feeds until the 60 A upgrade",
         "expires": expires, "approver": "facilities"}]}), "waivers.yaml")
    result = cli("render", write(UNDERPOWERED), "-o", tmp_path / "out", "--waivers", waivers)
    assert result.exit_code == 0, result.output


def test_bad_blueprint_exits_2(cli, write, tmp_path) -> None:
    bad = write(ONPREM.read_text().replace("count: 16", "cuont: 16"))
    result = cli("render", bad, "-o", tmp_path / "out")
    assert result.exit_code == 2 and "unknown key 'cuont'" in result.stderr and "Traceback" not in result.output
    assert cli("render", tmp_path / "missing.yaml", "-o", tmp_path / "out").exit_code == 2
    assert not (tmp_path / "out").exists()


def test_bad_policy_config_exits_2(cli, write, tmp_path) -> None:
    config = write("electrical: {derate: 2}\n", "policy.yaml")
    assert cli("render", ONPREM, "-o", tmp_path / "out", "--policy-config", config).exit_code == 2


def test_refuses_to_replace_a_directory_it_did_not_write(cli, tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    result = cli("render", ONPREM, "-o", home)
    assert result.exit_code == 2 and "not written by clusterforge render" in result.stderr
    assert snapshot(home) == {"notes.txt": b"mine"}
    (tmp_path / "file").write_text("x")
    assert cli("render", ONPREM, "-o", tmp_path / "file").exit_code == 2
    result = cli("render", ONPREM, "-o", tmp_path / "file" / "sub")  # a parent that is a file
    assert result.exit_code == 2 and "cannot write" in result.stderr


def test_renders_into_an_existing_empty_directory(cli, tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    assert cli("render", ONPREM, "-o", tmp_path / "empty").exit_code == 0
