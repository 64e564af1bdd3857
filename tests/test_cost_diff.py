"""The cost change as a pull-request comment (`cost --diff OLD NEW`, `diff -f markdown`): a line per priced item
with before, after and the difference, the totals, $/GPU-hour both sides, unpriced items named, and the hidden
marker the workflow finds its comment by. Figures are checked against the catalog's prices written out here."""

from __future__ import annotations

import json
import re

from clusterforge.cost.model import CostEstimate, CostLine
from clusterforge.formats.cost_diff import MARKER, CostDiff, markdown, text
from tests.conftest import EXAMPLES
from tests.test_day2_diff import edited

AWS = EXAMPLES / "aws-p5.yaml"  # 64 p5.48xlarge as a capacity block, FSx, an implicit controller
POOL = "p5.48xlarge, count: 64,"
BLOCK = 39.33  # $/instance-hour, p5.48xlarge capacity block, us-east-1 (the catalog's 2025 table)


def grown(write, count: int = 96) -> object:
    return write(edited(AWS, (POOL, POOL.replace("64", str(count)))), f"p5-{count}.yaml")


def test_the_p5_line_shows_its_delta_and_the_total(cli, write) -> None:
    new = grown(write)
    result = cli("cost", "--diff", AWS, new, "-f", "markdown")
    assert result.exit_code == 0, result.output
    body = result.stdout
    assert body.startswith(MARKER + "\n")
    delta = 32 * BLOCK * 730  # 918,748.80
    assert f"+${delta:,.2f}" == "+$918,748.80"
    assert re.search(r"^\| p5\.48xlarge capacity-block, pool gpu \| \$1,837,497\.60 \| \$2,756,246\.40 \| "
                     r"\+\$918,748\.80 \|$", body, re.M), body
    assert re.search(r"^\| \*\*monthly total\*\* \| \*\*\$1,848,670\.27\*\* \| \*\*\$2,767,419\.07\*\* \| "
                     r"\*\*\+\$918,748\.80\*\* \(\+50%\) \|$", body, re.M), body
    assert re.search(r"^\| per GPU-hour \| \$4\.9461 \| \$4\.9362 \| -\$0\.0100 \|$", body, re.M), body
    data = json.loads(cli("cost", "--diff", AWS, new, "-f", "json").stdout)
    [p5] = [i for i in data["items"] if i["item"].startswith("p5.48xlarge")]
    assert p5["delta_usd"] == round(delta, 6) or abs(p5["delta_usd"] - delta) < 1e-6
    assert data["monthly"]["delta_usd"] - delta < 1e-6 and data["unpriced"] == []
    lines = cli("cost", "--diff", AWS, new).stdout.splitlines()
    assert "monthly $1,848,670.27 -> $2,767,419.07 (+$918,748.80, +50%)" in lines


def test_diff_markdown_is_the_same_comment_with_running_work(cli, write) -> None:
    new = grown(write)
    body = cli("diff", AWS, new, "-f", "markdown").stdout
    assert body.startswith(MARKER + "\n") and "+$918,748.80" in body
    assert "#### Running work" in body and "no disruption: running jobs keep running" in body


def line(item: str, usd: float, period: str = "month") -> CostLine:
    return CostLine(item, "compute", 1, "server", usd, usd, period, "test", "2026-01-01", False)


def estimate(*lines: CostLine, unpriced: tuple[str, ...] = ()) -> CostEstimate:
    monthly = sum(x.total_usd for x in lines if x.period == "month")
    capex = sum(x.total_usd for x in lines if x.period == "once")
    return CostEstimate("USD", monthly, capex, None, 0, tuple(lines), unpriced=unpriced)


def test_unpriced_items_are_named_with_their_side() -> None:
    old = estimate(line("power", 100.0), line("DGX H100 server", 270_000.0, "once"), unpriced=("kept-switch",))
    new = estimate(line("power", 150.0), line("DGX H100 server", 540_000.0, "once"),
                   unpriced=("kept-switch", "zz-9000 server"))
    diff = CostDiff("old.yaml", "new.yaml", old, new)
    body = markdown(diff)
    assert "**Not priced**" in body
    assert "`zz-9000 server` (after only)" in body and "`kept-switch` (before and after)" in body
    assert re.search(r"^\| DGX H100 server \| \$270,000\.00 \| \$540,000\.00 \| \+\$270,000\.00 \|$", body, re.M)
    assert "| **one-off total** | **$270,000.00** | **$540,000.00** | **+$270,000.00** (+100%) |" in body
    assert ("not priced (after only): zz-9000 server", 4) in text(diff)
    assert diff.as_json()["unpriced"] == [{"item": "kept-switch", "where": "before and after"},
                                          {"item": "zz-9000 server", "where": "after only"}]


def test_names_from_a_pull_request_are_literal_text() -> None:
    hostile = "a|b<img src=x onerror=alert(1)>.yaml"
    diff = CostDiff(hostile, "main:`x`.yaml", estimate(line("[link](http://x)", 1.0)), estimate())
    body = markdown(diff)
    assert "`a\\|b<img src=x onerror=alert(1)>.yaml`" in body  # a code span: shown, never read as HTML
    outside = re.sub(r"(`+).*?\1", "", body)
    assert "<img" not in outside and "](http" not in outside
    assert "| &#91;link&#93;(http&#58;//x) | $1.00 | - | -$1.00 |" in body
