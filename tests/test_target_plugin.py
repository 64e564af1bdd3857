"""A target is a folder: tests/fixtures/targets/testcloud brings its own blueprint section, pool field, node facts,
group vars, rendered file, deployment outputs, day-two effects, kind of instance type with its catalog data and
price, and power-save provider, and a cluster holds an on-prem pool beside a (power-saved) pool of that target, with
no edit outside the folder.

The folder is added to `clusterforge.targets.__path__` in a fresh process (the targets and the blueprint model
they compose are found once per process), exactly as a new package under clusterforge/targets is found.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "tests" / "fixtures" / "targets"
EXAMPLE = ROOT / "examples" / "onprem-dgx-h100.yaml"

RUNNER = """\
import sys
import clusterforge.targets as package
package.__path__.append(sys.argv[1])
sys.argv = ["clusterforge", *sys.argv[2:]]
from clusterforge.cli.main import main
main()
"""

SECTION = "testcloud: {region: north-1, project: burst-lab, zones: [north-1a, north-1b]}\n"
BURST = "  - {name: burst, hardware: tc.gpu8, count: 2, partition: burst, target: testcloud, zone: north-1b}\n"
POWERED = BURST.replace("count: 2,", "count: 2, max_count: 8,")  # SLURM powers nodes 3-8 up with its provider
# a partition keeps to one site (SLM-009): the cloud pool has its own
TRAIN = "partitions: [{name: train, pools: [gpu], default: true}]"
GPU = "  - {name: gpu, hardware: dgx-h100, count: 16, role: compute, partition: train}\n"


def run(*args: str | Path, plugins: Path = PLUGINS, columns: int = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUNNER, str(plugins), *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": str(columns)})


def hybrid(tmp_path: Path, name: str = "hybrid.yaml", section: str = SECTION, burst: str = BURST) -> Path:
    """The 16-DGX on-prem example with a `testcloud:` section and a two-node burst pool on that target."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert GPU in text and "\npools:\n" in text
    assert TRAIN in text
    text = text.replace("\npools:\n", f"\n{section}pools:\n").replace(GPU, GPU + burst)
    text = text.replace(TRAIN, TRAIN[:-1] + ", {name: burst, pools: [burst]}]")
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_target_registers_its_section_and_pool_field_in_the_schema() -> None:
    schema = json.loads(run("schema").stdout)
    cluster = schema["$defs"]["Cluster"]
    assert "testcloud" in cluster["properties"]["target"]["enum"]
    assert cluster["properties"]["testcloud"]["anyOf"][0]["$ref"].endswith("/TestCloud")
    assert "zone" in schema["$defs"]["Pool"]["properties"]
    without = json.loads(run("schema", plugins=PLUGINS / "none").stdout)
    assert "testcloud" not in without["$defs"]["Cluster"]["properties"]
    assert "zone" not in without["$defs"]["Pool"]["properties"]


