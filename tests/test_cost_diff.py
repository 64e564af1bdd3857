"""The cost change as a pull-request comment (`cost --diff OLD NEW`, `diff -f markdown`): a line per priced item
with before, after and the difference, the totals, $/GPU-hour both sides, unpriced items named; the gate's comment
holds the hidden marker it finds its comment by once, and its heading names the base commit short. Figures are
checked against the catalog's prices written out here."""

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
    assert body.startswith("### clusterforge cost: ") and MARKER not in body  # the gate writes it, once
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
    assert body.startswith("### clusterforge cost: ") and "+$918,748.80" in body
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
    assert "<img" not in outside and re.search(r"(?<!\\)\]\(", outside) is None  # no link can open
    assert "| \\[link\\](http\\://x) | $1.00 | - | -$1.00 |" in body  # escaped with backslashes, read as text
    assert "&#" not in body


FSX = FSX = "capacity_gib: 50400"  # FSx for Lustre PERSISTENT_2 SSD 250 MB/s/TiB at $0.21/GB-month (the catalog's)


def test_a_changed_item_is_one_row_before_after_and_delta(cli, write) -> None:
    """A file system grown is one row `name: $before -> $after (+$delta)`, not one removed and one added."""
    new = write(edited(AWS, (FSX, "capacity_gib: 60000")), "fsx-60000.yaml")
    text = cli("cost", "--diff", AWS, new).stdout
    rows = [line for line in text.replace("\n      ", " ").splitlines() if "FSx for Lustre" in line]  # unwrapped
    assert rows == ["  FSx for Lustre PERSISTENT_2 SSD 250 MB/s/TiB, 60,000 GiB (was 50,400): $10,584.00 -> "
                    "$12,600.00 (+$2,016.00)"], text
    body = cli("cost", "--diff", AWS, new, "-f", "markdown").stdout
    assert re.search(r"^\| FSx for Lustre PERSISTENT_2 SSD 250 MB/s/TiB, 60,000 GiB \(was 50,400\) \| \$10,584\.00 "
                     r"\| \$12,600\.00 \| \+\$2,016\.00 \|$", body, re.M), body
    assert "| - |" not in body  # nothing reads as removed or added
    data = json.loads(cli("cost", "--diff", AWS, new, "-f", "json").stdout)
    [fsx] = [i for i in data["items"] if i["item"].startswith("FSx")]
    assert fsx["before_item"] == "FSx for Lustre PERSISTENT_2 SSD 250 MB/s/TiB, 50,400 GiB"
    assert (fsx["before_usd"], fsx["after_usd"]) == (10584.0, 12600.0) and abs(fsx["delta_usd"] - 2016) < 1e-6


def test_an_instance_type_change_is_one_row_of_the_pool(cli, write) -> None:
    new = write(edited(AWS, ("hardware: p5.48xlarge", "hardware: p5e.48xlarge")), "p5e.yaml")
    data = json.loads(cli("cost", "--diff", AWS, new, "-f", "json").stdout)
    pools = [i for i in data["items"] if i["item"].endswith("pool gpu")]
    assert [(i["before_item"], i["item"]) for i in pools] == [
        ("p5.48xlarge capacity-block, pool gpu", "p5e.48xlarge capacity-block, pool gpu")]


def test_an_unpriced_item_is_unpriced_never_zero(cli, write) -> None:
    """The catalog prices no p5e.48xlarge Capacity Block: the row says unpriced, the difference is unknown, JSON has
    null (never 0), and the totals it leaves out are floors (`at least`)."""
    new = write(edited(AWS, ("hardware: p5.48xlarge", "hardware: p5e.48xlarge")), "p5e.yaml")
    text = cli("cost", "--diff", AWS, new).stdout.replace("\n      ", " ")  # rows unwrapped
    assert ("  p5e.48xlarge capacity-block, pool gpu (was p5.48xlarge): $1,837,497.60 -> unpriced (unknown)"
            in text.splitlines()), text
    assert "monthly total: $1,848,670.27 -> at least $11,172.67 (unknown)" in text
    body = cli("cost", "--diff", AWS, new, "-f", "markdown").stdout
    row = next(line for line in body.splitlines() if line.startswith("| p5e.48xlarge"))
    assert row == "| p5e.48xlarge capacity-block, pool gpu (was p5.48xlarge) | $1,837,497.60 | unpriced | unknown |"
    assert "$0.00" not in row and "**at least $11,172.67**" in body
    data = json.loads(cli("cost", "--diff", AWS, new, "-f", "json").stdout)
    [pool] = [i for i in data["items"] if i["item"].startswith("p5e")]
    assert (pool["after_usd"], pool["delta_usd"], pool["after_state"]) == (None, None, "unpriced")
    diff = json.loads(cli("diff", AWS, new, "-f", "json").stdout)["cost"]
    assert diff["delta_monthly_usd"] is None
    assert diff["unpriced"] == {"old": [], "new": ["p5e.48xlarge capacity-block x 64 (pool gpu)"]}
    assert "at least $11,173/month (difference unknown)" in " ".join(cli("diff", AWS, new).stdout.split())


