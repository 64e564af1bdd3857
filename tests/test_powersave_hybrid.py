"""One power-save file for a hybrid: the hall's pool powered through its BMCs beside the cloud's burst pool. Render
names each group's provider where it is not the file's, and the programs route each node to its group's provider
(clusterforge.powersave.routing), which is made with its own groups only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from clusterforge.powersave import programs
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch
from clusterforge.powersave.reconcile import reconcile
from clusterforge.powersave.resume import resume
from clusterforge.powersave.routing import Routed
from clusterforge.powersave.suspend import suspend
from tests.powersave_fakes import RecordingSlurm
from tests.test_hybrid import hybrid
from tests.test_powersave_render import FILE


def test_a_hybrid_with_a_bmc_pool_renders_one_file_with_both_providers(cli, write, tmp_path: Path) -> None:
    data = hybrid()
    data["pools"][1] |= {"count": 12, "max_count": 16, "bmc": "ipmi"}
    out = tmp_path / "out"
    result = cli("render", write(yaml.safe_dump(data, sort_keys=False)), "-o", out)
    assert result.exit_code == 0, result.output
    loaded = programs.powersave_config.load(out / FILE)
    assert loaded.provider == "onprem" and loaded.providers == ("onprem", "aws")
    assert [(g.name, g.nodes, loaded.provider_of(g)) for g in loaded.groups] == [
        ("gpu", "gpu-[0001-0016]", "onprem"), ("burst", "burst-[0001-0032]", "aws")]
    assert {"python3-boto3", "python3-pyghmi", "python3-sushy"} <= set(loaded.controller_packages)
    assert loaded.controller_files == ("clusterforge-bmcs.yaml", "clusterforge-bmc.credentials")
    assert loaded.region == "us-east-1"
    assert isinstance(programs.provider_for(loaded), Routed)


class Fake:
    """A provider that records what it is asked, for the nodes of its own groups only."""

    OS_PACKAGES: tuple[str, ...] = ()
    CONTROLLER_FILES: tuple[str, ...] = ()
    made: dict[str, Fake] = {}

    def __init__(self, config: PowerSaveConfig) -> None:
        self.config, self.live, self.asked = config, {}, []  # type: ignore[var-annotated]
        Fake.made[config.provider] = self

    def _mine(self, nodes: Sequence[str]) -> None:
        strangers = [n for n in nodes if self.config.group_of(n) is None]
        assert not strangers, f"{self.config.provider} asked about {strangers}"

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        self._mine(nodes)
        self.asked.append(("find", tuple(nodes)))
        return {n: self.live[n] for n in nodes if n in self.live}

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        self._mine(nodes)
        self.asked.append(("launch", tuple(nodes)))
        made = {n: Instance(f"{self.config.provider}-{n}", n, f"10.0.0.{len(self.live)}") for n in nodes}
        self.live.update(made)
        return Launch(made)

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        self._mine([i.node for i in instances])
        return {i.node: i.address for i in instances if i.address}

    def terminate(self, instances: Sequence[Instance]) -> None:
        self.asked.append(("terminate", tuple(i.node for i in instances)))
        for i in instances:
            self.live.pop(i.node, None)

    def everything(self) -> list[Instance]:
        return list(self.live.values())

    def impaired(self) -> list[Instance]:
        return []

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """None: a launch makes a new instance, so resume looks a node up with `find` first."""
        return {}


def config() -> PowerSaveConfig:
    return PowerSaveConfig(cluster="c1", provider="onprem", groups=(
        NodeGroup(name="gpu", nodes="gpu-[0001-0004]"),
        NodeGroup(name="burst", nodes="burst-[0001-0004]",
                  provider="aws")))


def test_each_node_goes_to_its_groups_provider_and_each_provider_sees_its_own_groups() -> None:
    Fake.made.clear()
    routed = Routed(config(), Fake)
    assert [g.name for g in Fake.made["onprem"].config.groups] == ["gpu"]
    assert [g.name for g in Fake.made["aws"].config.groups] == ["burst"]
    nodes = ["gpu-0001", "burst-0001", "burst-0002", "gpu-0002"]
    done = resume(config(), routed, RecordingSlurm(), nodes, [nodes])
    assert sorted(done.launched) == sorted(nodes) and not done.failed, done.summary()
    assert ("launch", ("gpu-0001", "gpu-0002")) in Fake.made["onprem"].asked
    assert ("launch", ("burst-0001", "burst-0002")) in Fake.made["aws"].asked
    gone = suspend(routed, ["burst-0002", "gpu-0002"])
    assert sorted(i.node for i in gone) == ["burst-0002", "gpu-0002"]
    assert ("terminate", ("gpu-0002",)) in Fake.made["onprem"].asked
    assert ("terminate", ("burst-0002",)) in Fake.made["aws"].asked
    done_reconcile = reconcile(config(), routed, RecordingSlurm(), __import__("datetime").datetime.now())
    assert not done_reconcile.orphans  # both providers' live nodes are in their groups
    assert sorted(i.node for i in routed.everything()) == ["burst-0001", "gpu-0001"]
