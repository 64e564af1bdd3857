"""Nothing is priced $0 in silence: an item the catalog has no price for (the DGX B200, which NVIDIA lists no
price for) is named in every cost output (text, JSON, Markdown), counted in the summary, and left out of every
total, which then says so. Figures are written out here from the catalog's prices, not read from the tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusterforge.cost import CostEstimate, estimate_cost
from clusterforge.pipeline.analysis import PolicyInputs, analyze, read_policy
from tests.conftest import EXAMPLES

B200 = EXAMPLES / "onprem-dgx-b200-su.yaml"
UNPRICED = ("dgx-b200 server x 32 (pool su1)", "cpu-1u server x 2 (pool ctl)", "cpu-1u server x 1 (pool login)")
# 12 QM9700 (8 leaves, 4 spines), 512 NDR links, 9 racks with 34 feeds, 8 rear doors: all priced
PRICED_CAPEX = 12 * 30_000 + 512 * 1_800 + 9 * 2_500 + 34 * 3_000 + 8 * 25_000  # 1,606,100
B200_PRICE = """apiVersion: clusterforge/v1
kind: Catalog
prices:
  hardware:
    dgx-b200: {usd: 515000, source: "quote 12 from our reseller", date: 2026-10-01}
    cpu-1u: {usd: 12000, source: "quote 12 from our reseller", date: 2026-10-01}
"""


def estimate(path: Path, *catalogs: Path) -> CostEstimate:
    policy = read_policy(PolicyInputs(tuple(catalogs)))
    result = analyze(path, policy)
    return estimate_cost(result.cluster, result.plan, policy.catalog)


def test_the_b200_servers_are_named_with_their_count_and_left_out_of_every_total() -> None:
    found = estimate(B200)
    assert found.unpriced == UNPRICED and not found.complete
    assert found.capex_usd == PRICED_CAPEX  # not 32 x $0 added in: the servers are not in it at all
    # every GPU is in the unpriced pool: no GPU is left to divide by, so there is no $/GPU-hour, and it says why
    assert (found.gpus, found.usd_per_gpu_hour, found.per_gpu_hour.left_out) == (0, None, (("su1", 256),))
    assert found.per_gpu_hour.withheld == "withheld: no GPU has a price (256 GPUs of pool su1 unpriced)"
    [servers] = [line for line in found.lines if line.item.startswith("dgx-b200")]
    assert not servers.priced and servers.quantity == 32


def test_a_price_for_them_completes_the_estimate(tmp_path: Path) -> None:
    prices = tmp_path / "b200-price.yaml"
    prices.write_text(B200_PRICE)
    found = estimate(B200, prices)
    assert found.unpriced == () and found.complete
    assert found.capex_usd == PRICED_CAPEX + 32 * 515_000 + 3 * 12_000


def test_text_names_each_unpriced_item_and_every_total_says_it_excludes_them(cli) -> None:
    result = cli("cost", B200)
    assert result.exit_code == 0
    out = result.stdout
    rows = {row.split("  ", 1)[0]: row for row in out.splitlines() if row and not row.startswith(" ")}
    assert "excluding 3 unpriced items" in rows["monthly"]
    assert "excluding 3 unpriced items" in rows["capex"] and f"${PRICED_CAPEX:,.2f}" in rows["capex"]
    assert rows["per GPU-hour"].split("  ", 1)[1].strip() == ("withheld: no GPU has a price (256 GPUs of pool su1 "
                                                               "unpriced)")
    assert all(name in rows["unpriced"] for name in UNPRICED) and "3 items with no price" in rows["unpriced"]
    assert any(row.split() == ["32", "server", "x", "no", "price", "=", "not", "in", "the", "totals"]
               for row in out.splitlines())
    assert "$0.00" not in out  # no unpriced item shows a figure


def test_json_names_them_and_gives_their_lines_no_figure(cli) -> None:
    result = cli("cost", B200, "-f", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["unpriced"] == list(UNPRICED)
    assert data["capex_usd"] == PRICED_CAPEX
    [servers] = [line for line in data["lines"] if line["item"].startswith("dgx-b200")]
    assert (servers["priced"], servers["unit_usd"], servers["total_usd"]) == (False, None, None)
    summed = sum(line["total_usd"] for line in data["lines"] if line["priced"] and line["period"] == "once")
    assert summed == pytest.approx(data["capex_usd"])


def test_markdown_names_them_in_the_table_and_the_summary(cli) -> None:
    result = cli("cost", B200, "-f", "markdown")
    assert result.exit_code == 0
    text = result.stdout
    assert "| 32 server | no price | not in the totals |" in text
    [unpriced] = [row for row in text.splitlines() if row.startswith("- **unpriced**")]
    assert all(name in unpriced for name in UNPRICED)
    assert "excluding 3 unpriced items" in text and "$0.00" not in text


def test_a_fully_priced_estimate_says_nothing_of_unpriced_items(cli) -> None:
    result = cli("cost", EXAMPLES / "onprem-dgx-h100.yaml")
    assert result.exit_code == 0
    assert "unpriced" not in result.stdout and "not in the totals" not in result.stdout