def test_lines_of_one_kind_are_paired_only_when_one_each_is_left() -> None:
    old = estimate(line("qm9700 leaf switch", 10.0, "once"), line("qm9700 spine switch", 5.0, "once"))
    new = estimate(line("qm9790 leaf switch", 12.0, "once"), line("qm9790 spine switch", 6.0, "once"))
    diff = CostDiff("old.yaml", "new.yaml", old, new)
    assert [(c.item, c.before, c.after) for c in diff.items("once")] == [
        ("qm9700 leaf switch", 10.0, None), ("qm9700 spine switch", 5.0, None),
        ("qm9790 leaf switch", None, 12.0), ("qm9790 spine switch", None, 6.0)]  # two each: which is which?
    one = CostDiff("old.yaml", "new.yaml", estimate(line("dgx-h100 (DGX H100), pool gpu", 9.0, "once")),
                   estimate(line("dgx-b200 (DGX B200), pool gpu", 12.0, "once")))
    [changed] = one.items("once")
    assert (changed.name, changed.delta) == ("dgx-b200 (DGX B200), pool gpu (was dgx-h100 (DGX H100))", 3.0)


def unpriced_line(item: str, quantity: float, period: str = "once") -> CostLine:
    return CostLine(item, "compute", quantity, "server", 0.0, 0.0, period, "none", "", True, f"{item} x {quantity:g}")


def test_the_same_items_unpriced_on_both_sides_leave_the_difference_exact() -> None:
    """An on-prem login server without a price before and after costs the same either way: the totals' difference
    stays exact; one more of it, or a new unpriced item, makes it unknown."""
    same = CostDiff("a", "b", estimate(line("dgx", 100.0, "once"), unpriced_line("cpu-1u", 2)),
                    estimate(line("dgx", 150.0, "once"), unpriced_line("cpu-1u", 2)))
    [_, cpu] = same.items("once")
    assert (cpu.before_state, cpu.after_state, cpu.delta) == ("unpriced", "unpriced", 0.0)
    assert same.total_cells("once", 100.0, 150.0) == ("$100.00", "$150.00", "+$50.00 (+50%)")
    more = CostDiff("a", "b", estimate(line("dgx", 100.0, "once"), unpriced_line("cpu-1u", 2)),
                    estimate(line("dgx", 150.0, "once"), unpriced_line("cpu-1u", 3)))
    assert more.items("once")[1].delta is None
    assert more.total_cells("once", 100.0, 150.0) == ("at least $100.00", "at least $150.00", "unknown")
    assert "| cpu-1u | unpriced | unpriced | unknown |" in markdown(more)


