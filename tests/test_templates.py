"""Team templates: every one renders with its defaults into a blueprint that passes `check`."""

from __future__ import annotations

import json

import pytest

from clusterforge.blueprint.templating import discover

TEMPLATES = sorted(discover())


def test_at_least_the_five_team_templates() -> None:
    assert {"dgx-h100-superpod", "gb200-nvl72-row", "gb300-nvl72-row", "aws-p5-capacity-block", "aws-p6-b200",
            "aws-p6-b300", "onprem-dev", "amd-mi300x-roce"} <= set(TEMPLATES)


def test_list_is_one_per_line_name_first(cli) -> None:
    lines = cli("new", "--list").stdout.splitlines()
    assert [line.split()[0] for line in lines] == TEMPLATES
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


@pytest.mark.parametrize("name", TEMPLATES)
def test_defaults_pass_check(cli, tmp_path, name: str) -> None:
    out = tmp_path / f"{name}.yaml"
    result = cli("new", name, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "check passes" in result.stderr
    verdict = json.loads(cli("check", out, "-f", "json").stdout)
    assert verdict["verdict"] == "pass" and verdict["summary"]["error"] == 0


@pytest.mark.parametrize(("name", "sets"), [
    ("dgx-h100-superpod", ["scalable_units=64"]),   # 2,048 nodes, 16,384 endpoints: three tiers
    ("dgx-h100-superpod", ["scalable_units=1", "feed_amps=63"]),
    ("gb200-nvl72-row", ["racks=16", "facility_water_class=W40"]),   # 54 switches in 3 network racks
    ("gb300-nvl72-row", ["racks=16"]),   # 24 Q3400 in 3 network racks
    ("gb300-nvl72-row", ["racks=1", "feed_amps=250"]),   # one 144-port switch: one tier
    ("aws-p5-capacity-block", ["instance_type=p5en.48xlarge", "nodes=64", "fsx_capacity_gib=48000"]),  # 64 a block
    ("aws-p6-b200", ["capacity=odcr", "reservation_id=cr-0abcdef0123456789"]),
    ("aws-p6-b300", ["capacity=odcr", "reservation_id=cr-0abcdef0123456789", "nodes=1024"]),
    ("aws-p6-b300", ["nodes=1", "fsx_capacity_gib=1200", "fsx_throughput=125"]),
    ("onprem-dev", ["nodes=3", "hardware=hgx-h100-8gpu", "fabric=roce"]),
    ("amd-mi300x-roce", ["racks=64", "rocm=7.0.2"]),   # 256 nodes, 2,048 endpoints: two tiers of split SN5600s
    ("amd-mi300x-roce", ["racks=1", "feed_amps=63", "rear_door_kw=50", "rocm=7.1.1"]),
])
def test_the_range_ends_pass_too(cli, tmp_path, name: str, sets: list[str]) -> None:
    args = [a for s in sets for a in ("--set", s)]
    result = cli("new", name, *args, "-o", tmp_path / "bp.yaml")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(("name", "setting", "fragment"), [
    ("dgx-h100-superpod", "scalable_units=65", "allowed: 1 to 64"),
    ("dgx-h100-superpod", "scalable_units=many", "scalable_units='many'"),
    ("gb200-nvl72-row", "facility_water_class=W99", "one of W17, W27, W32, W40"),
    ("aws-p5-capacity-block", "reservation_id=xyz", "reservation_id"),
    ("aws-p6-b300", "nodes=1025", "allowed: 1 to 1,024"),
    ("onprem-dev", "nodes=4", "allowed: 1 to 3"),
    ("amd-mi300x-roce", "rocm=6.4.0", "one of 7.2.2, 7.1.1, 7.0.2"),
    ("amd-mi300x-roce", "racks=65", "allowed: 1 to 64"),
    ("onprem-dev", "node=2", "did you mean nodes?"),
])
def test_bad_parameters_exit_2_naming_the_parameter(cli, tmp_path, name: str, setting: str, fragment: str) -> None:
    out = tmp_path / "bp.yaml"
    result = cli("new", name, "--set", setting, "-o", out)
    assert result.exit_code == 2
    assert fragment in result.stderr and "Traceback" not in result.output
    assert not out.exists()


def test_unknown_template(cli) -> None:
    result = cli("new", "dgx-h100-superpd")
    assert result.exit_code == 2 and "did you mean dgx-h100-superpod?" in result.stderr


def test_interactive_asks_with_defaults_and_reasks_on_bad_values(tmp_path) -> None:
    from click.testing import CliRunner

    from clusterforge.cli.main import app

    out = tmp_path / "dev.yaml"
    answers = "\n\n\n9\n3\n\n"  # name, team, hardware: defaults; nodes: 9 is refused, then 3; fabric: default
    result = CliRunner().invoke(app, ["new", "onprem-dev", "-i", "-o", str(out)], input=answers)
    assert result.exit_code == 0, result.output
    assert "refused: nodes='9': above the largest allowed (allowed: 1 to 3)" in result.stderr
    assert "count: 3" in out.read_text()


def test_a_design_that_fails_is_written_and_exits_1(cli, tmp_path) -> None:
    out = tmp_path / "bp.yaml"
    result = cli("new", "dgx-h100-superpod", "--set", "rear_door_kw=30", "-o", out)
    assert result.exit_code == 1 and out.exists()
    assert "CLG-001" in result.stderr and "check FAILS" in result.stderr


@pytest.mark.parametrize("name", TEMPLATES)
def test_defaults_fit_the_templates_own_schema(name: str) -> None:
    template = discover()[name]
    assert set(template.model.model_validate({}).model_dump()) == set(template.spec.params)
    assert all(p.pattern for p in template.spec.params.values() if p.type == "str")


def _template(tmp_path, params: str, body: str):
    from clusterforge.blueprint.templating import Template

    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "params.yaml").write_text(f"description: test\nparams:\n{params}")
    (folder / "blueprint.yaml.j2").write_text(body)
    return Template("t", folder)


