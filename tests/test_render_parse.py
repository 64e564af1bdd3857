"""Rendered files parse as their consumers read them: Ansible's inventory parser, SLURM's keys and hostlists."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from clusterforge.catalog.slurm_parameters import for_version, releases
from clusterforge.core.hostlist import expand
from clusterforge.render.yamlout import load
from tests.conftest import EXAMPLES
from tests.policies.builders import design


def words(text: str) -> set[str]:
    return set(text.split())


# Every parameter of slurm.conf(5) and cgroup.conf(5) of SLURM 24.11 (the release software.slurm pins by default),
# from the parameter lists read off the man pages (clusterforge/catalog/data/slurm-parameters.yaml).
PARAMETERS = for_version("24.11")
assert PARAMETERS is not None
SLURM_CONF_KEYS = set(PARAMETERS.known("slurm_conf"))
NODE_KEYS = set(PARAMETERS.known("node"))
PARTITION_KEYS = set(PARAMETERS.known("partition"))
CGROUP_KEYS = set(PARAMETERS.known("cgroup_conf"))
# The keys of the slurm.conf a real slurmctld 24.11 ran with (../shared/reference/slurm-production.md, section 2):
# an anchor for the lists, which come from the same man pages the tests read back with.
RECIPE_KEYS = words("""ClusterName SlurmctldHost SlurmctldParameters SlurmUser AuthType AuthInfo CredType
StateSaveLocation SlurmdSpoolDir SlurmctldLogFile SlurmdLogFile SlurmctldPidFile SlurmdPidFile SlurmctldTimeout
SlurmdTimeout ReturnToService MailProg ProctrackType TaskPlugin JobAcctGatherType AccountingStorageType
AccountingStorageHost AccountingStorageEnforce SelectType SelectTypeParameters DefMemPerCPU PriorityType
PriorityWeightFairshare PriorityWeightQOS PriorityWeightAge PriorityWeightJobSize PriorityDecayHalfLife
PriorityCalcPeriod PreemptType PreemptMode MpiDefault TopologyPlugin MaxNodeCount""")
GRES_KEYS = {"AutoDetect", "Count", "Cores", "File", "Flags", "Links", "MultipleFiles", "Name", "NodeName", "Type"}
TOPOLOGY_KEYS = {"SwitchName", "Switches", "Nodes", "LinkSpeed"}
JOB_CONTAINER_KEYS = {"AutoBasePath", "BasePath", "CloneNSScript", "CloneNSScript_Wait", "CloneNSEpilog",
                      "CloneNSEpilog_Wait", "Dirs", "EntireStepInNS", "InitScript", "NodeName", "Shared"}


def test_the_parameter_lists_hold_what_a_real_slurmctld_read() -> None:
    assert RECIPE_KEYS <= SLURM_CONF_KEYS
    assert {"NodeName", "RealMemory", "Gres", "State"} <= NODE_KEYS and {"PartitionName", "Nodes"} <= PARTITION_KEYS
    assert {"CgroupPlugin", "ConstrainCores", "ConstrainRAMSpace", "ConstrainDevices"} <= CGROUP_KEYS
    # nested options are not parameters; sections' line keys are not slurm.conf parameters
    assert not {"associations", "bf_continue", "NodeName", "PartitionName", "CR_Core"} & SLURM_CONF_KEYS
    assert list(releases()) == ["22.05", "23.02", "23.11", "24.05", "24.11", "25.05", "25.11", "26.05"]
    assert "HashPlugin" not in releases()["22.05"].known("slurm_conf")  # new in 24.05
    assert "ConstrainKmemSpace" not in CGROUP_KEYS  # removed in 23.02


def render(cli, blueprint: Path, out: Path, *extra: str) -> Path:
    result = cli("render", blueprint, "-o", out, *extra)
    assert result.exit_code == 0, result.output
    return out


def conf_lines(path: Path) -> list[list[tuple[str, str]]]:
    """Each non-comment line as its key=value pairs (SLURM keys are case-insensitive; we write them as documented)."""
    out = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append([tuple(field.split("=", 1)) for field in line.split()])  # type: ignore[misc]
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[str, Path]:
    from click.testing import CliRunner

    from clusterforge.cli.main import app

    out = {}
    for example in ("onprem-dgx-h100", "aws-p5"):
        target = tmp_path_factory.mktemp(example) / "out"
        result = CliRunner().invoke(app, ["render", str(EXAMPLES / f"{example}.yaml"), "-o", str(target)])
        assert result.exit_code == 0, result.output
        out[example] = target
    return out


def literal(data: object) -> object:
    """ansible-inventory's JSON with each `!unsafe` string ({"__ansible_unsafe": text}) as its text."""
    if isinstance(data, dict):
        if set(data) == {"__ansible_unsafe"}:
            return data["__ansible_unsafe"]
        return {key: literal(value) for key, value in data.items()}
    if isinstance(data, list):
        return [literal(value) for value in data]
    return data


