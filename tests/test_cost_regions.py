"""AWS prices each region on its own: a blueprint is priced from the table of its `aws.region`, and where the
table has no figure for that region the pool is named unpriced (text, JSON, Markdown, COST-003), never priced at
us-east-1's. Figures are written out here from the price table's cited entries, not read from the tool."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from clusterforge.catalog.price_book import PriceBook
from clusterforge.catalog.prices import PriceTable
from tests.test_cost import estimate, line

ZONES = {"us-east-1": "use1-az4", "us-east-2": "use2-az1", "us-west-1": "usw1-az1", "eu-north-1": "eun1-az1"}


def in_region(tmp_path: Path, data: dict, region: str, hardware: str = "p5.48xlarge",
              purchase: str | None = None) -> Path:
    """The aws-p5 example moved to `region` (its zone with it), its GPU pool of `hardware` bought as `purchase`."""
    data = copy.deepcopy(data)
    data["aws"]["region"], data["aws"]["availability_zones"] = region, [ZONES[region]]
    data["pools"][0]["hardware"] = hardware
    if purchase is not None:
        data["aws"].pop("capacity")
        data["pools"][0]["purchase"] = purchase
    path = tmp_path / f"{region}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_us_east_1_keeps_its_exact_figures_and_says_its_region(tmp_path: Path, aws_data: dict) -> None:
    found = estimate(in_region(tmp_path, aws_data, "us-east-1"))
    gpu = line(found, "p5.48xlarge capacity-block, pool gpu")
    assert (gpu.unit_usd, gpu.date, gpu.region) == (39.33, "2025", "us-east-1")
    assert line(found, "m7i.4xlarge").unit_usd == 0.8064 and line(found, "FSx").unit_usd == 0.21
    assert found.monthly_usd == pytest.approx(64 * 730 * 39.33 + 730 * 0.8064 + 50400 * 0.21)
    assert found.complete


def test_a_region_in_the_table_gets_its_own_figure(tmp_path: Path, aws_data: dict) -> None:
    """us-west-1 lists p5en.48xlarge at $79.12, not us-east-1's $63.296; us-east-2's Capacity Block is its own
    row of AWS's table (US East (Ohio)), the same $39.33 with its own source and date."""
    west = line(estimate(in_region(tmp_path, aws_data, "us-west-1", "p5en.48xlarge", "on-demand")),
                "p5en.48xlarge on-demand, pool gpu")
    assert (west.unit_usd, west.region, west.date) == (79.12, "us-west-1", "2026-08-06")
    assert west.total_usd == pytest.approx(64 * 730 * 79.12)  # 3,696,486.40
    ohio = line(estimate(in_region(tmp_path, aws_data, "us-east-2")),
                "p5.48xlarge capacity-block, pool gpu")
    assert (ohio.unit_usd, ohio.region, ohio.date) == (39.33, "us-east-2", "2024")
    assert "US East (Ohio)" in ohio.source


def test_a_region_absent_from_the_table_leaves_the_pool_unpriced_and_named(tmp_path: Path, aws_data: dict) -> None:
    found = estimate(in_region(tmp_path, aws_data, "eu-north-1", purchase="on-demand"))
    gpu = line(found, "p5.48xlarge on-demand, pool gpu")
    assert not gpu.priced and gpu.region == "eu-north-1"
    assert gpu.source.startswith("no price in the table for eu-north-1 (p5.48xlarge on-demand is priced for "
                                 "us-east-1 dated 2026-09-25 only")
    assert "p5.48xlarge on-demand in eu-north-1 x 64 (pool gpu)" in found.unpriced
    # the controller and FSx have us-east-1 figures only: unpriced too, never carried over
    assert not line(found, "m7i.4xlarge").priced and not line(found, "FSx").priced
    assert found.monthly_usd == 0 and len(found.unpriced) == 3


def test_the_unpriced_region_is_named_in_text_json_and_markdown(cli, tmp_path: Path, aws_data: dict) -> None:
    path = in_region(tmp_path, aws_data, "eu-north-1", purchase="on-demand")
    name = "p5.48xlarge on-demand in eu-north-1 x 64 (pool gpu)"
    text = cli("cost", path)
    assert text.exit_code == 0
    [unpriced] = [row for row in text.stdout.splitlines() if row.startswith("unpriced")]
    assert name in unpriced and "eu-north-1 prices; no price in the table for eu-north-1" in text.stdout
    data = json.loads(cli("cost", path, "-f", "json").stdout)
    assert name in data["unpriced"]
    [gpu] = [x for x in data["lines"] if x["item"].startswith("p5.48xlarge")]
    assert (gpu["region"], gpu["priced"], gpu["unit_usd"]) == ("eu-north-1", False, None)
    markdown = cli("cost", path, "-f", "markdown").stdout
    [row] = [x for x in markdown.splitlines() if x.startswith("| p5.48xlarge on-demand, pool gpu")]
    assert "| no price | not in the totals | eu-north-1 | no price in the table for eu-north-1" in row
    assert "in eu-north-1 x 64 (pool gpu)" in markdown


