"""`clusterforge power` against IPMI BMCs: pyghmi's BMC server (VirtualBMC's) on loopback, one fake server behind
each (tests/ipmi_emulator.py). Each action is checked in the commands the BMCs took, not in what was printed."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyghmi")

from tests.ipmi_emulator import PASSWORD, USER, IpmiBmcs, ipmi_bmcs

NODES = [f"gpu-{i:04d}" for i in range(1, 5)]


@pytest.fixture
def bmcs(tmp_path: Path) -> Iterator[IpmiBmcs]:
    """A fresh emulator for each test (a second to start): what one test leaves behind in the BMCs, a session cut
    off on a loaded machine or a server left on, is not the next test's start."""
    with ipmi_bmcs(tmp_path, NODES, delay=1.0) as running:
        yield running


@pytest.fixture
def login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_BMC_USERNAME", USER)
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", PASSWORD)


def power(cli: Callable, *args: str) -> tuple[int, dict]:
    result = cli("power", *args, "-f", "json", "--settle", "30", "--timeout", "20")
    return result.exit_code, json.loads(result.output) if result.output.startswith("{") else {"text": result.output}


def test_status_on_off_cycle_and_a_one_time_pxe_boot_reach_the_bmcs(cli, bmcs: IpmiBmcs, login,
                                                                     tmp_path: Path) -> None:
    path = bmcs.document(tmp_path / "bmcs.yaml")
    code, answer = power(cli, "status", "gpu-[0001-0004]", "--bmcs", str(path))
    assert code == 0 and {n: v["power"] for n, v in answer["nodes"].items()} == dict.fromkeys(NODES, "Off")
    code, answer = power(cli, "on", "gpu-[0001-0003]", "--bmcs", str(path))
    assert code == 0 and {v["power"] for v in answer["nodes"].values()} == {"On"}, answer["failed"]
    assert sorted(c for c in bmcs.commands() if c.endswith(" on")) == [f"{n} on" for n in NODES[:3]]
    code, answer = power(cli, "off", "gpu-0002", "--bmcs", str(path))
    assert code == 0 and answer["nodes"]["gpu-0002"] == {"power": "Off", "boot": "",
                                                         "did": "powered off (chassis power down)", "warning": ""}
    code, answer = power(cli, "on", "gpu-0001", "--bmcs", str(path))  # already on: nothing sent
    assert answer["nodes"]["gpu-0001"]["did"] == "already on" and bmcs.commands().count("gpu-0001 on") == 1
    code, answer = power(cli, "cycle", "gpu-[0002-0003]", "--boot", "pxe", "--bmcs", str(path))
    assert code == 0, answer
    assert answer["nodes"]["gpu-0002"]["did"] == "powered on (chassis power up; it was Off)"
    assert answer["nodes"]["gpu-0003"]["did"] == "cycled (chassis power cycle)"
    assert {v["boot"] for v in answer["nodes"].values()} == {"Pxe (Once)"}
    assert {"gpu-0002 boot network", "gpu-0003 boot network", "gpu-0003 cycle"} <= set(bmcs.commands())


def test_a_bmc_that_answers_a_sha256_proposal_with_sha1_gets_a_sha1_session(cli, login, tmp_path: Path) -> None:
    """OpenStack's VirtualBMC (pyghmi's server unchanged) answers the client's cipher suite 17 proposal with suite
    3's algorithms: the client follows what the answer names, logs in and powers the server."""
    with ipmi_bmcs(tmp_path, NODES[:2], like_virtualbmc=True) as virtualbmc:
        path = virtualbmc.document(tmp_path / "bmcs.yaml")
        code, answer = power(cli, "on", "gpu-0001", "--boot", "pxe", "--bmcs", str(path))
        assert code == 0 and answer["nodes"]["gpu-0001"]["power"] == "On", answer
        code, answer = power(cli, "status", "gpu-[0001-0002]", "--bmcs", str(path))
        assert code == 0 and {n: v["power"] for n, v in answer["nodes"].items()} == {"gpu-0001": "On",
                                                                                      "gpu-0002": "Off"}, answer
        assert virtualbmc.commands() == ["gpu-0001 boot network", "gpu-0001 on"]


