"""The cost estimate of the two reference examples, every figure checked against arithmetic written out here
(published prices × quantities), not against the tool's own output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from clusterforge.cost import CostEstimate, CostLine, estimate_cost
from clusterforge.pipeline.analysis import analyze, read_policy
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES

AWS = EXAMPLES / "aws-p5.yaml"
ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"


def estimate(path: Path, *catalogs: Path) -> CostEstimate:
    from clusterforge.pipeline.analysis import PolicyInputs

    policy = read_policy(PolicyInputs(tuple(catalogs)))
    result = analyze(path, policy)
    return estimate_cost(result.cluster, result.plan, policy.catalog)


def line(found: CostEstimate, starts: str) -> CostLine:
    [match] = [x for x in found.lines if x.item.startswith(starts)]
    return match


def written(tmp_path: Path, data: dict, name: str = "bp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# ---- the AWS example: 64 p5.48xlarge on a Capacity Block, the controller the stack adds, FSx PERSISTENT_2 ----

def test_aws_example_every_figure() -> None:
    found = estimate(AWS)
    gpu = line(found, "p5.48xlarge capacity-block, pool gpu")
    assert gpu.quantity == 64 * 730 and gpu.unit == "instance-hour" and gpu.period == "month"
    assert gpu.unit_usd == 39.33
    assert gpu.total_usd == pytest.approx(64 * 730 * 39.33)  # 1,837,497.60
    controller = line(found, "m7i.4xlarge on-demand, pool controller")
    assert controller.total_usd == pytest.approx(1 * 730 * 0.8064)  # 588.672
    fsx = line(found, "FSx for Lustre PERSISTENT_2 SSD 250 MB/s/TiB")
    assert (fsx.quantity, fsx.unit, fsx.unit_usd) == (50400, "GB-month", 0.21)
    assert fsx.total_usd == pytest.approx(50400 * 0.21)  # 10,584
    assert len(found.lines) == 3
    monthly = 64 * 730 * 39.33 + 730 * 0.8064 + 50400 * 0.21  # 1,848,670.272
    assert found.monthly_usd == pytest.approx(monthly)
    assert found.capex_usd == 0
    assert found.gpus == 64 * 8
    assert found.usd_per_gpu_hour == pytest.approx(monthly / (512 * 730))  # 4.9461


def test_the_p5_on_demand_price_is_the_published_figure_with_its_date(tmp_path: Path, aws_data: dict) -> None:
    quoted = load_catalog().prices.instance_hour("p5.48xlarge", "on-demand", "us-east-1")
    assert quoted is not None
    assert (quoted.price.usd, quoted.price.date, quoted.price.estimate) == (55.04, "2026-09-25", False)
    aws_data["cost"] = {"purchase": "on-demand"}
    gpu = line(estimate(written(tmp_path, aws_data)), "p5.48xlarge on-demand, pool gpu")
    assert gpu.total_usd == pytest.approx(64 * 55.04 * 730)  # 2,571,468.80
    assert gpu.date == "2026-09-25" and "AWS EC2 price feed" in gpu.source
    block = load_catalog().prices.instance_hour("p5.48xlarge", "capacity-block", "us-east-1")
    assert block is not None and (block.price.usd, block.price.date) == (39.33, "2025")


@pytest.mark.parametrize(("purchase", "rate"), [("on-demand", 55.04), ("reservation", 55.04),
                                                 ("capacity-block", 39.33)])
def test_a_pool_purchase_option_sets_its_rate(tmp_path: Path, aws_data: dict, purchase: str, rate: float) -> None:
    aws_data["pools"][0]["purchase"] = purchase
    aws_data["cost"] = {"purchase": "on-demand"}  # the pool's own option wins over the blueprint's
    gpu = line(estimate(written(tmp_path, aws_data)), f"p5.48xlarge {purchase}, pool gpu")
    assert gpu.total_usd == pytest.approx(64 * 730 * rate)


def test_a_savings_plan_without_a_published_rate_is_unpriced_not_a_guessed_discount(tmp_path: Path,
                                                                                    aws_data: dict) -> None:
    """AWS prices a Savings Plan per term and payment option; the catalog states none, so the pool is named
    unpriced instead of priced at a flat fraction of on demand."""
    aws_data["pools"][0]["purchase"] = "savings-plan"
    found = estimate(written(tmp_path, aws_data))
    gpu = line(found, "p5.48xlarge savings-plan, pool gpu")
    assert not gpu.priced and found.unpriced == ("p5.48xlarge savings-plan x 64 (pool gpu)",)
    assert found.monthly_usd == pytest.approx(730 * 0.8064 + 50400 * 0.21)


def test_without_a_reservation_the_pool_runs_on_demand(tmp_path: Path, aws_data: dict) -> None:
    aws_data["aws"].pop("capacity")
    found = estimate(written(tmp_path, aws_data))
    assert line(found, "p5.48xlarge on-demand, pool gpu").total_usd == pytest.approx(64 * 730 * 55.04)


def test_an_odcr_is_priced_at_the_on_demand_rate_and_the_controller_stays_on_demand(tmp_path: Path,
                                                                                      aws_data: dict) -> None:
    aws_data["aws"]["capacity"] = {"type": "odcr", "reservation_id": "cr-0123456789abcdef0"}
    found = estimate(written(tmp_path, aws_data))
    assert line(found, "p5.48xlarge reservation, pool gpu").total_usd == pytest.approx(64 * 730 * 55.04)
    assert line(found, "m7i.4xlarge on-demand, pool controller").total_usd == pytest.approx(730 * 0.8064)


def test_an_unpriced_instance_is_a_line_of_its_own_named_and_left_out_of_the_totals(tmp_path: Path,
                                                                                     aws_data: dict) -> None:
    aws_data["pools"][0]["hardware"] = "p4d.24xlarge"
    aws_data["aws"].pop("capacity")
    found = estimate(written(tmp_path, aws_data))
    gpu = line(found, "p4d.24xlarge on-demand, pool gpu")
    assert not gpu.priced and "no price in the catalog" in gpu.source
    assert found.unpriced == ("p4d.24xlarge on-demand x 64 (pool gpu)",) and not found.complete
    assert found.monthly_usd == pytest.approx(730 * 0.8064 + 50400 * 0.21)  # the priced lines only


# ---- the on-prem example: 16 DGX H100 in 6 racks with rear doors, a two-tier QM9700 fabric, site PUE 1.3 ----

def test_onprem_example_every_figure() -> None:
    found = estimate(ONPREM)
    servers = line(found, "dgx-h100")
    assert (servers.quantity, servers.unit, servers.period) == (16, "server", "once")
    assert servers.total_usd == 16 * 270_000
    # 16 nodes x 8 rails = 128 endpoints; 64-port leaves take 32 down: 128 / 32 = 4 leaves; 4 x 32 up / 64 = 2 spines
    assert line(found, "qm9700 leaf switch").total_usd == 4 * 30_000
    assert line(found, "qm9700 spine switch").total_usd == 2 * 30_000
    links = line(found, "400G fabric link")
    assert links.quantity == 128 + 4 * 32  # node-leaf + leaf-spine cables
    assert links.total_usd == 256 * 1_800
    assert line(found, "rack cabinet").total_usd == 6 * 2_500
    assert line(found, "rack PDU").total_usd == 12 * 3_000  # two feeds per rack
    assert line(found, "rear-door heat exchanger").total_usd == 6 * 25_000
    capex = 16 * 270_000 + 6 * 30_000 + 256 * 1_800 + 6 * 2_500 + 12 * 3_000 + 6 * 25_000  # 5,161,800
    assert found.capex_usd == capex
    it_kw = 16 * 10.2 + 6 * 1.72  # nameplate DGX H100 plus the six switches: 173.52 kW, PWR-007's figure
    power = line(found, "power: IT 173.5 kW x PUE 1.3")
    assert power.quantity == pytest.approx(it_kw * 1.3 * 730)
    assert power.total_usd == pytest.approx(it_kw * 1.3 * 0.10 * 730)  # 16,467.05
    assert "catalog default $0.1/kWh" in power.item and "NAG" in power.source
    monthly = it_kw * 1.3 * 0.10 * 730 + capex / (12 * 4)  # 124,004.55
    assert found.monthly_usd == pytest.approx(monthly)
    assert found.gpus == 128
    assert found.usd_per_gpu_hour == pytest.approx(monthly / (128 * 730))  # 1.3271


def test_every_onprem_line_states_a_source_or_is_an_estimate() -> None:
    for found in estimate(ONPREM).lines:
        assert found.source and (found.estimate or found.date), found
        if found.category != "power":
            assert found.estimate, f"{found.item}: no list price is published, so it must say estimate"


def test_the_site_tariff_and_amortisation_replace_the_defaults(tmp_path: Path, onprem_data: dict) -> None:
    onprem_data["site"]["energy_usd_per_kwh"] = 0.2
    onprem_data["site"].pop("pue")
    onprem_data["cost"] = {"amortise_years": 5}
    found = estimate(written(tmp_path, onprem_data))
    it_kw = 16 * 10.2 + 6 * 1.72
    power = line(found, "power:")
    assert power.total_usd == pytest.approx(it_kw * 1.6 * 0.2 * 730)  # catalog PUE 1.6, site $0.20/kWh
    assert "catalog default PUE 1.6" in power.item and "$0.2/kWh: site dc1" in power.source
    assert found.monthly_usd == pytest.approx(it_kw * 1.6 * 0.2 * 730 + 5_161_800 / (12 * 5))


def test_the_power_line_uses_pwr007s_it_load() -> None:
    from clusterforge.plan.it_load import site_it_kw

    policy = read_policy()
    result = analyze(ONPREM, policy)
    it_kw = site_it_kw(result.cluster, result.plan, policy.catalog)
    assert it_kw == pytest.approx(16 * 10.2 + 6 * 1.72)
    assert f"IT {it_kw:.1f} kW" in line(estimate(ONPREM), "power:").item


# ---- prices overridden by a site catalog ----

NEGOTIATED = """apiVersion: clusterforge/v1
kind: Catalog
prices:
  hardware:
    dgx-h100: {usd: 250000, source: "PO 4711 with our reseller", date: 2026-10-01}
  instances:
    p5.48xlarge:
      capacity-block: {usd: 30.0, source: "EDP rate card", date: 2026-10-01}
