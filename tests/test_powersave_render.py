"""Render of power saving: slurm.conf's power-save settings and CLOUD nodes, and slurm/clusterforge-powersave.json,
which the controller's programs load as it is written (clusterforge.powersave.config.load)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.plan import build_plan
from clusterforge.powersave import config as powersave_config
from clusterforge.render import RenderContext, render_files
from clusterforge.render.power_save import RESUME_PROGRAM, SUSPEND_PROGRAM
from clusterforge.render.powersave_file import FILE
from tests.conftest import example_files
from tests.policies.builders import aws, design
from tests.test_render_slurm_features import pairs, rendered

POWER_KEYS = ("ResumeProgram", "SuspendProgram", "ResumeFailProgram", "SuspendTime", "SuspendTimeout", "ResumeRate",
              "SuspendRate", "TreeWidth", "SuspendExcNodes", "SuspendExcParts", "CommunicationParameters")


def powered_aws(**power_save: object) -> dict:
    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 2, "max_count": 40, "partition": "train"}])
    data["aws"]["capacity"] = {"type": "on-demand"}
    if power_save:
        data["slurm"]["power_save"] = power_save
    return data


def conf(out: Path) -> tuple[dict[str, str], list[str]]:
    """slurm.conf's settings and its NodeName lines."""
    path = out / "slurm" / "slurm.conf"
    return dict(pairs(path)), [line for line in path.read_text().splitlines() if line.startswith("NodeName=")]


def test_a_power_saved_aws_pool_renders_cloud_nodes_and_the_programs(cli, write, tmp_path: Path) -> None:
    out = rendered(cli, write, tmp_path, powered_aws())
    settings, nodes = conf(out)
    assert {k: settings[k] for k in (*POWER_KEYS[:-2], "ResumeTimeout")} == {
        "ResumeProgram": RESUME_PROGRAM, "SuspendProgram": SUSPEND_PROGRAM, "ResumeFailProgram": SUSPEND_PROGRAM,
        "SuspendTime": "600", "SuspendTimeout": "300", "ResumeRate": "0", "SuspendRate": "0", "TreeWidth": "65533",
        "SuspendExcNodes": "gpu-[0001-0002]", "ResumeTimeout": "1800"}
    assert "CommunicationParameters" not in settings  # SLURM 24.11 has no address cache to turn off
    assert RESUME_PROGRAM.endswith("/clusterforge-resume") and SUSPEND_PROGRAM.endswith("/clusterforge-suspend")
    assert settings["SlurmctldParameters"] == "enable_configless,idle_on_node_suspend"
    assert settings["PrivateData"].split(",")[-1] == "cloud"
    assert "SuspendExcParts" not in settings  # the one partition is power-saved
    assert len(nodes) == 1 and nodes[0].startswith("NodeName=gpu-[0001-0040] ") and nodes[0].endswith(" State=CLOUD")


def test_the_powersave_file_loads_as_the_programs_read_it(cli, write, tmp_path: Path) -> None:
    data = powered_aws(launch_batch_size=250, insufficient_capacity_timeout_s=300)
    data["aws"]["capacity"] = {"type": "capacity-block", "reservation_id": "cr-0123456789abcdef0"}
    data["pools"][0] |= {"count": 0, "max_count": 16, "scaling": "best-effort"}
    data["pools"].insert(0, {"name": "ctl", "hardware": "m7i.4xlarge", "count": 1, "role": "controller",
                             "placement": "none"})
    out = rendered(cli, write, tmp_path, data)
    loaded = powersave_config.load(out / FILE)
    assert (loaded.cluster, loaded.provider, loaded.region, loaded.batch_size,
            loaded.insufficient_capacity_timeout_s) == ("t", "aws",
                                                        "us-east-1", 250, 300)
    [group] = loaded.groups  # the controller pool is not power-saved
    assert group.model_dump() == {
        "name": "gpu", "nodes": "gpu-[0001-0016]", "static": "", "scaling": "best-effort", "provider": None,
        "launch": {"launch_template": "t-gpu", "version": "$Latest", "instance_type": "p5.48xlarge", "subnet": "",
                   "capacity": "capacity-block", "reservation": "cr-0123456789abcdef0"}}
    assert loaded.group_of("gpu-0016") is group and loaded.group_of("ctl-0001") is None
    assert "SuspendExcNodes" not in conf(out)[0]  # count 0: no static node, and no other compute pool
    assert (loaded.controller_packages, loaded.controller_files) == (("python3-boto3",), ())


