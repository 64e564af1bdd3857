"""An on-prem pool that SLURM powers down when idle (`max_count`): bought and powered at its ceiling, what a
budget must hold, with a separate line for the energy its powered-down node-hours save. Every figure is checked
against arithmetic written out here: nodes above count × 730 h × idle share × idle kW × PUE × $/kWh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clusterforge.cost import CostEstimate, estimate_cost
from clusterforge.cost.power_saving import DEFAULT_IDLE_SHARE, idle_draw
from clusterforge.pipeline.analysis import PolicyInputs, analyze, read_policy
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
IT_KW = 16 * 10.2 + 6 * 1.72  # every DGX H100 powered up, and the six switches: PWR-007's figure
CAPEX = 16 * 270_000 + 6 * 30_000 + 256 * 1_800 + 6 * 2_500 + 12 * 3_000 + 6 * 25_000  # 5,161,800
MONTHLY = IT_KW * 1.3 * 0.10 * 730 + CAPEX / 48  # 124,004.55: the example with all 16 always on
IDLE_KW = 0.15 * 10.2  # the catalog's idle_power_fraction of a DGX H100's 10.2 kW: 1.53 kW


def saved_usd(down: int, share: float) -> float:
    return down * 730 * share * IDLE_KW * 1.3 * 0.10


def power_saved(tmp_path: Path, always_on: int, name: str = "bp.yaml", **extra: object) -> Path:
    """The on-prem example with its 16 DGX H100 as a power-saved pool: `always_on` always on, max_count 16."""
    data = yaml.safe_load(ONPREM.read_text())
    data["pools"][0].update(count=always_on, max_count=16)
    data.update(extra)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def estimate(path: Path, idle_share: float | None = None) -> CostEstimate:
    policy = read_policy(PolicyInputs(()))
    result = analyze(path, policy)
    return estimate_cost(result.cluster, result.plan, policy.catalog, idle_share)


def test_every_server_up_to_max_count_is_bought_and_powered(tmp_path: Path) -> None:
    found = estimate(power_saved(tmp_path, 12))
    [servers] = [line for line in found.lines if line.item.startswith("dgx-h100")]
    assert servers.quantity == 16 and servers.total_usd == 16 * 270_000
    assert "all 16 bought (max_count), 12 always on" in servers.item
    assert found.capex_usd == CAPEX and found.monthly_usd == pytest.approx(MONTHLY)
    assert found.gpus == 128


def test_the_saving_is_the_idle_draw_not_drawn(tmp_path: Path) -> None:
    found = estimate(power_saved(tmp_path, 12))
    [saved] = found.savings
    assert (saved.unit, saved.period, saved.category, saved.unit_usd) == ("kWh", "month", "power", 0.10)
    assert saved.quantity == pytest.approx(4 * 730 * 0.5 * IDLE_KW * 1.3)  # 2,903.94 kWh
    assert saved.total_usd == pytest.approx(saved_usd(4, 0.5))  # $290.39
    assert found.saved_monthly_usd == pytest.approx(saved_usd(4, 0.5)) and found.idle_share == 0.5
    assert "4 of 16 dgx-h100 powered down 50 % (default idle share)" in saved.item
    assert "idle 1.53 kW each x PUE 1.3" in saved.item
    assert "idle_power_fraction" in saved.source and "Domain Power Service" in saved.source
    assert "PUE 1.3: site dc1" in saved.source and saved.estimate


def test_twice_the_powered_down_nodes_save_twice_as_much(tmp_path: Path) -> None:
    two = estimate(power_saved(tmp_path, 14, "two.yaml"))
    four = estimate(power_saved(tmp_path, 12, "four.yaml"))
    assert two.saved_monthly_usd == pytest.approx(saved_usd(2, 0.5))
    assert four.saved_monthly_usd == pytest.approx(2 * two.saved_monthly_usd)


@pytest.mark.parametrize("share", [0.0, 0.25, 1.0])
def test_the_saving_follows_the_idle_share_and_the_totals_do_not(tmp_path: Path, share: float) -> None:
    path = power_saved(tmp_path, 12)
    found = estimate(path, share)
    assert found.saved_monthly_usd == pytest.approx(saved_usd(4, share))
    assert "given with --idle-share" in found.savings[0].source and "(default idle share)" not in found.savings[0].item
    default = estimate(path)
    assert (found.monthly_usd, found.capex_usd, found.usd_per_gpu_hour) == (
        default.monthly_usd, default.capex_usd, default.usd_per_gpu_hour)


def test_the_site_tariff_prices_the_saving_as_it_does_the_power_line(tmp_path: Path) -> None:
    site = yaml.safe_load(ONPREM.read_text())["site"] | {"energy_usd_per_kwh": 0.2}
    found = estimate(power_saved(tmp_path, 12, site=site))
    [saved] = found.savings
    assert saved.unit_usd == 0.2 and saved.total_usd == pytest.approx(saved_usd(4, 0.5) * 2)
    assert "$0.2/kWh: site dc1" in saved.source


def test_nothing_is_saved_without_a_power_saved_pool(tmp_path: Path) -> None:
    found = estimate(ONPREM)
    assert found.savings == () and found.saved_monthly_usd == 0 and found.idle_share is None
    assert estimate(power_saved(tmp_path, 16)).savings == ()  # max_count = count: no node is ever powered down


def test_a_sourced_idle_figure_wins_over_the_fraction() -> None:
    catalog = load_catalog()
    rack = idle_draw("gb200-nvl72", catalog.get("gb200-nvl72"), catalog.prices)  # type: ignore[arg-type]
    assert rack is not None and rack.kw == 18 and "DGX_GB200" in rack.how  # 18 trays x 1,000 W, NVIDIA DPS
    dgx = idle_draw("dgx-h100", catalog.get("dgx-h100"), catalog.prices)  # type: ignore[arg-type]
    assert dgx is not None and dgx.kw == pytest.approx(IDLE_KW) and dgx.estimate


def test_a_catalog_idle_figure_above_the_maximum_is_refused(tmp_path: Path) -> None:
    from clusterforge.core.errors import ClusterforgeError

    entry = (yaml.safe_load((Path(__file__).parent.parent / "clusterforge/catalog/data/servers.yaml").read_text())
             ["hardware"]["dgx-h100"] | {"idle_power_kw": 11})
    entry["sources"] = entry["sources"] | {"idle_power_kw": "a reading"}
    site = tmp_path / "site.yaml"
    site.write_text(yaml.safe_dump({"apiVersion": "clusterforge/v1", "kind": "Catalog",
                                    "hardware": {"site-dgx": entry}}))
    with pytest.raises(ClusterforgeError, match=r"idle_power_kw 11 kW exceeds max_power_kw 10\.2 kW"):
        load_catalog([site])


def test_the_budget_still_holds_every_node_powered_up(cli, tmp_path: Path) -> None:
    """COST-001 judges the worst case: a monthly budget the saving would bring the estimate under still fails,
    and a capex budget for the 12 always-on servers fails for the 16 bought (SLM-008 may also refuse the on-prem
    max_count; only the COST findings are read here)."""
    saved = saved_usd(4, 1.0)
    budget = {"monthly_usd": round(MONTHLY - saved / 2, 2), "capex_usd": CAPEX - 4 * 270_000 + 1}
    result = cli("check", power_saved(tmp_path, 12, budget=budget), "-f", "json")
    found = {f["path"]: f for f in json.loads(result.stdout)["findings"] if f["id"] == "COST-001"}
    assert set(found) == {"budget.monthly_usd", "budget.capex_usd"}
    assert f"${MONTHLY:,.2f}/month" in found["budget.monthly_usd"]["message"]
    assert f"${CAPEX:,.2f}" in found["budget.capex_usd"]["message"]
    fits = cli("check", power_saved(tmp_path, 12, "fits.yaml", budget={"monthly_usd": round(MONTHLY + 1)}),
               "-f", "json")
    assert not [f for f in json.loads(fits.stdout)["findings"] if f["id"].startswith("COST")]


def test_json_carries_the_saving_apart_from_the_lines(cli, tmp_path: Path) -> None:
    result = cli("cost", power_saved(tmp_path, 12), "-f", "json", "--idle-share", "0.8")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["idle_share"] == 0.8 and data["saved_monthly_usd"] == pytest.approx(saved_usd(4, 0.8))
    [saved] = data["savings"]
    assert saved["total_usd"] == pytest.approx(saved_usd(4, 0.8)) and saved["unit"] == "kWh"
    assert not [line for line in data["lines"] if line["item"].startswith("power saved")]
    assert data["monthly_usd"] == pytest.approx(MONTHLY)


def test_text_and_markdown_show_the_saving_under_its_own_heading(cli, tmp_path: Path) -> None:
    path = power_saved(tmp_path, 12)
    text = cli("cost", path).stdout
    assert "saved by powering idle nodes down, not subtracted" in text
    assert f"${saved_usd(4, 0.5):,.2f}/month at idle share 50 %, not in monthly" in text
    assert f"monthly       ${MONTHLY:,.2f}/month" in text
    markdown = cli("cost", path, "-f", "markdown").stdout
    assert markdown.count("| Item | Quantity |") == 2 and "**saved**" in markdown


@pytest.mark.parametrize("share", ["-0.1", "1.5", "half"])
def test_an_idle_share_outside_0_to_1_is_exit_2(cli, tmp_path: Path, share: str) -> None:
    result = cli("cost", power_saved(tmp_path, 12), "--idle-share", share)
    assert result.exit_code == 2 and "--idle-share" in result.stderr


def test_the_help_states_the_default_the_code_uses(cli) -> None:
    assert f"Default {DEFAULT_IDLE_SHARE:g}," in " ".join(cli("cost", "--help").stdout.split())


def test_the_worked_example_in_docs_cost_md_shows_what_cost_computes(tmp_path: Path) -> None:
    import re

    doc = (Path(__file__).resolve().parent.parent / "docs" / "cost.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.S) if b.startswith("# vision-burst.yaml")]
    path = tmp_path / "vision-burst.yaml"
    path.write_text(block)
    half, most = estimate(path), estimate(path, 0.7)
    assert half.saved_monthly_usd == pytest.approx(2 * 730 * 0.5 * IDLE_KW * 1.3 * 0.10)
    for figure in (f"**${half.saved_monthly_usd:,.2f}/month**", f"**${most.saved_monthly_usd:,.2f}/month**",
                   f"${half.monthly_usd:,.2f}", f"capex ${half.capex_usd:,.0f}"):
        assert figure in doc, figure
    assert half.monthly_usd == most.monthly_usd
