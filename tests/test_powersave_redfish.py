"""Target onprem's power-save provider (servers powered through their BMCs) against a real Redfish service:
OpenStack's sushy-tools emulator, fake driver, 64 systems, basic auth, on loopback. The programs' own resume,
suspend and reconcile drive it with a recording slurmctld, and each result is read in the emulator's state."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sushy")
pytest.importorskip("sushy_tools")

from clusterforge.bmc.interface import NodeBmc
from clusterforge.core import hostlist
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.reconcile import reconcile
from clusterforge.powersave.resume import resume
from clusterforge.powersave.slurm import NodeState
from clusterforge.powersave.suspend import suspend
from clusterforge.targets.onprem import powersave as onprem
from clusterforge.targets.onprem.powersave import BmcProvider
from tests.bmc_emulator import PASSWORD, USER, Emulator, emulator
from tests.powersave_fakes import RecordingSlurm


@pytest.fixture(scope="module")
def bmcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with emulator(tmp_path_factory.mktemp("emulator")) as running:
        yield running


def config(nodes: str = "gpu-[0001-0064]", static: str = "gpu-[0001-0002]") -> PowerSaveConfig:
    group = NodeGroup(name="gpu", nodes=nodes, static=static)
    return PowerSaveConfig(cluster="c1", provider="onprem", groups=(group,))


@pytest.fixture
def installed(bmcs: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The BMC document and the login where the slurm role installs them, named as its wrapper names them."""
    document = tmp_path / "clusterforge-bmcs.yaml"
    entries = {node: {"url": bmcs.url, "system": ident} for node, ident in bmcs.ids.items()}
    document.write_text(yaml.safe_dump({"defaults": {"verify_tls": False}, "bmcs": entries}))
    login = tmp_path / "clusterforge-bmc.credentials"
    login.write_text(yaml.safe_dump({"username": USER, "password": PASSWORD}))
    login.chmod(0o600)
    monkeypatch.setenv("CLUSTERFORGE_BMCS", str(document))
    monkeypatch.setenv("CLUSTERFORGE_BMC_CREDENTIALS", str(login))
    monkeypatch.setattr(onprem, "SETTLE_S", 60.0)
    return document


def power(bmcs: Emulator, nodes: str) -> dict[str, str]:
    return {n: bmcs.system(n)["PowerState"] for n in hostlist.expand(nodes)}


def test_resume_powers_the_servers_on_once_and_names_their_addresses(bmcs: Emulator, installed: Path) -> None:
    slurm = RecordingSlurm()
    done = resume(config(), BmcProvider(config()), slurm, hostlist.expand("gpu-[0003-0006]"),
                  [hostlist.expand("gpu-[0003-0006]")])
    assert not done.failed and sorted(done.launched) == hostlist.expand("gpu-[0003-0006]"), done.summary()
    assert set(power(bmcs, "gpu-[0003-0006]").values()) == {"On"}
    assert power(bmcs, "gpu-0007") == {"gpu-0007": "Off"}
    assert slurm.addresses == {n: n for n in hostlist.expand("gpu-[0003-0006]")}  # the site's DNS names them
    again = resume(config(), BmcProvider(config()), RecordingSlurm(), hostlist.expand("gpu-[0003-0006]"))
    assert again.already == 4 and not again.launched, again.summary()


