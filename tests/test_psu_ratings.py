"""PSU ratings: every server's N PSUs carry its maximum draw, and PWR-003 counts the PSUs a feed loss leaves in watts.

Dell PowerEdge XE9680: six 2,800 W PSUs, 5+1 or 3+3 fault tolerant redundancy. An 11.5 kW MI300X build needs
⌈11.5 / 2.8⌉ = 5 of them, so the 3 that an A/B feed loss leaves (8,400 W) run it power-braked.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from clusterforge.catalog import Server
from clusterforge.core.errors import ClusterforgeError
from clusterforge.target_kernel import load_catalog
from tests.policies.builders import evaluate_data, onprem, rack


def servers() -> list[tuple[str, Server]]:
    return [(key, entry) for key, entry in load_catalog().items() if isinstance(entry, Server)]


@pytest.mark.parametrize(("key", "server"), servers(), ids=[key for key, _ in servers()])
def test_every_server_psus_carry_its_maximum(key: str, server: Server) -> None:
    """N × rating ≥ maximum draw, with the rating recorded and sourced for every built-in server."""
    psus = server.psus
    assert psus.watts is not None, f"{key}: no PSU rating (psus.watts)"
    assert "psus" in server.sources and "W" in server.sources["psus"], f"{key}: the rating has no source"
    assert psus.required * psus.watts >= round(server.max_power_kw * 1000), key
    assert psus.required >= math.ceil(round(server.max_power_kw * 1000) / psus.watts), key


@pytest.mark.parametrize(("key", "watts", "redundancy"), [
    ("dgx-h100", 3300, "4+2"), ("dgx-b200", 3300, "5+1"), ("hgx-h100-8gpu", 2800, "4+2"),
    ("mi300x-8gpu", 2800, "5+1"), ("mi325x-8gpu", 3000, "5+1"), ("mi355x-8gpu", 3000, "5+1"),
    ("gb300-nvl72", 5500, "26+22"), ("cpu-1u", 1100, "1+1"),
])
def test_psu_ratings_and_derived_counts(key: str, watts: int, redundancy: str) -> None:
    psus = load_catalog().of(key, Server).psus
    assert (psus.watts, psus.redundancy) == (watts, redundancy)


def pwr003(hardware: str, declared: float | None = None) -> list[str]:
    pool = {"name": "gpu", "hardware": hardware, "count": 2, "partition": "train"}
    if declared is not None:
        pool["max_power_kw"] = declared
    verdict = evaluate_data(onprem([rack(count=2)], pools=[pool]))
    return [f.message for f in verdict.findings if f.id == "PWR-003"]


@pytest.mark.parametrize("hardware", ["mi300x-8gpu", "mi325x-8gpu", "mi355x-8gpu", "hgx-h100-8gpu"])
def test_pwr003_sees_the_psus_a_feed_loss_leaves_cannot_carry_the_server(hardware: str) -> None:
    assert pwr003(hardware), f"{hardware}: 3 PSUs a side pass PWR-003"


def test_pwr003_says_the_watts() -> None:
    [message] = pwr003("mi300x-8gpu")
    assert "3 × 2,800 W = 8,400 W" in message and "11.5 kW" in message


def test_pwr003_counts_a_declared_draw_above_the_nameplate() -> None:
    # one 1,100 W PSU a side carries the 1.1 kW nameplate but not the 1.2 kW the pool declares
    assert not pwr003("cpu-1u")
    assert pwr003("cpu-1u", 1.2)


SITE = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  site-gpu:
    kind: server
    description: a site server
    max_power_kw: 11.5
    psus: {PSUS}
    u_height: 6
    weight_kg: 100
    depth_mm: 900
    max_inlet_c: 30
    sources: {max_power_kw: spec, psus: spec, u_height: spec, weight_kg: spec, depth_mm: spec, max_inlet_c: spec}
"""


def site_catalog(tmp_path: Path, psus: str) -> Path:
    path = tmp_path / "site.yaml"
    path.write_text(SITE.replace("{PSUS}", psus))
    return path


@pytest.mark.parametrize(("psus", "redundancy"), [
    ("{count: 6, watts: 2800}", "5+1"),               # derived
    ("{count: 6, required: 5, watts: 2800}", "5+1"),  # stated and enough
    ("{count: 6, required: 3}", "3+3"),               # no rating: taken as stated
])
def test_site_catalog_psus(tmp_path: Path, psus: str, redundancy: str) -> None:
    assert load_catalog([site_catalog(tmp_path, psus)]).of("site-gpu", Server).psus.redundancy == redundancy


@pytest.mark.parametrize(("psus", "message"), [
    ("{count: 6, required: 3, watts: 2800}", "3 required x 2,800 W = 8,400 W cannot carry max_power_kw 11.5 kW"),
    ("{count: 4, watts: 2000}", "required PSUs (6) exceed the PSU count (4)"),
])
def test_site_catalog_psus_that_cannot_carry_the_maximum_are_refused(tmp_path: Path, psus: str, message: str) -> None:
    with pytest.raises(ClusterforgeError) as exc:
        load_catalog([site_catalog(tmp_path, psus)])
    assert message in str(exc.value)


def test_cli_refuses_such_a_site_catalog_with_exit_2(tmp_path: Path) -> None:
    path = site_catalog(tmp_path, "{count: 6, required: 3, watts: 2800}")
    blueprint = Path(__file__).parent.parent / "examples" / "onprem-dgx-h100.yaml"
    run = subprocess.run([sys.executable, "-m", "clusterforge", "check", str(blueprint), "--catalog", str(path)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"{path}:" in run.stdout + run.stderr and "cannot carry" in run.stdout + run.stderr
    assert "Traceback" not in run.stderr