def test_an_on_prem_cluster_with_a_cloud_pool_validates_checks_and_plans(tmp_path: Path) -> None:
    path = hybrid(tmp_path)
    valid = run("validate", path)
    assert valid.returncode == 0, valid.stderr
    assert "18 nodes in 2 pools" in valid.stdout
    check = run("check", path, "-f", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    plan = json.loads(run("plan", path, "-f", "json").stdout)
    burst = next(pool for pool in plan["nodes"] if pool["pool"] == "burst")
    assert burst["testcloud_zone"] == "north-1b" and burst["network"] == "testcloud zone north-1b"
    assert all(run_["rack"] is None for run_ in burst["runs"])  # a cloud pool stands in no rack of the site
    placed = sum(device["count"] for rack in plan["racks"] for device in rack["devices"] if device["pool"] == "gpu")
    assert placed == 16 and not any(d["pool"] == "burst" for rack in plan["racks"] for d in rack["devices"])


def test_the_render_holds_the_targets_file_group_var_and_pool_facts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("render", hybrid(tmp_path), "-o", out)
    assert result.returncode == 0, result.stderr
    config = json.loads((out / "testcloud" / "vision-h100.json").read_text())
    assert config == {"pools": {"burst": {"count": 2, "zone": "north-1b"}}, "project": "burst-lab",
                      "region": "north-1"}
    group_vars = yaml.safe_load((out / "inventory" / "group_vars" / "all.yml").read_text().replace("!unsafe ", ""))
    assert group_vars["testcloud_region"] == "north-1"
    hosts = yaml.safe_load((out / "inventory" / "hosts.yml").read_text().replace("!unsafe ", ""))
    pools = hosts["all"]["children"]
    assert pools["pool_burst"]["vars"]["testcloud_zone"] == "north-1b"
    assert "testcloud_zone" not in pools["pool_gpu"]["vars"]
    assert "PartitionName=burst Nodes=burst-[0001-0002] " in (out / "slurm" / "slurm.conf").read_text()


def test_the_deployments_outputs_give_the_cloud_hosts_their_addresses(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"cluster": "vision-h100", "addresses": {"burst-0001": "127.0.10.1",
                                                                           "burst-0002": "127.0.10.2"}}))
    out = tmp_path / "out"
    result = run("render", hybrid(tmp_path), "-o", out, "--from-outputs", outputs)
    assert result.returncode == 0, result.stderr
    hosts = yaml.safe_load((out / "inventory" / "hosts.yml").read_text().replace("!unsafe ", ""))
    assert hosts["all"]["children"]["pool_burst"]["hosts"]["burst-0002"]["ansible_host"] == "127.0.10.2"
    alone = run("inventory", "--from-outputs", outputs, "--target", "testcloud")
    assert alone.returncode == 0, alone.stderr
    assert "127.0.10.1" in alone.stdout
    ambiguous = run("inventory", "--from-outputs", outputs)
    assert ambiguous.returncode == 2 and "several targets read deployment outputs (aws, testcloud)" in ambiguous.stderr


@pytest.mark.parametrize(("edit", "message"), [
    ({"burst": BURST.replace(", target: testcloud", "")}, "pools[1].zone: zone applies to target: testcloud only"),
    ({"burst": BURST.replace("zone: north-1b}", "zone: north-1b, efa_interfaces: 4}")},
     "pools[1].efa_interfaces: efa_interfaces applies to target: aws only"),
    ({"burst": ""}, "testcloud: the `testcloud:` section needs target: testcloud"),
    ({"section": ""}, "a testcloud pool needs a `testcloud:` section"),
    ({"burst": BURST.replace("north-1b", "north-1c")}, "pools[1].zone: zone north-1c is not one of testcloud.zones"),
    ({"burst": BURST.replace("tc.gpu8", "dgx-h100")}, "'dgx-h100' is a server; target testcloud needs an instance"),
    ({"burst": BURST.replace("tc.gpu8", "p5.48xlarge")},
     "'p5.48xlarge' is an instance of target aws; target testcloud needs an instance of its own"),
])
def test_what_the_target_requires_is_refused_at_its_line(tmp_path: Path, edit: dict[str, str], message: str) -> None:
    result = run("validate", hybrid(tmp_path, **edit))
    assert result.returncode == 2, result.stdout
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_without_the_folder_the_target_is_unknown(tmp_path: Path) -> None:
    result = run("validate", hybrid(tmp_path), plugins=PLUGINS / "none")
    assert result.returncode == 2
    assert "unknown key 'testcloud'" in result.stderr and "unknown key 'zone'" in result.stderr


def test_a_diff_classes_the_targets_keys_as_its_folder_declares(tmp_path: Path) -> None:
    old = hybrid(tmp_path, "old.yaml")
    new = hybrid(tmp_path, "new.yaml", burst=BURST.replace("north-1b", "north-1a"))
    result = run("diff", old, new, "-f", "json")
    assert result.returncode == 1, result.stderr  # a reimage is disruptive
    diff = json.loads(result.stdout)
    changes = {(c["file"], c["key"]): c for c in diff["changes"]}
    assert set(changes) == {("testcloud", "pools"), ("hosts.yml", "testcloud_zone")}
    zone = changes[("hosts.yml", "testcloud_zone")]
    assert (zone["action"], zone["hosts"]) == ("REIMAGE", ["burst-0001", "burst-0002"])
    assert zone["why"] == "instances change region or zone only by being replaced"
    assert changes[("testcloud", "pools")]["action"] == "NONE"
    assert diff["interrupted"] == ["burst-0001", "burst-0002"]  # the on-prem pool is untouched
    moved = run("diff", old, hybrid(tmp_path, "moved.yaml", section=SECTION.replace("burst-lab", "burst-two")),
                "-f", "json")
    project = next(c for c in json.loads(moved.stdout)["changes"] if c["key"] == "project")
    assert (project["file"], project["action"]) == ("testcloud", "REIMAGE")