def test_a_refused_login_and_a_silent_bmc_fail_only_their_nodes(cli, bmcs: IpmiBmcs, login, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = bmcs.document(tmp_path / "bmcs.yaml")
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", "wrong")
    code, answer = power(cli, "status", "gpu-0004", "--bmcs", str(path), "--attempts", "3")
    assert code == 1 and answer["failed"] == {"gpu-0004": "credentials refused (IPMI login)"}
    monkeypatch.setenv("CLUSTERFORGE_BMC_PASSWORD", PASSWORD)
    import yaml

    document = yaml.safe_load(path.read_text())
    document["bmcs"]["gpu-0009"] = {"url": "ipmi://127.0.0.1:9", "protocol": "ipmi"}  # discard: nothing answers
    path.write_text(yaml.safe_dump(document))
    started = time.monotonic()
    code, answer = power(cli, "status", "gpu-0004,gpu-0009", "--bmcs", str(path), "--attempts", "1")
    assert code == 1 and answer["nodes"]["gpu-0004"]["power"] == "Off", answer
    assert answer["failed"] == {"gpu-0009": "no answer from ipmi://127.0.0.1:9"}
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(("entry", "said"), [
    ({"url": "https://127.0.0.1:623", "protocol": "ipmi"}, "a ipmi BMC's URL is ipmi://"),
    ({"url": "ipmi://127.0.0.1"}, "a redfish BMC's URL is http:// or https://"),
    ({"url": "ipmi://127.0.0.1", "protocol": "smash"}, "no BMC protocol 'smash'"),
    ({"url": "ipmi://127.0.0.1/x", "protocol": "ipmi"}, "a BMC's URL is its root"),
])
def test_a_protocol_and_a_url_that_do_not_agree_are_bad_input(cli, tmp_path: Path, login, entry: dict,
                                                             said: str) -> None:
    import yaml

    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"bmcs": {"gpu-0001": entry}}))
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path))
    assert result.exit_code == 2 and said in result.output and f"{path}:" in result.output, result.output


def test_the_on_prem_power_save_provider_resumes_and_suspends_ipmi_servers(bmcs: IpmiBmcs, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The programs' own resume and suspend, through target onprem's provider, for a pool whose BMC document says
    ipmi: the servers slurmctld names are powered on once, and off again."""
    import yaml

    from clusterforge.core import hostlist
    from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
    from clusterforge.powersave.resume import resume
    from clusterforge.powersave.suspend import suspend
    from clusterforge.targets.onprem.powersave import BmcProvider
    from tests.powersave_fakes import RecordingSlurm

    login = tmp_path / "clusterforge-bmc.credentials"
    login.write_text(yaml.safe_dump({"username": USER, "password": PASSWORD}))
    login.chmod(0o600)
    monkeypatch.setenv("CLUSTERFORGE_BMCS", str(bmcs.document(tmp_path / "clusterforge-bmcs.yaml")))
    monkeypatch.setenv("CLUSTERFORGE_BMC_CREDENTIALS", str(login))
    group = NodeGroup(name="gpu", nodes="gpu-[0001-0004]")
    config = PowerSaveConfig(cluster="c1", provider="onprem", groups=(group,))
    before = len(bmcs.commands())
    done = resume(config, BmcProvider(config), RecordingSlurm(), ["gpu-0004"], [["gpu-0004"]])
    assert sorted(done.launched) == ["gpu-0004"] and not done.failed, done.summary()
    again = resume(config, BmcProvider(config), RecordingSlurm(), ["gpu-0004"])
    assert again.already == 1 and not again.launched
    gone = suspend(BmcProvider(config), hostlist.expand("gpu-0004"))
    assert [i.node for i in gone] == ["gpu-0004"]
    assert bmcs.commands()[before:] == ["gpu-0004 on", "gpu-0004 off"]


def test_a_session_that_broke_while_its_power_change_settles_is_replaced_by_a_new_login(bmcs: IpmiBmcs) -> None:
    """On a loaded machine a BMC's answers can come after pyghmi's last retry, and pyghmi then holds that session
    broken for good: the looks that follow (the fleet asks again, `--attempts`) log in afresh instead of failing
    the node on a session that cannot answer again. The BMC is played slow by stopping its process."""
    import contextlib
    import os
    import signal

    from clusterforge.bmc import ipmi
    from clusterforge.bmc.credentials import Credentials
    from clusterforge.bmc.interface import BmcFailure, NodeBmc, Pending

    bmc = NodeBmc(node="gpu-0004", url=f"ipmi://127.0.0.1:{bmcs.ports['gpu-0004']}", system=None, verify=False,
                  protocol="ipmi")
    pending = ipmi.begin(bmc, Credentials(USER, PASSWORD), "on")
    assert isinstance(pending, Pending), pending
    os.kill(bmcs.pid, signal.SIGSTOP)
    try:
        pending.handle.session.ipmi_session.maxtimeout = 1  # pyghmi gives up in seconds, not half a minute
        with pytest.raises(BmcFailure, match="no longer connected"):
            ipmi.settle(bmc, pending)
    finally:
        os.kill(bmcs.pid, signal.SIGCONT)
    assert pending.handle.session.ipmi_session.broken
    outcome, tries = None, 0
    while outcome is None and tries < 10:
        tries += 1
        with contextlib.suppress(BmcFailure):  # a look the BMC is still too slow for: the fleet asks again
            outcome = ipmi.settle(bmc, pending)
        if outcome is None:
            time.sleep(1)
    assert outcome is not None and outcome.power == "On", outcome
    assert bmcs.commands() == ["gpu-0004 on"]