@pytest.mark.parametrize("protocol", ["redfish", "ipmi"])
def test_an_on_prem_pool_powered_through_its_bmcs_names_what_the_controller_needs(cli, write, tmp_path: Path,
                                                                                  protocol: str) -> None:
    """The file names target onprem's provider and, from its class, the Debian packages and the files it reads on
    the controller, which the slurm role installs and checks without naming a target."""
    from tests.policies.builders import onprem, rack

    pool = {"name": "gpu", "hardware": "dgx-h100", "count": 1, "max_count": 3, "bmc": protocol, "partition": "train"}
    out = rendered(cli, write, tmp_path, onprem(pools=[pool], racks=[rack("a01", count=0)]))
    loaded = powersave_config.load(out / FILE)
    assert loaded.provider == "onprem" and [g.nodes for g in loaded.groups] == ["gpu-[0001-0003]"]
    assert loaded.groups[0].launch == {}  # a server powered through its BMC is not launched: no launch data
    assert set(loaded.controller_packages) == {"python3-sushy", "python3-pyghmi", "python3-yaml"}
    assert loaded.controller_files == ("clusterforge-bmcs.yaml", "clusterforge-bmc.credentials")


def test_static_nodes_are_the_first_count() -> None:
    loaded = load_text(yaml.safe_dump(powered_aws()), "bp.yaml")
    files = render_files(RenderContext(loaded, build_plan(loaded.cluster, loaded.catalog), Path.cwd()))
    ps = powersave_config.PowerSaveConfig.model_validate_json(files[FILE])
    [group] = ps.groups
    assert (group.nodes, group.static, group.launch["capacity"]) == ("gpu-[0001-0040]", "gpu-[0001-0002]",
                                                                     "on-demand")
    assert group.static_members == {"gpu-0001", "gpu-0002"} and len(group.members) == 40


def test_pools_without_max_count_are_never_powered_down(cli, write, tmp_path: Path) -> None:
    data = powered_aws(exclude_partitions=["debug"])
    data["pools"][0]["partition"] = "train"
    data["pools"] += [{"name": "small", "hardware": "p5.48xlarge", "count": 3, "partition": "steady"},
                      {"name": "dbg", "hardware": "p5.48xlarge", "count": 1, "max_count": 4,
                       "partition": "debug"}]
    data["slurm"]["partitions"] += [{"name": "steady", "pools": ["small"]}, {"name": "debug", "pools": ["dbg"]}]
    data["aws"]["capacity"] = {"type": "on-demand"}
    out = rendered(cli, write, tmp_path, data)
    settings, nodes = conf(out)
    assert settings["SuspendExcNodes"] == "gpu-[0001-0002],small-[0001-0003],dbg-0001"
    assert settings["SuspendExcParts"] == "debug,steady"
    # on AWS the programs launch the static pool too (all of it static), so it is CLOUD like the others
    assert [line.rsplit(" ", 1)[1] for line in nodes] == ["State=CLOUD", "State=CLOUD", "State=CLOUD"]
    groups = powersave_config.load(out / FILE).groups
    assert [(g.name, g.nodes, g.static) for g in groups] == [("gpu", "gpu-[0001-0040]", "gpu-[0001-0002]"),
                                                              ("small", "small-[0001-0003]", "small-[0001-0003]"),
                                                              ("dbg", "dbg-[0001-0004]", "dbg-0001")]


def test_cloud_dns_keeps_slurms_tree_width(cli, write, tmp_path: Path) -> None:
    settings, _ = conf(rendered(cli, write, tmp_path, powered_aws(cloud_dns=True, suspend_time_s=1200)))
    assert settings["SlurmctldParameters"] == "enable_configless,idle_on_node_suspend,cloud_dns"
    assert "TreeWidth" not in settings and settings["SuspendTime"] == "1200"


@pytest.mark.parametrize(("pin", "written"), [("23.02", "NoAddrCache"), ("22.05.8", "NoAddrCache"),
                                              ("23.11", None), ("24.11", None), ("25.05.1", None)])
def test_the_address_cache_is_turned_off_only_where_the_release_has_one(cli, write, tmp_path: Path, pin: str,
                                                                     written: str | None) -> None:
    """SLURM before 23.11 caches a node's address, which changes with every launch; 23.11 removed the option and
    24.11's slurmctld logs an error that it is defunct."""
    data = powered_aws()
    data["software"] = {"slurm": pin}
    assert conf(rendered(cli, write, tmp_path, data))[0].get("CommunicationParameters") == written


@pytest.mark.parametrize(("pin", "merged"), [("23.02", "NoAddrCache,block_null_hash"), ("24.11", "block_null_hash")])
def test_site_options_merge_into_communication_parameters(cli, write, tmp_path: Path, pin: str, merged: str) -> None:
    data = powered_aws()
    data["software"] = {"slurm": pin}
    data["slurm"]["settings"] = {"CommunicationParameters": "block_null_hash"}
    settings, _ = conf(rendered(cli, write, tmp_path, data))
    assert settings["CommunicationParameters"] == merged