def test_its_instance_type_and_price_come_from_its_folder() -> None:
    listed = run("catalog", "list", "--kind", "instance", "-f", "json")
    entry = next(e for e in json.loads(listed.stdout) if e["key"] == "tc.gpu8")
    assert (entry["provider"], entry["fabric_ports"], entry["origin"]) == ("testcloud", 4, "built-in (testcloud.yaml)")
    assert "tc.gpu8" not in run("catalog", "list", plugins=PLUGINS / "none").stdout
    table = run("catalog", "list", "--kind", "instance", columns=240).stdout
    assert "4 fabric ports" in next(line for line in table.splitlines() if "tc.gpu8" in line)  # its kind's network


def test_a_power_saved_pool_gets_its_provider_in_the_power_save_file(tmp_path: Path) -> None:
    """A pool of the target with a max_count passes the check, and render writes the power-save file naming the
    target's own provider, which the programs make from that file and launch the nodes with."""
    path = hybrid(tmp_path, burst=POWERED)
    check = run("check", path, "-f", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    out = tmp_path / "out"
    assert run("render", path, "-o", out).returncode == 0
    written = json.loads((out / "slurm" / "clusterforge-powersave.json").read_text())
    assert written["provider"] == "testcloud"
    assert [(g["name"], g["nodes"], g["static"], g["launch"]) for g in written["groups"]] == [
        ("burst", "burst-[0001-0008]", "burst-[0001-0002]", {})]  # it has no powersave_launch.py: none
    assert "NodeName=burst-[0001-0008]" in (out / "slurm" / "slurm.conf").read_text()
    cost = json.loads(run("cost", path, "-f", "json").stdout)
    [line] = [line for line in cost["lines"] if line["item"].startswith("tc.gpu8")]
    assert line["unit_usd"] == 12.5  # its price, from its folder
    state = tmp_path / "state.json"
    launched = subprocess.run([sys.executable, "-c", PROGRAMS, str(PLUGINS), str(out / "slurm" /
                              "clusterforge-powersave.json"), "burst-[0003-0004]"], capture_output=True, text=True,
                              timeout=120, cwd=ROOT, env={"PATH": "/usr/bin:/bin", "TESTCLOUD_STATE": str(state)})
    assert launched.returncode == 0, launched.stderr
    assert json.loads(launched.stdout) == {"provider": "TestCloudProvider",
                                           "addresses": {"burst-0003": "127.0.10.1", "burst-0004": "127.0.10.2"}}
    assert json.loads(state.read_text()) == {"burst-0003": "127.0.10.1", "burst-0004": "127.0.10.2"}


# The resume program's work with the target's folder on the package's path, against a slurmctld that records
PROGRAMS = """\
import json, sys
from pathlib import Path
import clusterforge.targets as package
package.__path__.append(sys.argv[1])
from clusterforge.core import hostlist
from clusterforge.powersave.config import load
from clusterforge.powersave.programs import provider_for
from clusterforge.powersave.resume import resume

class Slurm:
    addresses = {}
    def set_addresses(self, addresses): self.addresses.update(addresses)
    def mark_down(self, nodes, reason): raise AssertionError(reason)

config = load(Path(sys.argv[2]))
provider = provider_for(config)
done = resume(config, provider, Slurm(), hostlist.expand(sys.argv[3]), sleep=lambda s: None)
print(json.dumps({"provider": type(provider).__name__, "addresses": Slurm.addresses}))
"""
