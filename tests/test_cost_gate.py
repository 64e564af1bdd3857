"""`budget:` in the gate: COST-001 fails `check` (every format, the CrossGuard blueprint policy) when the
estimate exceeds a budget, at the budget's line with the arithmetic; waivable; an invalid budget is exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

AWS = EXAMPLES / "aws-p5.yaml"
ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"
AWS_MONTHLY = 64 * 730 * 39.33 + 730 * 0.8064 + 50400 * 0.21  # 1,848,670.27
ONPREM_CAPEX = 16 * 270_000 + 6 * 30_000 + 256 * 1_800 + 6 * 2_500 + 12 * 3_000 + 6 * 25_000  # 5,161,800


def with_budget(tmp_path: Path, example: Path, budget: str) -> tuple[Path, int]:
    """The example with `budget:` appended, and the line the budget's first key is on."""
    text = example.read_text()
    path = tmp_path / example.name
    path.write_text(text + f"budget:\n  {budget}\n")
    return path, len(text.splitlines()) + 2


def findings(cli, *args: object) -> tuple[int, list[dict]]:
    result = cli("check", *args, "-f", "json")
    return result.exit_code, json.loads(result.stdout)["findings"]


def test_a_monthly_budget_below_the_estimate_fails_at_its_line(cli, tmp_path: Path) -> None:
    path, line = with_budget(tmp_path, AWS, "monthly_usd: 1000000")
    code, found = findings(cli, path)
    assert code == 1
    [cost] = [f for f in found if f["id"] == "COST-001"]
    assert cost["level"] == "error" and cost["line"] == line and cost["path"] == "budget.monthly_usd"
    assert f"${AWS_MONTHLY:,.2f}/month" in cost["message"] and "$1,000,000.00/month" in cost["message"]
    assert f"by ${AWS_MONTHLY - 1_000_000:,.2f}" in cost["message"]


def test_a_budget_above_the_estimate_passes(cli, tmp_path: Path) -> None:
    path, _ = with_budget(tmp_path, AWS, "{monthly_usd: 2000000, usd_per_gpu_hour: 5}")
    code, found = findings(cli, path)
    assert code == 0 and not [f for f in found if f["id"].startswith("COST")]


def test_capex_and_gpu_hour_budgets(cli, tmp_path: Path) -> None:
    path, line = with_budget(tmp_path, ONPREM, "{capex_usd: 5000000, usd_per_gpu_hour: 1.0}")
    code, found = findings(cli, path)
    assert code == 1
    by_path = {f["path"]: f for f in found if f["id"] == "COST-001"}
    assert set(by_path) == {"budget.capex_usd", "budget.usd_per_gpu_hour"}
    assert by_path["budget.capex_usd"]["line"] == line
    assert f"${ONPREM_CAPEX:,.2f}" in by_path["budget.capex_usd"]["message"]
    monthly = (16 * 10.2 + 6 * 1.72) * 1.3 * 0.10 * 730 + ONPREM_CAPEX / 48
    assert f"${monthly / (128 * 730):,.4f} per GPU-hour" in by_path["budget.usd_per_gpu_hour"]["message"]
    assert "128 GPUs x 730 h" in by_path["budget.usd_per_gpu_hour"]["message"]


def test_the_budget_finding_is_in_every_format(cli, tmp_path: Path) -> None:
    path, line = with_budget(tmp_path, AWS, "monthly_usd: 1000000")
    for fmt in ("text", "github", "sarif", "junit"):
        result = cli("check", path, "-f", fmt)
        assert result.exit_code == 1 and "COST-001" in result.stdout, fmt
    assert f"line={line},title=COST-001" in cli("check", path, "-f", "github").stdout


def test_a_waiver_passes_it(cli, tmp_path: Path) -> None:
    path, _ = with_budget(tmp_path, AWS, "monthly_usd: 1000000")
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - {rule: COST-001, cluster: nlp-p5, target: budget.monthly_usd, "
                       "reason: 'approved overrun for the Q4 run', expires: 2099-01-01, approver: finance}\n")
    result = cli("check", path, "--waivers", waivers, "-f", "json")
    assert result.exit_code == 0
    assert [f["id"] for f in json.loads(result.stdout)["waived"]] == ["COST-001"]


@pytest.mark.parametrize(("budget", "says"), [("monthly_usd: -5", "budget.monthly_usd"),
                                              ("monthly_usd: 0", "budget.monthly_usd"),
                                              ("monthly: 5", "budget.monthly"),
                                              ("capex_usd: lots", "budget.capex_usd")])
