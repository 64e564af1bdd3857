"""A ratio over a design with unpriced items (the cost per GPU-hour): the priced cost over the priced GPUs, saying
which GPUs it leaves out, or withheld with the reason; never the priced cost over every GPU. One rule
(cost/ratios.py) read by `cost` (text, JSON, Markdown), `cost --diff` and the report's cost panel.

The hybrid example in eu-central-1, where the table prices no p5.48xlarge: its burst pool's 256 GPUs have no
price, so its cost per GPU-hour is the hall's, over the hall's 128 GPUs; divided by all 384 it read $0.4427, a
third of the hall's, as if bursting made every GPU cheaper."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clusterforge.cost import CostEstimate, CostLine, estimate_cost
from clusterforge.cost.ratios import per_gpu_hour
from clusterforge.pipeline.analysis import analyze, read_policy
from tests.conftest import EXAMPLES

HYBRID = EXAMPLES / "hybrid-burst.yaml"  # 16 DGX H100 in the hall (128 GPUs), up to 32 p5.48xlarge (256 GPUs)
BURST = "  - {name: burst, hardware: p5.48xlarge, target: aws, count: 0, max_count: 32, partition: burst}\n"


def estimate(path: Path) -> CostEstimate:
    policy = read_policy()
    result = analyze(path, policy)
    return estimate_cost(result.cluster, result.plan, policy.catalog)


@pytest.fixture
def unpriced_burst(write) -> Path:
    """The hybrid example in eu-central-1 (its own AZ id), where the shipped table has no p5.48xlarge price."""
    text = HYBRID.read_text()
    moved = text.replace("region: us-east-1", "region: eu-central-1").replace("[use1-az4]", "[euc1-az2]")
    assert moved.count("eu") > text.count("eu")
    return write(moved, "hybrid-eu.yaml")


@pytest.fixture
def hall(write) -> Path:
    """The same blueprint without its burst pool: the hall alone."""
    text = HYBRID.read_text()
    alone = text.replace(BURST, "").replace(", {name: burst, pools: [burst]}", "")
    alone = alone[:alone.index("\naws:\n") + 1]
    assert "burst" not in alone.split("pools:", 1)[1]
    return write(alone, "hall.yaml")


def test_the_hybrid_costs_per_gpu_hour_what_its_priced_gpus_cost(unpriced_burst: Path, hall: Path) -> None:
    hybrid, alone = estimate(unpriced_burst), estimate(hall)
    assert hybrid.monthly_usd == pytest.approx(alone.monthly_usd)  # the burst pool adds no figure: it has none
    assert (hybrid.gpus, hybrid.per_gpu_hour.left_out) == (128, (("burst", 256),))
    assert hybrid.usd_per_gpu_hour == pytest.approx(hybrid.monthly_usd / (128 * 730))
    assert hybrid.usd_per_gpu_hour == pytest.approx(alone.usd_per_gpu_hour)  # not cheaper than the hall
    assert hybrid.monthly_usd / (384 * 730) < 0.34 * hybrid.usd_per_gpu_hour  # what dividing by all 384 read
    assert alone.per_gpu_hour.over() == "over 128 GPUs"


def test_priced_the_burst_pool_counts_all_gpus(write) -> None:
    """In us-east-1 every GPU has a price: the figure is the whole monthly cost over all 384."""
    found = estimate(HYBRID)
    assert (found.gpus, found.per_gpu_hour.left_out, found.per_gpu_hour.withheld) == (384, (), "")
    assert found.usd_per_gpu_hour == pytest.approx(found.monthly_usd / (384 * 730))


def test_text_says_over_which_gpus_and_what_else_it_excludes(cli, unpriced_burst: Path) -> None:
    out = cli("cost", unpriced_burst).stdout
    [row] = [line for line in out.splitlines() if line.startswith("per GPU-hour")]
    found = estimate(unpriced_burst)
    assert row.split("  ", 1)[1].strip() == (
        f"${found.monthly_usd / (128 * 730):,.4f} over the 128 priced GPUs (256 GPUs of pool burst unpriced): "
        f"${found.monthly_usd:,.2f} / (128 GPUs x 730 h), excluding 1 other unpriced item")  # the controller
    data = json.loads(cli("cost", unpriced_burst, "-f", "json").stdout)
    assert (data["gpus"], data["unpriced_gpus"], data["usd_per_gpu_hour_withheld"]) == (
        128, [{"pool": "burst", "gpus": 256}], None)
    assert data["usd_per_gpu_hour"] == pytest.approx(data["monthly_usd"] / (128 * 730))
    markdown = cli("cost", unpriced_burst, "-f", "markdown").stdout
    assert "- **per GPU-hour**: $1.3282 over the 128 priced GPUs (256 GPUs of pool burst unpriced): " in markdown


def test_with_no_priced_gpu_the_figure_is_withheld_with_the_reason(cli, write) -> None:
    """The AWS example on a p5e Capacity Block, which the table does not price: its only GPUs have no price, and the
    controller and FSx alone over 512 GPUs would read $0.0299 per GPU-hour."""
    changed = (EXAMPLES / "aws-p5.yaml").read_text().replace("hardware: p5.48xlarge", "hardware: p5e.48xlarge")
    path = write(changed, "p5e.yaml")
    found = estimate(path)
    assert (found.usd_per_gpu_hour, found.gpus) == (None, 0)
    assert found.per_gpu_hour.withheld == "withheld: no GPU has a price (512 GPUs of pool gpu unpriced)"
    out = cli("cost", path).stdout
    assert "per GPU-hour  withheld: no GPU has a price (512 GPUs of pool gpu unpriced)" in out
    data = json.loads(cli("cost", path, "-f", "json").stdout)
    assert data["usd_per_gpu_hour"] is None and data["usd_per_gpu_hour_withheld"].startswith("withheld: no GPU")
    diff = cli("cost", "--diff", EXAMPLES / "aws-p5.yaml", path, "-f", "markdown").stdout
    assert re.search(r"^\| per GPU-hour \| \$4\.9461 \| withheld \| unknown \|$", diff, re.M), diff
    assert "Per GPU-hour after: withheld: no GPU has a price (512 GPUs of pool gpu unpriced)." in diff


def test_the_diff_says_what_each_side_divides_by(cli, unpriced_burst: Path) -> None:
    found = estimate(unpriced_burst)
    body = cli("cost", "--diff", HYBRID, unpriced_burst, "-f", "markdown").stdout
    before = estimate(HYBRID).usd_per_gpu_hour
    assert before is not None and found.usd_per_gpu_hour is not None
    assert f"| per GPU-hour | ${before:,.4f} | at least ${found.usd_per_gpu_hour:,.4f} | unknown |" in body
    assert "Per GPU-hour after: over the 128 priced GPUs (256 GPUs of pool burst unpriced)." in body
    text = cli("cost", "--diff", HYBRID, unpriced_burst).stdout
    assert "per GPU-hour after: over the 128 priced GPUs (256 GPUs of pool burst unpriced)" in text


def test_the_report_panel_reads_the_same_figure(cli, unpriced_burst: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", unpriced_burst, "-o", out).exit_code == 0
    html = re.search(r'<section id="cost">.*?</section>', out.read_text(), re.S)
    assert html is not None
    found = estimate(unpriced_burst)
    assert (f'per GPU-hour<b>${found.monthly_usd / (128 * 730):,.2f}</b><span class="note">over the 128 priced GPUs '
            "(256 GPUs of pool burst unpriced): 128 GPUs x 730 h; excluding 1 other unpriced item</span>"
            ) in html.group(0)


def line(item: str, usd: float | None, pool: str = "") -> CostLine:
    return CostLine(item, "compute", 1, "server", usd or 0.0, usd or 0.0, "month", "test", "", False,
                    "" if usd is not None else f"{item} x 1", pool)


def test_the_rule_leaves_out_only_pools_with_gpus_whose_own_line_has_no_price() -> None:
    lines = (line("a", 100.0, "a"), line("b", None, "b"), line("ctl", None, "ctl"), line("switch", None))
    ratio = per_gpu_hour(730.0 * 8, {"a": 8, "b": 16, "ctl": 0}, lines)
    assert (ratio.usd, ratio.gpus, ratio.left_out, ratio.excluded) == (1.0, 8, (("b", 16),), 2)
    assert ratio.over() == "over the 8 priced GPUs (16 GPUs of pool b unpriced)"
    assert ratio.excluding() == "excluding 2 other unpriced items"
    both = per_gpu_hour(730.0, {"a": 8, "b": 16}, (line("a", None, "a"), line("b", None, "b")))
    assert (both.usd, both.withheld) == (None, "withheld: no GPU has a price (8 GPUs of pool a and 16 of pool b "
                                                "unpriced)")
    none = per_gpu_hour(730.0, {"ctl": 0}, (line("ctl", None, "ctl"),))
    assert (none.usd, none.withheld, none.excluded) == (None, "", 1)  # no GPU at all: nothing to withhold
