"""The report's cost panel: monthly, capex and $/GPU-hour against arithmetic written out here from the catalog's
prices, a breakdown by category, the priced lines grouped by pool or item (never by node), and a page that still
renders in headless Chromium without console errors."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import EXAMPLES
from tests.test_day2_diff import edited
from tests.test_report import browser

AWS = EXAMPLES / "aws-p5.yaml"
ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
POOL = "count: 64, role: compute, partition: train"


def panel(cli, blueprint: Path, tmp_path: Path) -> str:
    out = tmp_path / "report.html"
    result = cli("report", blueprint, "-o", out)
    assert result.exit_code == 0, result.output
    found = re.search(r'<section id="cost">.*?</section>', out.read_text(), re.S)
    assert found, "no cost panel"
    return found.group(0)


def aws(count: int) -> str:
    return edited(AWS, (POOL, POOL.replace("count: 64", f"count: {count}").replace(
        "partition", "purchase: on-demand, partition")))


def test_the_aws_panel_shows_the_monthly_cost_and_the_gpu_hour(cli, write, tmp_path: Path) -> None:
    html = panel(cli, write(aws(64)), tmp_path)
    monthly = 64 * 55.04 * 730 + 0.8064 * 730 + 50_400 * 0.21  # p5 on demand, the controller, FSx: 2,582,641.47
    assert f"monthly<b>${monthly:,.2f}</b>" in html  # $2,582,641.47
    assert f"per GPU-hour<b>${monthly / (512 * 730):,.2f}</b>" in html  # $6.91
    assert "capex<b>$0.00</b>" in html
    assert "$2,571,468.80/month" in html  # the pool's line: 46,720 instance-hours x $55.04
    assert "46,720 instance-hour" in html and "$55.04" in html
    compute = 64 * 55.04 * 730 + 0.8064 * 730  # the pool and the controller: 2,572,057.47, 99.59% of the month
    assert f"<span>compute</span><span>${compute:,.2f} · {compute / monthly * 100:.0f}%</span>" in html


def test_the_onprem_panel_shows_the_capex_and_its_breakdown(cli, tmp_path: Path) -> None:
    html = panel(cli, ONPREM, tmp_path)
    servers, switches, links = 16 * 270_000, 6 * 30_000, 256 * 1_800
    facility = 6 * 2_500 + 12 * 3_000 + 6 * 25_000  # cabinets, PDUs (one per feed), rear-door heat exchangers
    capex = servers + switches + links + facility  # 5,161,800
    assert f"capex<b>${capex:,.2f}</b>" in html
    assert "once (capex)" in html and "per month" in html
    assert re.search(rf"<span>compute</span><span>\${servers:,.2f} · {servers / capex * 100:.0f}%</span>", html)
    assert re.search(rf"<span>network</span><span>\${switches + links:,.2f} · ", html)
    assert re.search(rf"<span>facility</span><span>\${facility:,.2f} · ", html)
    assert html.count('class="estimate"') >= 8  # every on-prem line is an estimate: marked
    assert "$4,320,000.00 once" in html  # 16 servers x $270,000


def test_a_100k_gpu_cluster_has_one_line_per_pool(cli, write, tmp_path: Path) -> None:
    html = panel(cli, write(aws(12_500)), tmp_path)  # 12,500 x 8 = 100,000 GPUs
    assert html.count("<tr>") == 1 + 3  # the header, the p5 pool, the controller, FSx
    assert "100,000 GPUs" in html
    monthly = 12_500 * 55.04 * 730 + 0.8064 * 730 + 50_400 * 0.21
    assert f"monthly<b>${monthly:,.2f}</b>" in html  # $502,241,172.67


@browser
def test_the_panel_renders_in_headless_chromium(cli, tmp_path: Path) -> None:
    from clusterforge.report.browser import run

    out = tmp_path / "report.html"
    assert cli("report", ONPREM, "-o", out).exit_code == 0
    dom = run(["--enable-logging=stderr", "--v=0", "--dump-dom", out.as_uri()])
    assert "CONSOLE" not in dom.stderr, dom.stderr
    rendered = re.search(r'<section id="cost">.*?</section>', dom.stdout, re.S)
    assert rendered and "$5,161,800.00" in rendered.group(0)
    assert rendered.group(0).count('<span class="cost"') >= 4  # compute, network, facility once; power monthly


def test_the_elevations_png_leaves_the_panel_out(cli, tmp_path: Path) -> None:
    from clusterforge.pipeline.analysis import analyze, read_policy
    from clusterforge.report import build

    out = tmp_path / "report.html"
    assert cli("report", ONPREM, "-o", out).exit_code == 0
    page = out.read_text()
    assert 'id="cost"' in page and 'id="cost"' not in build(analyze(ONPREM, read_policy()), drawings_only=True)


def test_a_catalog_file_prices_the_panel(cli, write, tmp_path: Path) -> None:
    prices = write("apiVersion: clusterforge/v1\nkind: Catalog\nprices:\n  hardware:\n"
                   "    dgx-h100: {usd: 250000, source: \"PO 4711\", date: 2026-10-01}\n", "prices.yaml")
    out = tmp_path / "report.html"
    assert cli("report", ONPREM, "--catalog", prices, "-o", out).exit_code == 0
    html = re.search(r'<section id="cost">.*?</section>', out.read_text(), re.S)
    assert html and f"capex<b>${5_161_800 - 16 * 20_000:,.2f}</b>" in html.group(0)  # 16 servers at $250,000
    assert "PO 4711" in html.group(0)


def test_an_unpriced_pool_shows_no_price_and_is_named_never_zero(cli, tmp_path: Path) -> None:
    """The 32 DGX B200 of one scalable unit have no price: the line says so, as `clusterforge cost` does, every
    total says it leaves the unpriced items out, and the panel names each with its count."""
    html = panel(cli, EXAMPLES / "onprem-dgx-b200-su.yaml", tmp_path)
    rows = re.findall(r"<tr><td>(.*?)</tr>", html, re.S)
    b200 = [row for row in rows if row.startswith("dgx-b200")]
    assert len(b200) == 1, rows
    cells = re.findall(r'<td class="num">(.*?)</td>', b200[0])
    assert cells[0] == "32 server"
    assert "no price" in cells[1] and "not in the totals" in cells[2], cells
    assert "$0" not in b200[0] and 'class="estimate"' not in b200[0]  # no figure, so no estimate of one
    assert "$0.00 once" not in html and "$0.00 ·" not in html  # no free line, no empty compute bar
    assert html.count("excluding 3 unpriced items") == 4  # monthly, capex, and the breakdown of each period
    assert "per month (of the priced total, excluding 3 unpriced items)" in html
    assert "per GPU-hour<b>withheld</b><span class=\"note\">no GPU has a price (256 GPUs of pool su1 unpriced)" in html
    named = re.search(r'unpriced-items">.*?</ul>', html, re.S)
    assert named and "3 unpriced items</span> with no price, not in any total" in named.group(0)
    assert re.findall(r"<li>(.*?)</li>", named.group(0)) == [
        "dgx-b200 server x 32 (pool su1)", "cpu-1u server x 2 (pool ctl)", "cpu-1u server x 1 (pool login)"]
    assert "7 of 7 priced lines use a figure" in html  # the estimate note counts priced lines only


def test_a_fully_priced_panel_claims_no_unpriced_items(cli, tmp_path: Path) -> None:
    html = panel(cli, ONPREM, tmp_path)
    assert "unpriced" not in html and "no price" not in html
