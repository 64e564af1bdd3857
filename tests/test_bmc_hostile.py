"""BMCs that lie, tried as an attacker would: `clusterforge power` against stand-in BMCs on loopback
(tests/bmc_standins.py), each answering in one hostile way beside honest ones, and the on-prem power-save provider
in front of the same four. What each test shows is in what the honest BMCs received (their request logs) and in
each node's verdict; how fast and in how much memory is measured in benchmarks/bmc_hostile.py, not here."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

pytest.importorskip("sushy")

from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.resume import resume
from clusterforge.powersave.suspend import suspend
from clusterforge.targets.onprem import powersave as onprem
from clusterforge.targets.onprem.powersave import BmcProvider
from tests.bmc_standins import StandIn, standin
from tests.powersave_fakes import RecordingSlurm

LOGIN = {"CLUSTERFORGE_BMC_USERNAME": "admin", "CLUSTERFORGE_BMC_PASSWORD": "fleet-secret"}
HARD_LIMIT = 1024 * 1024 * 1024  # a run that reads a never-ending answer whole dies here, not on the CI machine


def document(tmp_path: Path, bmcs: dict[str, str], **defaults: object) -> Path:
    path = tmp_path / "bmcs.yaml"
    path.write_text(yaml.safe_dump({"defaults": {"verify_tls": False, **defaults},
                                    "bmcs": {node: {"url": url} for node, url in bmcs.items()}}))
    return path


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (HARD_LIMIT, HARD_LIMIT))


def power(tmp_path: Path, action: str, nodes: str, bmcs: dict[str, str], *extra: str,
          wait_s: float = 90) -> tuple[int, dict]:
    """`clusterforge power` as its own process, under a hard memory limit, its JSON answer."""
    argv = [sys.executable, "-m", "clusterforge", "power", action, nodes, "--bmcs", str(document(tmp_path, bmcs)),
            "-f", "json", "--settle", "20", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=wait_s, env={**os.environ, **LOGIN},
                          preexec_fn=_limited)
    assert done.returncode in (0, 1), (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return done.returncode, json.loads(done.stdout)


def untouched(bmc: StandIn) -> None:
    assert bmc.requests == [], bmc.requests  # not a login, not a reset, not a read


@pytest.mark.parametrize("lie", ["reset-elsewhere", "member-elsewhere", "link-elsewhere"])
def test_a_bmc_pointing_at_another_bmc_fails_its_node_and_the_other_hears_nothing(tmp_path: Path, lie: str) -> None:
    with standin("honest") as victim, standin(lie, elsewhere=victim.url) as liar:
        code, answer = power(tmp_path, "off", "node-a", {"node-a": liar.url, "node-b": victim.url})
    assert code == 1 and answer["nodes"] == {}, answer
    assert "not its own address: nothing was sent there" in answer["failed"]["node-a"], answer
    assert victim.url.split("//")[1] in answer["failed"]["node-a"]  # it names where it was sent
    untouched(victim)
    assert victim.power == "On"
    if lie == "reset-elsewhere":
        assert liar.power == "On" and resets(liar) == 0


def test_an_endless_answer_and_a_drip_fail_only_their_nodes_and_the_honest_are_answered(tmp_path: Path) -> None:
    with standin("endless") as endless, standin("drip", drip_s=0.5) as drip, standin("honest") as honest:
        bmcs = {"node-e": endless.url, "node-d": drip.url, "node-h": honest.url}
        code, answer = power(tmp_path, "off", "node-d,node-e,node-h", bmcs, "--timeout", "3")
    assert code == 1
    assert answer["nodes"]["node-h"]["power"] == "Off" and honest.power == "Off", answer
    assert answer["failed"]["node-e"] == "answer over 1048576 bytes", answer
    assert answer["failed"]["node-d"] == "no whole answer within 3 s (part of it came)", answer


def test_no_retry_hides_behind_the_fleets_attempts(tmp_path: Path) -> None:
    """A BMC that closes every connection at once: with --attempts 1, exactly one connection is made (sushy's own
    three tries are off); with --attempts 2, two."""
    for attempts in (1, 2):
        with standin("closes") as closing:
            code, answer = power(tmp_path, "status", "node-c", {"node-c": closing.url}, "--attempts", str(attempts),
                                 "--timeout", "1")
        assert code == 1 and answer["failed"]["node-c"] in ("it closed the connection", "connection reset"), answer
        assert closing.connections == attempts


def test_a_refused_port_is_one_clean_line(tmp_path: Path) -> None:
    with standin("honest") as gone:
        url = gone.url
    code, answer = power(tmp_path, "status", "node-r", {"node-r": url}, "--attempts", "1", "--timeout", "1")
    assert code == 1 and answer["failed"] == {"node-r": "connection refused"}, answer


def test_https_to_a_plain_http_bmc_is_one_clean_line(tmp_path: Path) -> None:
    with standin("honest") as plain:
        code, answer = power(tmp_path, "status", "node-s", {"node-s": plain.url.replace("http://", "https://")},
                             "--attempts", "1")
    assert code == 1, answer
    assert answer["failed"] == {"node-s": "the BMC does not speak TLS there (is its URL http://?)"}, answer


def test_a_one_time_boot_read_back_as_continuous_is_a_warning_on_its_node(tmp_path: Path) -> None:
    with standin("continuous") as keeps, standin("honest") as honest:
        code, answer = power(tmp_path, "cycle", "node-k,node-h", {"node-k": keeps.url, "node-h": honest.url},
                             "--boot", "pxe")
    assert code == 0, answer
    assert "reads back as Continuous" in answer["nodes"]["node-k"]["warning"], answer
    assert answer["nodes"]["node-h"]["warning"] == "" and answer["nodes"]["node-h"]["boot"] == "Pxe (Once)"


def test_the_text_view_says_the_warning_on_its_nodes_line(tmp_path: Path, cli: Callable, monkeypatch) -> None:
    for name, value in LOGIN.items():
        monkeypatch.setenv(name, value)
    with standin("continuous") as keeps:
        result = cli("power", "on", "node-k", "--bmcs", str(document(tmp_path, {"node-k": keeps.url})),
                     "--boot", "pxe", "--settle", "20")
    assert result.exit_code == 0, result.output
    assert "node-k" in result.output and "WARNING: the one-time network boot reads back as Continuous" in result.output
    assert "1 of 1 nodes done, 1 with a warning" in result.output


def test_each_bmc_is_sent_its_own_hostlists_login_and_no_other(tmp_path: Path, cli: Callable, monkeypatch) -> None:
    """Per-hostlist logins: a compromised BMC learns only the login it was given (docs/security.md)."""
    for name in LOGIN:
        monkeypatch.delenv(name, raising=False)
    secret = tmp_path / "bmc.credentials"
    secret.write_text(yaml.safe_dump({"username": "fleet", "password": "fleet-secret",
                                      "by_nodes": {"rack-[1-2]": {"username": "rack-a", "password": "a-secret"}}}))
    secret.chmod(0o600)
    with standin("honest") as one, standin("honest") as two, standin("honest") as other:
        path = document(tmp_path, {"rack-1": one.url, "rack-2": two.url, "other-1": other.url})
        result = cli("power", "status", "rack-[1-2],other-1", "--bmcs", str(path), "--credentials", str(secret))
    assert result.exit_code == 0, result.output
    assert logins(one) == logins(two) == {"rack-a"} and logins(other) == {"fleet"}
    secret.write_text(yaml.safe_dump({"by_nodes": {"rack-1": {"username": "r1", "password": "x"}}}))
    refused = cli("power", "status", "rack-[1-2]", "--bmcs", str(path), "--credentials", str(secret))
    assert refused.exit_code == 2 and "1 node(s) have no login in the credentials file: rack-2" in refused.output


def logins(bmc: StandIn) -> set[str]:
    """The users of the logins a BMC was sent (the service root is read without one, as DSP0266 allows)."""
    assert all(user or path == "/redfish/v1/" for _, path, user in bmc.requests), bmc.requests
    return {user for _, _, user in bmc.requests if user}


def test_two_nodes_on_one_server_are_refused_with_both_lines(tmp_path: Path, cli: Callable) -> None:
    path = tmp_path / "bmcs.yaml"
    path.write_text("bmcs:\n"
                    "  gpu-0001: {url: 'https://10.2.0.11'}\n"
                    "  gpu-0002: {url: 'https://10.2.0.11:443/'}\n"      # the same BMC, its only system
                    "  gpu-0003: {url: 'https://10.2.0.20', system: '1'}\n"
                    "  gpu-0004: {url: 'https://10.2.0.20', system: '1'}\n"  # the same system
                    "  gpu-0005: {url: 'https://10.2.0.20', system: '2'}\n"  # a sibling: fine
                    "  gpu-0006: {url: 'https://10.2.0.20'}\n")              # names none where others do
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path))
    assert result.exit_code == 2, result.output
    assert f"{path}:3: bmcs.gpu-0002: the same server as gpu-0001 (line 2)" in result.output
    assert f"{path}:5: bmcs.gpu-0004: the same server as gpu-0003 (line 4)" in result.output
    assert f"{path}:7: bmcs.gpu-0006: the same server as gpu-0003 (line 4)" in result.output
    assert "gpu-0005" not in result.output


def test_plain_http_is_taken_for_loopback_and_elsewhere_only_by_name(tmp_path: Path, cli: Callable) -> None:
    path = document(tmp_path, {"gpu-0001": "http://127.0.0.1:8000", "gpu-0002": "http://10.2.0.12"})
    result = cli("power", "status", "gpu-0001", "--bmcs", str(path))
    assert result.exit_code == 2 and "bmcs.gpu-0002.url: http:// sends the BMC login in clear text" in result.output
    assert "gpu-0001" not in result.output
    named = document(tmp_path, {"gpu-0002": "http://10.2.0.12"}, allow_plain_http=True)
    assert "clear text" not in cli("power", "status", "gpu-0003", "--bmcs", str(named)).output  # not for the doc


# --- the on-prem power-save provider in front of the same four BMCs -------------------------------------------

def _provider(tmp_path: Path, bmcs: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[PowerSaveConfig,
                                                                                               BmcProvider]:
    login = tmp_path / "bmc.credentials"
    login.write_text(yaml.safe_dump({"username": "admin", "password": "fleet-secret"}))
    login.chmod(0o600)
    monkeypatch.setenv("CLUSTERFORGE_BMCS", str(document(tmp_path, bmcs)))
    monkeypatch.setenv("CLUSTERFORGE_BMC_CREDENTIALS", str(login))
    monkeypatch.setattr(onprem, "TIMEOUT_S", 3.0)
    monkeypatch.setattr(onprem, "SETTLE_S", 20.0)
    group = NodeGroup(name="gpu", nodes="gpu-[0001-0004]", scaling="best-effort")
    cfg = PowerSaveConfig(cluster="c1", provider="onprem", groups=(group,))
    return cfg, BmcProvider(cfg)


def test_resume_and_suspend_with_hostile_bmcs_mark_only_the_hostile_nodes(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with standin("honest") as honest, standin("reset-elsewhere") as liar, standin("endless") as endless, \
            standin("drip", drip_s=0.5) as drip:
        liar.elsewhere = honest.url
        honest.power = liar.power = "Off"
        bmcs = {"gpu-0001": honest.url, "gpu-0002": liar.url, "gpu-0003": endless.url, "gpu-0004": drip.url}
        cfg, provider = _provider(tmp_path, bmcs, monkeypatch)
        slurm = RecordingSlurm()
        done = resume(cfg, provider, slurm, [f"gpu-000{i}" for i in range(1, 5)], [])
        assert sorted(done.launched) == ["gpu-0001"] and honest.power == "On", done.summary()
        assert sorted(slurm.down) == ["gpu-0002", "gpu-0003", "gpu-0004"], slurm.down
        assert "not its own address" in slurm.down["gpu-0002"]
        assert "answer over" in slurm.down["gpu-0003"] and "no whole answer" in slurm.down["gpu-0004"]
        assert resets(honest) == 1  # its own power-on, nothing sent on the liar's behalf
        gone = suspend(BmcProvider(cfg), [f"gpu-000{i}" for i in range(1, 5)])
        # every server named is asked once (its power-off reads it first); only the honest one had power to cut
        assert len(gone) == 4 and honest.power == "Off" and resets(honest) == 2
        assert liar.power == "Off" and resets(liar) == 0  # the liar's reset went nowhere


def resets(bmc: StandIn) -> int:
    return sum(1 for method, path, _ in bmc.requests if method == "POST" and path.endswith("ComputerSystem.Reset"))


def test_the_stated_bounds_are_the_providers_and_within_slurmctlds_resume_timeout() -> None:
    from clusterforge.model.slurm import POWER_UP_TIMEOUT_S
    from tests.conftest import ROOT

    assert onprem.SUSPEND_BOUND_S < onprem.RESUME_BOUND_S < POWER_UP_TIMEOUT_S
    for page in ("docs/bare-metal.md", "docs/security.md"):
        assert f"within {onprem.RESUME_BOUND_S} s" in " ".join((ROOT / page).read_text().split()), page


def test_a_read_its_socket_timeout_ends_before_the_watchdog_does_is_still_the_deadlines(monkeypatch) -> None:
    """The socket's own read timeout is what is left of the exchange's deadline, and on a loaded machine it can end
    the read before the watchdog's thread shuts the socket (a CI run's silent BMC read "timed out" instead of "no
    answer within 2 s"). Past the deadline either one is the deadline's: the watchdog is held off here, so the
    socket's timeout ends the read, against a BMC that accepts and never answers."""
    import socket

    import requests

    from clusterforge.bmc import transport
    from clusterforge.bmc.interface import BmcFailure

    monkeypatch.setattr(transport.WATCHDOG, "guard", lambda exchange: None)  # the watchdog's thread not yet run
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # the connection completes in the backlog, and nothing ever answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/redfish/v1/"
        adapter = transport.adapter_class()(max_retries=0)
        session = requests.Session()
        session.mount("http://", adapter)
        transport.begin_exchange(adapter, url, 0.5)
        with pytest.raises(BmcFailure, match=r"^no answer within 0.5 s$"):
            session.get(url)