def test_an_invalid_budget_is_exit_2_with_its_line(cli, tmp_path: Path, budget: str, says: str) -> None:
    path, line = with_budget(tmp_path, AWS, budget)
    result = cli("check", path)
    assert result.exit_code == 2
    assert f"{path.name}:{line}: {says}" in result.stderr


def test_a_budget_with_an_unpriced_item_cannot_pass(cli, tmp_path: Path) -> None:
    """The priced lines (the controller and FSx, ~$11,173/month) are far under the budget, but 64 p4d.24xlarge
    have no price: the budget cannot be verified, so check fails (COST-002 error), never passes."""
    text = AWS.read_text().replace("hardware: p5.48xlarge", "hardware: p4d.24xlarge")
    path = tmp_path / "p4d.yaml"
    path.write_text(text + "budget: {monthly_usd: 10000000}\n")
    code, found = findings(cli, path)
    assert code == 1
    [gap] = [f for f in found if f["id"] == "COST-002"]
    assert gap["level"] == "error" and "cannot be verified" in gap["message"]
    # the table prices p4d Capacity Blocks in us-east-2 and us-west-2 only: the region is the reason, and named
    assert "p4d.24xlarge capacity-block in us-east-1 x 64 (pool gpu)" in gap["message"]
    assert not [f for f in found if f["id"] == "COST-001"]  # the floor is under the budget: no over-budget claim
    path.write_text(text)  # without a budget nothing fails, but the unpriced pool still warns (COST-003)
    code, found = findings(cli, path)
    assert code == 0 and [f["id"] for f in found if f["id"].startswith("COST")] == ["COST-003"]


def test_an_unpriced_server_warns_at_its_pool_without_a_budget(cli) -> None:
    example = EXAMPLES / "onprem-dgx-b200-su.yaml"
    code, found = findings(cli, example)
    assert code == 0
    warned = {f["path"]: f for f in found if f["id"] == "COST-003"}
    assert set(warned) == {"pools[0].hardware", "pools[1].hardware", "pools[2].hardware"}
    b200 = warned["pools[0].hardware"]
    assert b200["level"] == "warning" and b200["line"] == 12
    assert "dgx-b200 server x 32 (pool su1)" in b200["message"] and "--catalog" in b200["hint"]


def test_a_priced_cluster_has_no_cost_003(cli) -> None:
    code, found = findings(cli, ONPREM)
    assert code == 0 and not [f for f in found if f["id"] == "COST-003"]


def test_the_b200_unit_passes_its_budget_once_every_server_is_priced(cli, tmp_path: Path) -> None:
    path, _ = with_budget(tmp_path, EXAMPLES / "onprem-dgx-b200-su.yaml", "usd_per_gpu_hour: 3")
    code, found = findings(cli, path)
    assert code == 1 and "COST-002" in {f["id"] for f in found}  # $0.42 per GPU-hour is a floor, not a pass
    prices = tmp_path / "quote.yaml"
    prices.write_text("apiVersion: clusterforge/v1\nkind: Catalog\nprices:\n  hardware:\n"
                      "    dgx-b200: {usd: 515000, source: quote 12, date: 2026-10-01}\n"
                      "    cpu-1u: {usd: 12000, source: quote 12, date: 2026-10-01}\n")
    code, found = findings(cli, path, "--catalog", prices)
    assert code == 0 and not [f for f in found if f["id"].startswith("COST")]


def test_the_crossguard_blueprint_policy_reports_the_budget(tmp_path: Path) -> None:
    from tests.test_crossguard import BLUEPRINT_POLICY, validate_stack

    path, line = with_budget(tmp_path, AWS, "monthly_usd: 1000000")
    [(message, _)] = validate_stack(BLUEPRINT_POLICY, [], {"blueprint": str(path)})
    assert message.startswith(f"{path}:{line}: COST-001: ")


def test_the_examples_keep_their_verdicts(cli) -> None:
    for example in sorted(EXAMPLES.glob("*.yaml")):
        assert cli("check", example).exit_code == 0, example


def test_check_holds_the_budget_to_the_site_catalogs_prices(cli, tmp_path: Path) -> None:
    path, _ = with_budget(tmp_path, AWS, "monthly_usd: 1800000")
    assert findings(cli, path)[0] == 1  # 1,848,670.27 at the list price
    prices = tmp_path / "negotiated.yaml"
    prices.write_text("apiVersion: clusterforge/v1\nkind: Catalog\nprices:\n  instances:\n    p5.48xlarge:\n"
                      "      capacity-block: {usd: 30.0, source: EDP rate card, date: 2026-10-01}\n")
    code, found = findings(cli, path, "--catalog", prices)  # 64 x 730 x 30 + 588.67 + 10,584 = 1,412,772.67
    assert code == 0 and not [f for f in found if f["id"] == "COST-001"]
