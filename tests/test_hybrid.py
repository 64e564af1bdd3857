"""An on-prem cluster bursting into AWS (examples/hybrid-burst.yaml, docs/hybrid.md): the cloud pool is power-saved
and launched by the same resume program, the WAN gets a longer TCPTimeout, the hall's partition is never suspended,
and a partition that mixes sites is refused (SLM-009)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import EXAMPLES
from tests.policies.builders import found, messages
from tests.test_powersave_render import FILE, conf

HYBRID = EXAMPLES / "hybrid-burst.yaml"


def hybrid() -> dict:
    return yaml.safe_load(HYBRID.read_text())


def test_the_example_passes_and_renders_a_burst_partition(cli, tmp_path: Path) -> None:
    assert cli("check", HYBRID).exit_code == 0
    out = tmp_path / "out"
    assert cli("render", HYBRID, "-o", out).exit_code == 0
    settings, nodes = conf(out)
    assert nodes == [line for line in nodes if "gpu-" in line or "burst-" in line]
    assert [n.rsplit(" ", 1)[-1] for n in nodes] == ["State=UNKNOWN", "State=CLOUD"]  # the hall's, the cloud's
    assert settings["TCPTimeout"] == "10" and "CommunicationParameters" not in settings
    assert settings["SuspendExcParts"] == "train" and settings["SuspendExcNodes"] == "gpu-[0001-0016]"
    assert settings["SlurmctldHost"] == "ctl-0001"  # the controller stays on premises
    powersave = yaml.safe_load((out / FILE).read_text())
    assert [(g["name"], g["nodes"], g["launch"]["launch_template"]) for g in powersave["groups"]] == [
        ("burst", "burst-[0001-0032]", "vision-hybrid-burst")]


def test_a_settings_tcp_timeout_wins(cli, write, tmp_path: Path) -> None:
    data = hybrid()
    data["slurm"]["settings"] = {"TCPTimeout": 30}
    out = tmp_path / "out"
    assert cli("render", write(yaml.safe_dump(data, sort_keys=False)), "-o", out).exit_code == 0
    assert conf(out)[0]["TCPTimeout"] == "30"


def test_one_site_keeps_slurms_tcp_timeout(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("render", EXAMPLES / "onprem-dgx-h100.yaml", "-o", out).exit_code == 0
    assert "TCPTimeout" not in conf(out)[0]


def test_a_partition_that_mixes_sites_is_refused() -> None:
    data = hybrid()
    assert "SLM-009" not in found(data)
    data["slurm"]["partitions"][1]["pools"] = ["burst", "gpu"]
    [message] = messages(data, "SLM-009")
    assert message.startswith("partition burst mixes sites (aws: burst; onprem: gpu)"), message


def test_a_cloud_pool_naming_the_halls_partition_is_refused() -> None:
    data = hybrid()
    data["slurm"]["partitions"] = [{"name": "train", "pools": ["gpu"], "default": True}]
    data["pools"][2]["partition"] = "train"
    [message] = messages(data, "SLM-009")
    assert message.startswith("partition train mixes sites (onprem: gpu; aws: burst)"), message
