"""roles/telemetry's clusterforge-bmc-readings, run as the node's timer runs it, against a stand-in Redfish BMC on
loopback (a small http.server: Power and Thermal, the newer EnvironmentMetrics and ThermalMetrics, basic auth) and
against sushy-tools' emulator (its fake driver serves Thermal, not Power).

Its file must be valid text exposition format (parsed strictly here, and `promtool check metrics` where promtool
is installed), carry the draw split over the rack's feeds (summing to what the BMC read), leave out what failed
with a reason in clusterforge_bmc_read_ok, never print the password, and refuse a credentials file others can read.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "roles" / "telemetry" / "files" / "clusterforge-bmc-readings"
USER, PASSWORD = "root", "s3cret-pa55"
CHASSIS = "/redfish/v1/Chassis/1U"
POWER = {"PowerControl": [{"PowerConsumedWatts": 812.5}]}
THERMAL = {"Temperatures": [{"Name": "CPU1", "PhysicalContext": "CPU", "ReadingCelsius": 61},
                            {"Name": "Inlet 1", "PhysicalContext": "Intake", "ReadingCelsius": 23.5},
                            {"Name": "Inlet 2", "PhysicalContext": "Intake", "ReadingCelsius": 24.0},
                            {"Name": "Broken", "PhysicalContext": "Intake", "ReadingCelsius": None}]}
STANDARD = {"/redfish/v1/Chassis": {"Members": [{"@odata.id": CHASSIS}]}, f"{CHASSIS}/Power": POWER,
            f"{CHASSIS}/Thermal": THERMAL}
NEWER = {"/redfish/v1/Chassis": {"Members": [{"@odata.id": CHASSIS}]},
         f"{CHASSIS}/EnvironmentMetrics": {"PowerWatts": {"Reading": 10210.0}},
         f"{CHASSIS}/ThermalSubsystem/ThermalMetrics": {"TemperatureReadingsCelsius": [
             {"DeviceName": "Intake", "PhysicalContext": "Intake", "Reading": 27.25},
             {"DeviceName": "Exhaust", "PhysicalContext": "Exhaust", "Reading": 45.0}]}}


@contextmanager
def bmc(resources: dict[str, Any], status: int = 200) -> Iterator[tuple[str, list[str]]]:
    """A BMC on loopback answering GETs of `resources` (404 for others) behind basic auth; `status` other than 200
    answers every request with it. Yields its URL and the paths it was asked."""
    asked: list[str] = []
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            if self.headers.get("Authorization") != expected:
                self.send_response(401)
                self.end_headers()
                return
            body = resources.get(self.path)
            code = status if status != 200 else (200 if body is not None else 404)
            data = json.dumps(body if code == 200 else {"error": {"code": "Base.1.0.GeneralError"}}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def credentials(tmp_path: Path) -> Path:
    path = tmp_path / "bmc-credentials"
    path.write_text(f"username={USER}\npassword={PASSWORD}\n")
    path.chmod(0o600)
    return path


def collect(url: str, credentials: Path, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], str]:
    output = out / "clusterforge_bmc.prom"
    result = subprocess.run([sys.executable, str(SCRIPT), "--url", url, "--credentials", str(credentials),
                             "--output", str(output), "--timeout", "5", *extra],
                            capture_output=True, text=True, timeout=60, check=False)
    assert PASSWORD not in result.stdout + result.stderr
    return result, output.read_text() if output.exists() else ""


SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
                    r',?)*)\})? (?P<value>\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a text exposition file, strictly: each line a comment or a well-formed sample."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) clusterforge_bmc_", line), line
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        labels = tuple(sorted(LABEL.findall(match["labels"] or "")))
        out[(match["name"], labels)] = float(match["value"])
    return out


def check_with_promtool(text: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is not None:
        result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                                timeout=60, check=False)
        assert result.returncode == 0, result.stdout + result.stderr


def test_standard_power_and_thermal_split_over_the_racks_feeds(credentials: Path, tmp_path: Path) -> None:
    with bmc(STANDARD) as (url, asked):
        result, text = collect(url, credentials, tmp_path, "--rack", "a01", "--feed", "a01-a", "--feed", "a01-b")
    assert result.returncode == 0, result.stderr
    got = samples(text)
    feeds = {labels: value for (name, labels), value in got.items() if name == "clusterforge_bmc_power_watts"}
    assert feeds == {(("feed", "a01-a"), ("rack", "a01")): 406.25, (("feed", "a01-b"), ("rack", "a01")): 406.25}
    assert sum(feeds.values()) == POWER["PowerControl"][0]["PowerConsumedWatts"]
    assert got[("clusterforge_bmc_inlet_celsius", (("rack", "a01"),))] == 24.0   # the hottest intake, not the CPU
    assert got[("clusterforge_bmc_read_ok", (("rack", "a01"),))] == 1
    assert ("clusterforge_bmc_last_read_timestamp_seconds", ()) in got
    assert asked == ["/redfish/v1/Chassis", f"{CHASSIS}/Power", f"{CHASSIS}/Thermal"]   # three GETs a reading
    check_with_promtool(text)


def test_a_given_chassis_is_read_without_listing_and_no_rack_gives_unlabelled_series(credentials: Path,
                                                                                     tmp_path: Path) -> None:
    with bmc(STANDARD) as (url, asked):
        result, text = collect(url, credentials, tmp_path, "--chassis", "1U")
    assert result.returncode == 0, result.stderr
    got = samples(text)
    assert got[("clusterforge_bmc_power_watts", ())] == 812.5
    assert asked == [f"{CHASSIS}/Power", f"{CHASSIS}/Thermal"]


def test_newer_environment_and_thermal_metrics_where_power_and_thermal_are_gone(credentials: Path,
                                                                                tmp_path: Path) -> None:
    with bmc(NEWER) as (url, _):
        result, text = collect(url, credentials, tmp_path, "--rack", "r7", "--feed", "r7-a1")
    assert result.returncode == 0, result.stderr
    got = samples(text)
    assert got[("clusterforge_bmc_power_watts", (("feed", "r7-a1"), ("rack", "r7")))] == 10210.0
    assert got[("clusterforge_bmc_inlet_celsius", (("rack", "r7"),))] == 27.25
    assert got[("clusterforge_bmc_read_ok", (("rack", "r7"),))] == 1


@pytest.mark.parametrize(("case", "reason"), [("wrong-password", "auth"), ("500", "http"),
                                              ("refused", "unreachable"), ("no-power", "no-reading")])
def test_a_failed_read_is_visible_and_leaves_no_value(case: str, reason: str, credentials: Path,
                                                      tmp_path: Path) -> None:
    resources = {k: v for k, v in STANDARD.items() if not (case == "no-power" and k.endswith("/Power"))}
    if case == "wrong-password":
        credentials.write_text(f"username={USER}\npassword=wrong\n")
    with bmc(resources, 500 if case == "500" else 200) as (url, _):
        if case == "refused":
            url = url.rsplit(":", 1)[0] + ":1"   # nothing listens on port 1 of loopback
        result, text = collect(url, credentials, tmp_path, "--rack", "a01", "--feed", "a01-a")
    assert result.returncode == 1
    got = samples(text)
    assert got[("clusterforge_bmc_read_ok", (("rack", "a01"), ("reason", reason)))] == 0
    assert not any(name == "clusterforge_bmc_power_watts" for name, _ in got)
    if case == "no-power":   # the inlet was still read
        assert got[("clusterforge_bmc_inlet_celsius", (("rack", "a01"),))] == 24.0
    check_with_promtool(text)


def test_a_credentials_file_others_can_read_is_refused(credentials: Path, tmp_path: Path) -> None:
    credentials.chmod(0o644)
    with bmc(STANDARD) as (url, asked):
        result, text = collect(url, credentials, tmp_path)
    assert asked == []   # the BMC is never asked with credentials that leaked
    assert "chmod 600" in result.stderr
    assert samples(text)[("clusterforge_bmc_read_ok", (("reason", "credentials"),))] == 0


def test_tls_is_verified_by_default(credentials: Path, tmp_path: Path) -> None:
    """An https BMC whose certificate no CA vouches for fails with reason tls (the stand-in is plain http on a
    port that speaks no TLS: the handshake fails either way, and never falls back to no verification)."""
    with bmc(STANDARD) as (url, _):
        result, text = collect(url.replace("http://", "https://"), credentials, tmp_path)
    got = samples(text)
    assert got[("clusterforge_bmc_read_ok", (("reason", "tls"),))] == 0, result.stderr


@pytest.mark.parametrize("url", ["https://admin:pw@bmc", "https://bmc/redfish", "ftp://bmc", "https://bmc\nx"])
def test_urls_with_credentials_paths_or_other_schemes_are_refused(url: str, credentials: Path,
                                                                   tmp_path: Path) -> None:
    result, text = collect(url, credentials, tmp_path)
    assert result.returncode == 2 and text == ""


def test_the_output_replaces_the_old_file_in_one_rename(credentials: Path, tmp_path: Path) -> None:
    old = tmp_path / "clusterforge_bmc.prom"
    old.write_text("clusterforge_bmc_power_watts 1\n")
    inode = os.stat(old).st_ino
    with bmc(STANDARD) as (url, _):
        collect(url, credentials, tmp_path)
    assert os.stat(old).st_ino != inode
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".clusterforge_bmc.")] == []


def test_against_sushy_tools_emulator(credentials: Path, tmp_path: Path) -> None:
    """sushy-tools' fake driver serves a chassis's Thermal (intake 25 °C) but no Power: the inlet is read from a
    real Redfish implementation, and the missing draw is reported, not invented."""
    pytest.importorskip("sushy_tools")
    from tests.bmc_emulator import PASSWORD as EMULATOR_PASSWORD
    from tests.bmc_emulator import USER as EMULATOR_USER
    from tests.bmc_emulator import emulator

    credentials.write_text(f"username={EMULATOR_USER}\npassword={EMULATOR_PASSWORD}\n")
    with emulator(tmp_path, systems=1) as emu:
        result, text = collect(emu.url, credentials, tmp_path, "--rack", "a01", "--feed", "a01-a")
    got = samples(text)
    assert got[("clusterforge_bmc_inlet_celsius", (("rack", "a01"),))] == 25.0, result.stderr
    assert got[("clusterforge_bmc_read_ok", (("rack", "a01"), ("reason", "no-reading")))] == 0