def test_the_gates_comment_holds_the_marker_once_and_names_the_base_commit_short(tmp_path) -> None:
    """The action's pricing step, run as the runner runs it, on a PR that changes two blueprints the base commit has
    (two `cost --diff` sections) and adds one (priced alone): the marker the comment job finds its comment by is in
    the comment once, at the top, and each section's heading names the base commit by seven characters."""
    import shutil

    import pytest

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    from tests.test_workflows import _commit, action_run, find, git

    repo = tmp_path / "repo"
    (repo / "bp").mkdir(parents=True)
    (repo / "bp" / "p5.yaml").write_text(AWS.read_text())
    (repo / "bp" / "dgx.yaml").write_text((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    git(repo, "init", "-q")
    _commit(repo, "base")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "bp" / "p5.yaml").write_text(edited(AWS, (POOL, POOL.replace("64", "96"))))
    (repo / "bp" / "dgx.yaml").write_text(edited(EXAMPLES / "onprem-dgx-h100.yaml", ("pue: 1.3", "pue: 1.4")))
    (repo / "bp" / "hybrid.yaml").write_text((EXAMPLES / "hybrid-burst.yaml").read_text())
    _commit(repo, "grow p5, a hall at a higher PUE, add a hybrid")
    assert sorted(find(repo, base)[0]) == ["bp/dgx.yaml", "bp/hybrid.yaml", "bp/p5.yaml"]
    run = action_run(repo, base)
    assert run.step("changed", check_if=False).returncode == 0
    result = run.step("cost")
    assert result.outcome == "success", result.stdout + result.stderr
    comment = result.outputs["comment"]
    assert comment.startswith(MARKER + "\n") and comment.count(MARKER) == 1
    headings = re.findall(r"^### clusterforge cost: `([^`]*)` → `([^`]*)`$", comment, re.M)
    assert sorted(headings) == [(f"{base[:7]}:bp/dgx.yaml", "bp/dgx.yaml"), (f"{base[:7]}:bp/p5.yaml", "bp/p5.yaml")]
    assert base not in comment and "### Cost: vision-hybrid" in comment
    assert "&#" not in comment  # read as text too: no HTML entity anywhere


def rendered(body: str) -> str:
    """The Markdown as a CommonMark renderer with GitHub's tables and strikethrough reads it (markdown-it-py, which
    rich depends on)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(body)


HOSTILE = ["<img src=x onerror=alert(1)>", "[link](http://evil.example)", "![i](http://e/x.png)", "**bold** _em_",
           "~~s~~ ~t~", "a | b", "`code`", "&lt;b&gt; &#60;", "\\| \\", "@someone #1 www.evil.example",
           "$x^2$ and $$y$$", "<!-- x -->", "snake_case_name PERSISTENT_2"]


def test_hostile_item_names_are_text_in_every_cost_markdown() -> None:
    """Item names and sources a pull request can write reach the cost Markdown (the table's cells, the diff's rows):
    rendered, each is the text it was, in its own cell, with no tag, link, image, emphasis or entity of its own;
    and the Markdown itself has no HTML entity (it reads as text)."""
    from clusterforge.formats.cost import markdown as cost_markdown

    for name in HOSTILE:
        lines = (CostLine(name, "compute", 1, "server", 5.0, 5.0, "once", name, "2026-01-01", False),)
        est = CostEstimate("USD", 5.0 / 48, 5.0, None, 0, lines)
        for body in (cost_markdown("c", est, 4), markdown(CostDiff("old.yaml", "new.yaml", estimate(), est))):
            assert "&#" not in body, body
            html = rendered(body)
            for tag in ("<img", "<a ", "<em>", "<s>", "<del>", "<!--"):
                assert tag not in html, (name, tag, html)
            assert html.count("<strong>") == body.count("**") // 2  # only our own bold
            cells = re.findall(r"<td[^>]*>(.*?)</td>", html, re.S)
            assert any(_text(cell) == name for cell in cells), (name, cells)  # shown as written, in one cell
            rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
            widths = {len(re.findall(r"<t[dh]", row)) for row in rows}
            assert len(widths) <= 2 and max(widths) in (4, 7), (name, widths)  # no cell added by the name
            assert "<code>" not in "".join(cells) or "`" in name  # no code span of the name's own making


def _text(cell: str) -> str:
    """A rendered cell as the reader sees it: tags off, entities read."""
    import html

    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def test_a_dollar_is_escaped_only_where_two_could_make_math() -> None:
    from clusterforge.formats.escape import markdown_safe

    assert markdown_safe("monthly $1,234.56 over the budget of $1,000.00") == (
        "monthly $1,234.56 over the budget of $1,000.00")  # neither closes: as written
    assert markdown_safe("$x^2$ costs $5") == "\\$x^2\\$ costs \\$5"
    assert markdown_safe("a$$b$$") == "a\\$\\$b\\$\\$"
    assert markdown_safe("FSx PERSISTENT_2, _em_ a_") == "FSx PERSISTENT_2, \\_em\\_ a\\_"