def test_a_default_outside_the_schema_is_refused_at_its_line(tmp_path) -> None:
    from clusterforge.core.errors import ClusterforgeError

    template = _template(tmp_path, "  n: {type: int, default: 0, ge: 1, le: 3, help: nodes}\n"
                                   "  s: {type: str, default: 'a b', pattern: '[a-z]+', help: word}\n", "{{ n }}\n")
    with pytest.raises(ClusterforgeError) as exc:
        template.render({"n": "2", "s": "ab"})  # refused even when both are set: the template itself is wrong
    rendered = [p.render() for p in exc.value.problems]
    assert any(":3: params.n.default: the default of n: " in r and "allowed: 1 to 3" in r for r in rendered)
    assert any(":4: params.s.default: the default of s, 'a b', is not of the allowed form" in r for r in rendered)


def test_a_string_parameter_needs_a_pattern(tmp_path) -> None:
    from clusterforge.core.errors import ClusterforgeError

    template = _template(tmp_path, "  s: {type: str, default: a, help: word}\n", "{{ s }}\n")
    with pytest.raises(ClusterforgeError, match="a str parameter needs a pattern"):
        template.render({})


def test_string_values_are_written_as_quoted_scalars(tmp_path) -> None:
    """Even a pattern that lets quotes, braces and '#' through cannot add a key: the value stays one string."""
    import yaml

    template = _template(tmp_path, "  s: {type: str, default: a, pattern: '[^\\n]*', help: any line}\n",
                         "# {{ s }}\nname: {{ s }}\nflow: {a: {{ s }}}\n")
    value = 'x", evil: 1} # "\u2028'
    document = yaml.safe_load(template.render({"s": value}))
    assert document == {"name": value, "flow": {"a": value}}


@pytest.mark.parametrize("value", ['10.0.0.10@o2ib", fsname: x}\nslurm: {partitions: []}', "10.0.0.10@o2ib\nx: 1",
                                   "10.0.0.10@o2ib fsname"])
def test_a_value_that_would_break_out_exits_2(cli, tmp_path, value: str) -> None:
    out = tmp_path / "bp.yaml"
    result = cli("new", "dgx-h100-superpod", "--set", f"lustre_mgs_nid={value}", "-o", out)
    assert result.exit_code == 2 and "parameter lustre_mgs_nid=" in result.stderr
    assert "not of the allowed form" in result.stderr and not out.exists()


def test_failover_nids_are_accepted(cli, tmp_path) -> None:
    out = tmp_path / "bp.yaml"
    result = cli("new", "dgx-h100-superpod", "--set", "lustre_mgs_nid=10.0.0.10@o2ib,10.1.0.10@tcp0:10.0.0.11@o2ib",
                 "-o", out)
    assert result.exit_code == 0, result.stderr
    assert 'mgs_nid: "10.0.0.10@o2ib,10.1.0.10@tcp0:10.0.0.11@o2ib"' in out.read_text()


def test_the_amd_template_renders_amd_gres_and_the_rocm_pins(cli, tmp_path) -> None:
    """The MI300X template's defaults render /dev/dri/renderD GRES and what the rocm and nccl roles read."""
    from clusterforge.render.yamlout import load

    blueprint, out = tmp_path / "x.yaml", tmp_path / "out"
    assert cli("new", "amd-mi300x-roce", "--set", "rocm=7.0.2", "-o", blueprint).exit_code == 0
    result = cli("render", blueprint, "-o", out)
    assert result.exit_code == 0, result.output
    gres = (out / "slurm" / "gres.conf").read_text().splitlines()[1:]
    assert gres == ["NodeName=gpu-[0001-0032] Name=gpu Type=mi300x File=/dev/dri/renderD[128-135] Flags=amd_gpu_env"]
    group_vars = load((out / "inventory" / "group_vars" / "all.yml").read_text())
    assert {k: group_vars[k] for k in ("gpu_vendor", "rocm_version", "rocm_rccl_version", "rocm_amdgpu_version",
                                       "fabric_kind")} == {
        "gpu_vendor": "amd", "rocm_version": "7.0.2", "rocm_rccl_version": "2.26.6", "rocm_amdgpu_version": "30.30.3",
        "fabric_kind": "roce"}