def test_the_blueprints_resume_timeout_applies_to_power_ups(cli, write, tmp_path: Path) -> None:
    data = powered_aws()
    data["slurm"]["recovery"] = {"resume_timeout_s": 2400}
    assert conf(rendered(cli, write, tmp_path, data))[0]["ResumeTimeout"] == "2400"


def test_on_prem_power_saving_is_refused_before_anything_is_written(cli, write, tmp_path: Path) -> None:
    """No provider starts bare-metal nodes: render refuses (SLM-008) instead of writing CLOUD nodes that stay down."""
    data = design([{"name": "ctl", "hardware": "cpu-1u", "count": 1, "role": "controller"},
                   {"name": "gpu", "hardware": "dgx-h100", "count": 2, "max_count": 8, "partition": "train"}])
    out = tmp_path / "out"
    result = cli("render", write(yaml.safe_dump(data, sort_keys=False)), "-o", out)
    assert result.exit_code == 1 and "SLM-008" in result.output, result.output
    assert not out.exists()


def test_slurmctld_is_never_on_a_node_that_powers_down() -> None:
    data = design([{"name": "gpu", "hardware": "dgx-h100", "count": 0, "max_count": 8, "partition": "train"}])
    text = yaml.safe_dump(data, sort_keys=False)
    loaded = load_text(text, "bp.yaml")
    with pytest.raises(ClusterforgeError) as error:
        render_files(RenderContext(loaded, build_plan(loaded.cluster, loaded.catalog), Path.cwd()))
    assert "slurmctld would run on gpu-0001" in error.value.problems[0].render()
    assert error.value.problems[0].line == text.splitlines().index("  count: 0") + 1  # the pool's count


def test_a_tree_width_applies_without_power_saving(cli, write, tmp_path: Path) -> None:
    data = design([{"name": "gpu", "hardware": "dgx-h100", "count": 2, "partition": "train"}])
    data["slurm"]["power_save"] = {"tree_width": 128}
    settings, nodes = conf(rendered(cli, write, tmp_path, data))
    assert settings["TreeWidth"] == "128" and nodes[0].endswith("State=UNKNOWN")
    assert not set(POWER_KEYS[:-4]) & set(settings)


@pytest.mark.parametrize("example", [f for f in example_files() if "max_count" not in f.read_text()
                                     and "target: aws" not in f.read_text()], ids=lambda p: p.name)
def test_a_blueprint_without_max_count_renders_no_power_saving(example: Path) -> None:
    """Every example slurmctld launches no node of renders as it did before power saving existed (the golden files
    hold one byte for byte), and naming `slurm.power_save` with no `max_count` changes nothing. AWS compute pools
    are always launched by slurmctld (`test_aws_compute_pools_are_launched_by_slurmctld_and_never_suspended`)."""
    data = yaml.safe_load(example.read_text())

    def files(blueprint: dict) -> dict[str, str]:
        loaded = load_text(yaml.safe_dump(blueprint, sort_keys=False), str(example))
        return render_files(RenderContext(loaded, build_plan(loaded.cluster, loaded.catalog), Path.cwd()))

    plain = files(data)
    assert FILE not in plain
    slurm_conf = plain["slurm/slurm.conf"]
    assert not any(f"\n{key}=" in slurm_conf for key in POWER_KEYS) and "State=CLOUD" not in slurm_conf
    assert "idle_on_node_suspend" not in slurm_conf and "ResumeTimeout=900\n" in slurm_conf
    named = {**data, "slurm": {**data.get("slurm", {}), "power_save": {"suspend_time_s": 60}}}
    assert files(named) == plain


@pytest.mark.parametrize("example", [f for f in example_files() if "target: aws" in f.read_text()
                                     and "max_count" not in f.read_text()], ids=lambda p: p.name)
def test_aws_compute_pools_are_launched_by_slurmctld_and_never_suspended(example: Path) -> None:
    """Without max_count an AWS compute pool is all static: State=CLOUD so the programs launch it (the stack owns
    no instance of it), every node in SuspendExcNodes, and the reconcile timer keeps them up."""
    loaded = load_text(example.read_text(), str(example))
    files = render_files(RenderContext(loaded, build_plan(loaded.cluster, loaded.catalog), Path.cwd()))
    conf_text = files["slurm/slurm.conf"]
    nodes = [line for line in conf_text.splitlines() if line.startswith("NodeName=")]
    assert nodes and all(line.endswith("State=CLOUD") for line in nodes)
    settings = dict(line.split("=", 1) for line in conf_text.splitlines() if "=" in line and " " not in line)
    [group] = powersave_config.PowerSaveConfig.model_validate_json(files[FILE]).groups
    assert group.static == group.nodes and settings["SuspendExcNodes"] == group.nodes
    assert settings["ResumeProgram"] == "/usr/local/sbin/clusterforge-resume"
