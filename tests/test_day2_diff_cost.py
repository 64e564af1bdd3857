"""`clusterforge diff OLD NEW` says what the change does to the cost estimate (`clusterforge cost`'s figures):
monthly and capex before and after, in JSON and as one text line. The figures are checked against arithmetic
written out here from the catalog's prices, not against the estimator's own output."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.test_day2_diff import edited

AWS = EXAMPLES / "aws-p5.yaml"  # 64 p5.48xlarge, FSx 50,400 GiB PERSISTENT_2 250 MB/s/TiB, implicit controller
ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"  # 16 DGX H100 in six racks
POOL = "count: 64, role: compute, partition: train"
P5_ON_DEMAND = 55.04  # $/h, p5.48xlarge us-east-1
CONTROLLER = 0.8064 * 730  # the m7i.4xlarge controller the stack adds, a month on demand
FSX = 50_400 * 0.21  # GB-months x PERSISTENT_2 250 MB/s/TiB rate
DGX_H100 = 270_000.0


def on_demand(count: int) -> str:
    return edited(AWS, (POOL, POOL.replace("count: 64", f"count: {count}").replace(
        "partition", "purchase: on-demand, partition")))


def cost_of(cli, old: Path, new: Path) -> tuple[dict[str, float], str]:
    result = cli("diff", old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    text = cli("diff", old, new)
    lines = text.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("cost: "))
    # the cost line with the lines it wraps onto (indented) joined back: the text fits the terminal's width
    wrapped = [lines[first]] + [line for line in itertools.takewhile(lambda x: x.startswith(" "), lines[first + 1:])]
    return json.loads(result.stdout)["cost"], " ".join(" ".join(wrapped).split())


def test_doubling_an_aws_pool_doubles_its_compute_cost(cli, write) -> None:
    old, new = write(on_demand(64), "old.yaml"), write(on_demand(128), "new.yaml")
    cost, line = cost_of(cli, old, new)
    before = 64 * P5_ON_DEMAND * 730 + CONTROLLER + FSX  # 2,582,641.47
    after = 128 * P5_ON_DEMAND * 730 + CONTROLLER + FSX  # 5,154,110.27
    assert cost["currency"] == "USD"
    assert cost["old_monthly_usd"] == pytest.approx(before)
    assert cost["new_monthly_usd"] == pytest.approx(after)
    assert cost["delta_monthly_usd"] == pytest.approx(64 * P5_ON_DEMAND * 730)  # 2,571,468.80
    assert cost["old_capex_usd"] == cost["new_capex_usd"] == cost["delta_capex_usd"] == 0
    assert cost["old_usd_per_gpu_hour"] == pytest.approx(before / (512 * 730))
    assert cost["new_usd_per_gpu_hour"] == pytest.approx(after / (1024 * 730))
    assert line.startswith("cost: $2,582,641/month -> $5,154,110/month (+$2,571,469, +100%); capex $0 -> $0")


def test_an_unchanged_design_costs_the_same(cli) -> None:
    cost, line = cost_of(cli, ONPREM, ONPREM)
    assert cost["delta_monthly_usd"] == 0 and cost["delta_capex_usd"] == 0
    assert cost["old_monthly_usd"] == cost["new_monthly_usd"] > 0
    assert "(+$0, +0%)" in line


def test_doubling_an_onprem_pool_grows_the_capex(cli, write) -> None:
    two, four = "{pool: gpu, count: 2}", "{pool: gpu, count: 4}"  # racks b02 and b03
    new = write(edited(ONPREM, ("count: 16, role", "count: 32, role"),
                       ("{pool: gpu, count: 3}", "{pool: gpu, count: 6}"), (two, four), (two, four)), "doubled.yaml")
    cost, line = cost_of(cli, ONPREM, new)
    # 16 more DGX H100, 256 more 400G links (16 per server: node-leaf and leaf-spine), 6 more QM9700 switches
    grown = 16 * DGX_H100 + 256 * 1_800 + 6 * 30_000
    assert cost["delta_capex_usd"] == pytest.approx(grown)  # 4,960,800
    assert cost["old_capex_usd"] == pytest.approx(5_161_800)
    assert cost["new_capex_usd"] == pytest.approx(5_161_800 + grown)
    assert cost["delta_monthly_usd"] > grown / (12 * 4)  # the purchase amortised over 4 years, plus more power
    assert "capex $5,161,800 -> $10,122,600" in line


def test_a_render_directory_has_no_cost(cli, tmp_path) -> None:
    out = tmp_path / "out"
    assert cli("render", ONPREM, "-o", out).exit_code == 0
    result = cli("diff", out, ONPREM, "--format", "json")
    assert json.loads(result.stdout)["cost"] is None
    assert "cost: not compared (a render directory has no plan)" in cli("diff", out, ONPREM).stdout


def test_a_git_revision_is_priced(cli, tmp_path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "cluster.yaml").write_text(on_demand(64))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "cluster.yaml"], check=True)
    subprocess.run([*git, "commit", "-qm", "64"], check=True)
    (repo / "cluster.yaml").write_text(on_demand(65))
    monkeypatch.chdir(repo)
    cost, _ = cost_of(cli, Path("HEAD:cluster.yaml"), Path("cluster.yaml"))
    assert cost["delta_monthly_usd"] == pytest.approx(P5_ON_DEMAND * 730)  # one more instance: $40,179.20


def test_a_catalog_file_prices_both_sides(cli, write) -> None:
    prices = write("apiVersion: clusterforge/v1\nkind: Catalog\nprices:\n  instances:\n    p5.48xlarge:\n"
                   "      on-demand: {usd: 40.0, source: \"EDP rate card\", date: 2026-10-01}\n", "prices.yaml")
    old, new = write(on_demand(64), "old.yaml"), write(on_demand(128), "new.yaml")
    result = cli("diff", old, new, "--catalog", prices, "--format", "json")
    assert json.loads(result.stdout)["cost"]["delta_monthly_usd"] == pytest.approx(64 * 40.0 * 730)  # 1,868,800