def test_resume_and_suspend_ask_each_server_s_bmc_once(bmcs: Emulator, installed: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """One ask (a read, then the reset where one is needed) per node per action: the programs do not look a server
    up before they power it, since the power-on or -off reads it first. Counted at the fleet's `begin`, which every
    protocol's ask goes through; settling's looks after a reset are not asks."""
    from clusterforge.bmc import fleet

    asked: list[tuple[str, str]] = []
    begin = fleet.begin

    def counted(bmc: NodeBmc, *args: object, **kwargs: object) -> object:
        asked.append((bmc.node, str(args[1])))
        return begin(bmc, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fleet, "begin", counted)
    nodes = hostlist.expand("gpu-[0060-0062]")
    done = resume(config(), BmcProvider(config()), RecordingSlurm(), nodes, [nodes])
    assert sorted(done.launched) == nodes and sorted(asked) == [(n, "on") for n in nodes], done.summary()
    asked.clear()
    again = resume(config(), BmcProvider(config()), RecordingSlurm(), nodes)
    assert again.already == 3 and not again.launched and sorted(asked) == [(n, "on") for n in nodes]
    asked.clear()
    gone = suspend(BmcProvider(config()), nodes)
    assert sorted(i.node for i in gone) == nodes and sorted(asked) == [(n, "off") for n in nodes]
    assert set(power(bmcs, "gpu-[0060-0062]").values()) == {"Off"}


def test_suspend_powers_off_exactly_the_servers_slurmctld_names(bmcs: Emulator, installed: Path) -> None:
    resume(config(), BmcProvider(config()), RecordingSlurm(), hostlist.expand("gpu-[0010-0012]"))
    gone = suspend(BmcProvider(config()), hostlist.expand("gpu-[0010-0011]"))
    assert sorted(i.node for i in gone) == ["gpu-0010", "gpu-0011"]
    assert power(bmcs, "gpu-[0010-0012]") == {"gpu-0010": "Off", "gpu-0011": "Off", "gpu-0012": "On"}


def test_a_job_short_of_a_server_gets_none_and_the_others_go_back_off(bmcs: Emulator, installed: Path) -> None:
    """All-or-nothing: gpu-0099 is in the pool but not in the BMC document; the job's other servers are powered
    back off and every node of the job is marked DOWN with the reason."""
    slurm = RecordingSlurm()
    job = hostlist.expand("gpu-[0020-0021],gpu-0099")
    done = resume(config("gpu-[0001-0064],gpu-0099"), BmcProvider(config("gpu-[0001-0064],gpu-0099")), slurm,
                  job, [job])
    assert not done.launched and set(done.failed) == set(job), done.summary()
    assert power(bmcs, "gpu-[0020-0021]") == {"gpu-0020": "Off", "gpu-0021": "Off"}
    assert set(slurm.down) == set(job) and all("no BMC" in r or "only 2 of 3" in r for r in slurm.down.values())


def test_reconcile_powers_off_a_server_slurmctld_holds_powered_down(bmcs: Emulator, installed: Path) -> None:
    """A lost suspend: gpu-0030 is On while slurmctld shows it `idle~`; gpu-0031 is On and allocated."""
    resume(config(), BmcProvider(config()), RecordingSlurm(), ["gpu-0030", "gpu-0031"])
    states = {"gpu-0030": NodeState("idle~"), "gpu-0031": NodeState("alloc")}
    done = reconcile(config(), BmcProvider(config()), RecordingSlurm(states), _now())
    assert [i.node for i in done.orphans] == ["gpu-0030"], done.summary()
    assert power(bmcs, "gpu-[0030-0031]") == {"gpu-0030": "Off", "gpu-0031": "On"}


def test_reconcile_power_cycles_a_server_slurmctld_marked_not_responding(bmcs: Emulator, installed: Path) -> None:
    """A hung server: its BMC says On, slurmctld marked it DOWN, not responding. It is powered off and its node
    powered down (jobs requeued), so the next resume powers it on afresh; a node DOWN for another reason is not
    touched (it is a person's, or remediation's)."""
    resume(config(), BmcProvider(config()), RecordingSlurm(), ["gpu-0050", "gpu-0051"])
    states = {"gpu-0050": NodeState("down*", "Not responding"), "gpu-0051": NodeState("down", "bad DIMM")}
    slurm = RecordingSlurm(states)
    done = reconcile(config(), BmcProvider(config()), slurm, _now())
    assert done.replaced == {"gpu-0050": "not responding"}, done.summary()
    assert list(slurm.powered_down) == ["gpu-0050"] and "not responding" in slurm.powered_down["gpu-0050"]
    assert power(bmcs, "gpu-[0050-0051]") == {"gpu-0050": "Off", "gpu-0051": "On"}


def test_a_bmc_that_refuses_the_login_fails_its_nodes_and_not_the_others(bmcs: Emulator, installed: Path,
                                                                          tmp_path: Path) -> None:
    login = tmp_path / "wrong.credentials"
    login.write_text(yaml.safe_dump({"username": USER, "password": "not-it"}))
    login.chmod(0o600)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLUSTERFORGE_BMC_CREDENTIALS", str(login))
        slurm = RecordingSlurm()
        done = resume(config(), BmcProvider(config()), slurm, ["gpu-0040"])
    assert done.failed == {"gpu-0040": "credentials refused (HTTP 401)"}, done.summary()
    assert slurm.down == {"gpu-0040": "clusterforge-resume: credentials refused (HTTP 401)"}


def test_each_reconcile_pass_reads_one_slice_and_a_round_reads_every_server_once() -> None:
    """At 12,500 servers a pass reads SWEEP BMCs, not 12,500; consecutive passes cover the fleet exactly once."""
    big = config("gpu-[00001-12500]", "")
    minute = [0.0]
    provider = BmcProvider(big, clock=lambda: minute[0])
    seen: list[str] = []
    rounds = -(-12_500 // onprem.SWEEP)
    for index in range(rounds):
        minute[0] = index * onprem.PASS_S
        part = provider.slice()
        assert 0 < len(part) <= onprem.SWEEP
        seen += part
    assert len(seen) == 12_500 and len(set(seen)) == 12_500 and rounds == 49
    assert len(BmcProvider(config(), clock=lambda: 0.0).slice()) == 64  # a small pool: every server, every pass


def _now() -> datetime:
    return datetime.now()