def test_cost_003_warns_at_the_pool_and_a_budget_cannot_pass(cli, tmp_path: Path, aws_data: dict) -> None:
    aws_data["budget"] = {"monthly_usd": 100_000_000}
    path = in_region(tmp_path, aws_data, "eu-north-1", purchase="on-demand")
    result = cli("check", path, "-f", "json")
    found = json.loads(result.stdout)["findings"]
    [gpu] = [f for f in found if f["id"] == "COST-003" and "p5.48xlarge" in f["message"]]
    assert gpu["message"].startswith("p5.48xlarge on-demand in eu-north-1 x 64 (pool gpu): no price in the table "
                                     "for eu-north-1 (p5.48xlarge on-demand is priced for us-east-1 dated "
                                     "2026-09-25 only, never carried over to another region)")
    assert result.exit_code == 1 and [f["level"] for f in found if f["id"] == "COST-002"] == ["error"]


SITE = """apiVersion: clusterforge/v1
kind: Catalog
prices:
{body}"""


def test_a_site_rate_for_every_region_or_for_one_region_fills_the_gap(tmp_path: Path, aws_data: dict) -> None:
    path = in_region(tmp_path, aws_data, "eu-north-1", purchase="on-demand")
    regional = tmp_path / "stockholm.yaml"
    regional.write_text(SITE.format(body="  regions:\n    eu-north-1:\n      instances:\n        p5.48xlarge:\n"
                                         "          on-demand: {usd: 60.5, source: quote 7, date: 2026-11-01}\n"))
    gpu = line(estimate(path, regional), "p5.48xlarge on-demand, pool gpu")
    assert (gpu.unit_usd, gpu.region) == (60.5, "eu-north-1") and gpu.source == f"{regional}: quote 7"
    # the same rate at the top level holds in every region, us-east-1's list price included (a later file wins)
    everywhere = tmp_path / "edp.yaml"
    everywhere.write_text(SITE.format(body="  instances:\n    p5.48xlarge:\n"
                                           "      on-demand: {usd: 50.0, source: EDP, date: 2026-11-01}\n"))
    assert line(estimate(path, everywhere), "p5.48xlarge on-demand").unit_usd == 50.0
    east = in_region(tmp_path, yaml.safe_load(path.read_text()), "us-east-1")
    assert line(estimate(east, everywhere), "p5.48xlarge on-demand").unit_usd == 50.0
    # and a regional rate in a file after it wins in its region only
    assert line(estimate(path, everywhere, regional), "p5.48xlarge on-demand").unit_usd == 60.5
    assert line(estimate(east, everywhere, regional), "p5.48xlarge on-demand").unit_usd == 50.0


def test_the_price_book_never_answers_with_another_regions_price() -> None:
    book = PriceBook()
    book.add(PriceTable.model_validate({"regions": {"us-east-1": {"instances": {"p5.48xlarge": {
        "on-demand": {"usd": 55.04, "source": "feed", "date": "2026-09-25"}}}}}}), None)
    assert book.instance_hour("p5.48xlarge", "on-demand", "eu-north-1") is None
    assert book.instance_hour("p5.48xlarge", "on-demand", None) is None  # a target without regions
    assert book.instance_hour("p5.48xlarge", "reservation", "us-east-1") is not None  # an ODCR bills on demand
    [where] = book.instance_regions("p5.48xlarge", "reservation")
    assert where.region == "us-east-1"


def test_a_bad_region_in_a_price_file_is_exit_2_with_its_line(cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad-region.yaml"
    bad.write_text(SITE.format(body="  regions:\n    US-East-1:\n      instances: {}\n"))
    result = cli("cost", Path(__file__).parent.parent / "examples" / "aws-p5.yaml", "--catalog", bad)
    assert result.exit_code == 2 and "bad-region.yaml:5:" in result.stderr and "US-East-1" in result.stderr


def test_the_regional_prices_in_docs_cost_md_take_effect_in_their_region_only(tmp_path: Path,
                                                                             aws_data: dict) -> None:
    import re

    doc = (Path(__file__).resolve().parent.parent / "docs" / "cost.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.S) if "kind: Catalog" in b]
    prices = tmp_path / "negotiated.yaml"
    prices.write_text(block)
    north = estimate(in_region(tmp_path, aws_data, "eu-north-1", purchase="on-demand"), prices)
    assert line(north, "p5.48xlarge on-demand").unit_usd == 60.50 and line(north, "FSx").unit_usd == 0.23
    east = estimate(in_region(tmp_path, aws_data, "us-east-1", purchase="on-demand"), prices)
    assert line(east, "p5.48xlarge on-demand").unit_usd == 55.04  # eu-north-1's rate stays in eu-north-1
    assert line(east, "FSx").unit_usd == 0.2  # the file's PERSISTENT_2/250 for every region