def ansible_inventory(inventory: Path) -> dict:
    tool = Path(sys.executable).with_name("ansible-inventory")
    result = subprocess.run([str(tool), "-i", str(inventory), "--list"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def test_ansible_parses_the_onprem_inventory(rendered) -> None:
    data = ansible_inventory(rendered["onprem-dgx-h100"] / "inventory" / "hosts.yml")
    # every string from the blueprint or the catalog is !unsafe: Ansible keeps it as data
    assert data["_meta"]["hostvars"]["gpu-0014"]["gpu_model"] == {"__ansible_unsafe": "H100-SXM5"}
    data = literal(data)  # type: ignore[assignment]
    assert set(data["all"]["children"]) >= {"slurm_controller", "slurm_compute", "slurm_login", "pool_gpu"}
    assert data["slurm_controller"]["hosts"] == ["gpu-0001"]
    assert data["slurm_compute"]["children"] == ["pool_gpu"]
    assert data["pool_gpu"]["hosts"] == [f"gpu-{i:04d}" for i in range(1, 17)]
    host = data["_meta"]["hostvars"]["gpu-0014"]
    assert (host["rack"], host["row"], host["rack_position"]) == ("b02", "b", 9)
    assert (host["gpu_count"], host["gpu_model"], host["gres"]) == (8, "H100-SXM5", "gpu:h100:8")
    assert host["rails"] == ["leaf-001", "leaf-001", "leaf-002", "leaf-002", "leaf-003", "leaf-003",
                             "leaf-004", "leaf-004"]
    # group_vars/all.yml beside the inventory reaches every host
    assert (host["slurm_cluster_name"], host["nvidia_driver_version"], host["lustre_client_mount"]) == (
        "vision-h100", "595.91.07", "/lustre")
    assert host["slurm_controller_host"] == "gpu-0001" and host["infiniband_enabled"] is True


def test_ansible_parses_the_aws_inventory(rendered) -> None:
    data = literal(ansible_inventory(rendered["aws-p5"] / "inventory" / "hosts.yml"))
    assert isinstance(data, dict)
    assert "gpu-0064" not in data["_meta"]["hostvars"]  # slurmctld launches the GPU nodes; they join by themselves
    assert not data.get("pool_gpu", {}).get("hosts")
    host = data["_meta"]["hostvars"]["controller-0001"]
    assert (host["slurm_cluster_name"], host["availability_zone"]) == ("nlp-p5", "use1-az4")
    assert host["efa_enabled"] is True and host["aws_region"] == "us-east-1" and "rack" not in host


@pytest.mark.parametrize("example", ["onprem-dgx-h100", "aws-p5"])
def test_slurm_conf_uses_only_known_keys(rendered, example: str) -> None:
    lines = conf_lines(rendered[example] / "slurm" / "slurm.conf")
    for fields in lines:
        first = fields[0][0]
        known = NODE_KEYS if first == "NodeName" else PARTITION_KEYS if first == "PartitionName" else SLURM_CONF_KEYS
        for key, _ in fields:
            assert key in known, f"{key} is not a slurm.conf key"
    settings = {fields[0][0]: fields[0][1] for fields in lines if len(fields) == 1}
    assert settings["SelectType"] == "select/cons_tres" and settings["GresTypes"] == "gpu"
    assert settings["ProctrackType"] == "proctrack/cgroup" and "task/cgroup" in settings["TaskPlugin"]
    # on AWS a blueprint without a controller pool gets the stack's own controller, not a GPU node
    controller = {"onprem-dgx-h100": "gpu-0001", "aws-p5": "controller-0001"}[example]
    assert settings["SlurmctldHost"] == controller and settings["StateSaveLocation"]
    assert ("TopologyPlugin" in settings) == (example == "onprem-dgx-h100")


@pytest.mark.parametrize(("example", "name", "keys"), [
    ("onprem-dgx-h100", "gres.conf", GRES_KEYS), ("onprem-dgx-h100", "topology.conf", TOPOLOGY_KEYS),
    ("onprem-dgx-h100", "cgroup.conf", CGROUP_KEYS), ("aws-p5", "gres.conf", GRES_KEYS)])
def test_other_confs_use_only_known_keys(rendered, example: str, name: str, keys: set[str]) -> None:
    for fields in conf_lines(rendered[example] / "slurm" / name):
        assert {key for key, _ in fields} <= keys


def test_gres_conf_matches_the_node_gres(rendered) -> None:
    out = rendered["onprem-dgx-h100"] / "slurm"
    nodes = {dict(f)["NodeName"]: dict(f) for f in conf_lines(out / "slurm.conf") if f[0][0] == "NodeName"}
    for fields in conf_lines(out / "gres.conf"):
        gres = dict(fields)
        name, kind, count = nodes[gres["NodeName"]]["Gres"].split(":")
        assert (gres["Name"], gres["Type"], len(expand(gres["File"]))) == (name, kind, int(count))
    assert (out / "gres.conf").read_text().splitlines()[1] == \
        "NodeName=gpu-[0001-0016] Name=gpu Type=h100 File=/dev/nvidia[0-7]"


def test_topology_is_a_tree_over_every_node(rendered) -> None:
    out = rendered["onprem-dgx-h100"] / "slurm"
    switches = [dict(f) for f in conf_lines(out / "topology.conf")]
    names = {s["SwitchName"] for s in switches}
    leaf_nodes = [host for s in switches if "Nodes" in s for host in expand(s["Nodes"])]
    assert sorted(leaf_nodes) == [f"gpu-{i:04d}" for i in range(1, 17)]  # each node under one leaf-level switch
    assert all(set(expand(s["Switches"])) <= names for s in switches if "Switches" in s)


def test_no_topology_conf_without_a_switched_fabric(rendered) -> None:
    assert not (rendered["aws-p5"] / "slurm" / "topology.conf").exists()
    assert (rendered["onprem-dgx-h100"] / "slurm" / "topology.conf").exists()


def test_12500_nodes_compress_to_a_handful_of_lines(cli, write, tmp_path) -> None:
    pools = [{"name": "gpu", "hardware": "dgx-h100", "count": 12_500, "partition": "train"},
             {"name": "cpu", "hardware": "cpu-1u", "count": 500, "partition": "cpu"},
             {"name": "login", "hardware": "cpu-1u", "count": 4, "role": "login"}]
    data = design(pools, slurm={"partitions": [{"name": "train", "pools": ["gpu"], "default": True},
                                               {"name": "cpu", "pools": ["cpu"]}]})
    data["fabric"]["switch"] = "q3400"  # 100,000 endpoints need radix 144 for three tiers
    out = render(cli, write(yaml.safe_dump(data)), tmp_path / "out", "--force")
    text = (out / "slurm" / "slurm.conf").read_text()
    node_lines = re.findall(r"^NodeName=.*$", text, re.M)
    assert len(node_lines) < 10
    assert node_lines[0] == ("NodeName=gpu-[00001-12500] Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 "
                             "RealMemory=1992294 Gres=gpu:h100:8 State=UNKNOWN")
    assert "PartitionName=train Nodes=gpu-[00001-12500] Default=YES" in text
    assert sum(len(expand(line.split()[0].split("=", 1)[1])) for line in node_lines) == 13_000
    hosts = load((out / "inventory" / "hosts.yml").read_text())["all"]["children"]
    assert len(hosts["pool_gpu"]["hosts"]) == 12_500


def test_job_container_and_plugstack_conf_parse(cli, write, tmp_path) -> None:
    data = design([{"name": "ctl", "hardware": "cpu-1u", "count": 1, "role": "controller"},
                   {"name": "gpu", "hardware": "dgx-h100", "count": 2, "partition": "train"}])
    data["slurm"] |= {"job_container_tmpfs": {"base_path": "/local/tmp", "dirs": ["/tmp", "/dev/shm", "/scratch"]},
                      "containers": True}
    out = render(cli, write(yaml.safe_dump(data)), tmp_path / "out") / "slurm"
    [fields] = conf_lines(out / "job_container.conf")
    assert fields[0] == ("BasePath", "/local/tmp")  # job_container.conf(5): a line without NodeName starts so
    assert {key for key, _ in fields} <= JOB_CONTAINER_KEYS and dict(fields)["Dirs"] == "/tmp,/dev/shm,/scratch"
    # spank(7): "required/optional plugin arguments", one plugin per line; '#' starts a comment
    plugins = [line.split() for line in (out / "plugstack.conf").read_text().splitlines() if not line.startswith("#")]
    assert plugins == [["required", "/usr/local/lib/slurm/spank_pyxis.so"]]