"""


def test_a_catalog_override_changes_the_figure_and_names_the_file(tmp_path: Path) -> None:
    prices = tmp_path / "negotiated.yaml"
    prices.write_text(NEGOTIATED)
    servers = line(estimate(ONPREM, prices), "dgx-h100")
    assert servers.total_usd == 16 * 250_000
    assert servers.source.startswith(str(prices)) and "PO 4711" in servers.source
    assert servers.date == "2026-10-01" and not servers.estimate
    gpu = line(estimate(AWS, prices), "p5.48xlarge capacity-block")
    assert gpu.total_usd == pytest.approx(64 * 730 * 30.0) and str(prices) in gpu.source
    assert line(estimate(ONPREM), "dgx-h100").total_usd == 16 * 270_000  # the built-in price is untouched


@pytest.mark.parametrize(("body", "line_no", "says"), [
    ("prices:\n  hardware:\n    dgx-h100: {usd: -5, source: x, date: 2026-01-01}\n", 5, "prices.hardware.dgx-h100.usd"),
    ("prices:\n  hardware:\n    dgx-h100: {usd: 5, date: 2026-01-01}\n", 5, "source"),
    ("prices:\n  instances:\n    p5.48xlarge:\n      spot: {usd: 5, source: x, date: 2026-01-01}\n", 6, "spot"),
    ("prices:\n  facility:\n    racks: {usd: 5, source: x, date: 2026-01-01}\n", 5, "racks"),
])
def test_a_bad_price_file_is_exit_2_with_its_line(cli, tmp_path: Path, body: str, line_no: int, says: str) -> None:
    bad = tmp_path / "bad-prices.yaml"
    bad.write_text("apiVersion: clusterforge/v1\nkind: Catalog\n" + body)
    result = cli("cost", ONPREM, "--catalog", bad)
    assert result.exit_code == 2
    assert f"bad-prices.yaml:{line_no}:" in result.stderr and says in result.stderr


# ---- the command ----

def test_json_is_the_contract(cli) -> None:
    result = cli("cost", AWS, "-f", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert set(data) == {"currency", "monthly_usd", "capex_usd", "usd_per_gpu_hour", "gpus", "lines",
                         "saved_monthly_usd", "idle_share", "savings", "unpriced", "unpriced_gpus",
                         "usd_per_gpu_hour_withheld"}
    assert (data["unpriced_gpus"], data["usd_per_gpu_hour_withheld"]) == ([], None)  # every GPU priced
    assert (data["savings"], data["saved_monthly_usd"], data["idle_share"]) == ([], 0, None)  # nothing power-saved
    assert data["unpriced"] == []  # every item of the example has a price
    assert data["currency"] == "USD" and data["gpus"] == 512
    assert data["monthly_usd"] == pytest.approx(64 * 730 * 39.33 + 730 * 0.8064 + 50400 * 0.21)
    assert set(data["lines"][0]) == {"item", "quantity", "unit", "unit_usd", "total_usd", "period", "category",
                                     "source", "date", "estimate", "priced", "region"}
    assert {line["region"] for line in data["lines"]} == {"us-east-1"}  # every line priced for the blueprint's


def test_text_lists_each_line_with_source_and_totals(cli) -> None:
    result = cli("cost", ONPREM)
    assert result.exit_code == 0
    out = result.stdout
    assert "16 server x $270,000.00 = $4,320,000.00 once" in out
    assert "SemiAnalysis" in out and "(2023-05)" in out
    assert "capex" in out and "$5,161,800.00" in out and "per GPU-hour" in out


def test_markdown_is_a_table_for_a_pull_request(cli, tmp_path: Path) -> None:
    out = tmp_path / "cost.md"
    result = cli("cost", AWS, "-f", "markdown", "-o", out)
    assert result.exit_code == 0 and result.stdout == ""
    text = out.read_text()
    assert "| Item | Quantity | Unit price | Total | Region | Source | Date |" in text
    assert "p5.48xlarge capacity-block, pool gpu | 46,720 instance-hour" in text
    assert "/month | us-east-1 | aws.amazon.com/ec2/capacityblocks/pricing" in text


def test_output_may_not_overwrite_the_blueprint(cli, tmp_path: Path, aws_data: dict) -> None:
    blueprint = written(tmp_path, aws_data)
    before = blueprint.read_text()
    assert cli("cost", blueprint, "-o", blueprint).exit_code == 2
    assert blueprint.read_text() == before


def test_an_invalid_blueprint_is_exit_2(cli, tmp_path: Path, aws_data: dict) -> None:
    aws_data["pools"][0]["purchase"] = "spot"
    result = cli("cost", written(tmp_path, aws_data))
    assert result.exit_code == 2 and "pools[0].purchase" in result.stderr


def test_the_price_file_in_docs_cost_md_loads_and_takes_effect(tmp_path: Path) -> None:
    import re

    doc = (Path(__file__).resolve().parent.parent / "docs" / "cost.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.S) if "kind: Catalog" in b]
    prices = tmp_path / "negotiated.yaml"
    prices.write_text(block)
    assert line(estimate(ONPREM, prices), "dgx-h100").total_usd == 16 * 250_000
    assert line(estimate(AWS, prices), "p5.48xlarge capacity-block").total_usd == pytest.approx(64 * 730 * 31.5)


def test_text_fits_the_width_it_is_given() -> None:
    from clusterforge.formats.cost import text

    found = estimate(ONPREM)
    wide = text("vision-h100", found, 4, 300).splitlines()
    assert any(row.startswith("  dgx-h100") and row.endswith("$4,320,000.00 once") for row in wide)
    narrow = text("vision-h100", found, 4, 60).splitlines()
    sources = [row for row in narrow if row.startswith("      ") and "x $" not in row]
    assert sources and all(len(row) <= 60 for row in sources)
    assert "      16 server x $270,000.00 = $4,320,000.00 once" in narrow
