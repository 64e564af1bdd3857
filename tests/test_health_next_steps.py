"""Every health verdict ends with what the operator does next, from one table (operations/next_steps.py) worded as
the alert rules' runbooks word the same faults (roles/monitoring/templates/alerts-*.yml.j2): `health perf`,
`health allreduce` and `health diag` are tested with their own commands (tests/test_health_*.py); here, the table
against the runbooks, and `report --measured`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterforge.operations.next_steps import NEXT, next_step
from tests.test_report_measured import ONPREM, a01, export, series

ALERTS = Path(__file__).resolve().parents[1] / "roles" / "monitoring" / "templates"

# (command, verdict) -> (the alert that fires for the same fault, clauses its runbook and the next step share)
SAME_WORDS = {
    ("perf", "corruption"): ("GpuWrongAnswer", ("keep the node drained", "a reboot does not fix it",
                                                "rerun the perf tier to confirm", "rma the gpu",
                                                "check which jobs ran on it since its last good run")),
    ("perf", "slow"): ("GpuStraggler", ("look for the cause first", "gpuhardwareslowdown, gpupcielinkdegraded, gpuhot",
                                        "drain the node", "rma the gpu if it stays slow")),
    ("allreduce", "below-floor-named"): ("InfinibandPortDown", ("ibstat", "reseat or replace the cable or "
                                                                  "transceiver, check the switch port")),
    ("measured", "feed"): ("FeedPowerOverBudget", ("shed load from the rack now", "drain nodes, cap power",
                                                  "find why the rack draws more than planned")),
    ("measured", "rack"): ("RackPowerOverBudget", ("either side alone no longer carries the rack",
                                                  "holds only what the plan put there")),
    ("measured", "inlet"): ("InletOverLimit", ("check the rack's cooling (crah, rear door, blanking panels, "
                                               "containment) and its neighbours' inlets",)),
}


def runbook(alert: str) -> str:
    """The runbook annotation of ALERT in the monitoring role's rule templates."""
    for template in sorted(ALERTS.glob("alerts-*.yml.j2")):
        found = re.search(rf"- alert: {alert}\n.*?\n\s+runbook: \"(.*?)\"\n", template.read_text(), re.S)
        if found:
            return found.group(1)
    raise AssertionError(f"no alert {alert}")


@pytest.mark.parametrize("key", sorted(SAME_WORDS), ids=lambda key: "-".join(key))
def test_a_next_step_says_what_its_alerts_runbook_says(key: tuple[str, str]) -> None:
    alert, clauses = SAME_WORDS[key]
    said, book = next_step(*key).casefold(), runbook(alert).casefold()
    for clause in clauses:
        assert clause in book, f"{alert}'s runbook no longer says {clause!r}: reword NEXT{key} with it"
        assert clause in said, f"NEXT{key} does not say {clause!r} as {alert}'s runbook does"


def test_every_step_is_one_sentence_an_operator_acts_on() -> None:
    for key, step in NEXT.items():
        assert step[0].islower() and not step.endswith(".") and len(step) < 320, key


def test_report_measured_ends_with_the_next_step_of_what_is_over(cli, tmp_path: Path) -> None:
    over = export(tmp_path, *a01(11_600, feed="a01-a"),
                  *[series("clusterforge_bmc_inlet_celsius", 33.0, instance="gpu-0004:9100", rack="a02")])
    out = tmp_path / "report.html"
    result = cli("report", ONPREM, "--measured", over, "-o", out)
    assert result.exit_code == 0, result.output
    said = result.stderr.strip()
    feed, rack, inlet = (f"next ({kind} over): {next_step('measured', kind)}" for kind in ("feed", "rack", "inlet"))
    assert said.endswith(f"; {feed}; {rack}; {inlet})"), said
    html = out.read_text()
    assert re.findall(r'data-measured-next="(\w+)"', html) == ["feed", "rack", "inlet"]
    within = cli("report", ONPREM, "--measured", export(tmp_path, *a01(9_000), name="within.json"), "-o", out)
    assert "next (" not in within.stderr and "data-measured-next" not in out.read_text()


@pytest.mark.parametrize("key", sorted(SAME_WORDS), ids=lambda key: "-".join(key))
def test_the_neutral_words_say_what_the_runbook_says_too(key: tuple[str, str]) -> None:
    """The table's own words, for a vendor that declares no tools, keep the runbook's clauses."""
    alert, clauses = SAME_WORDS[key]
    for clause in clauses:
        assert clause in NEXT[key].casefold(), f"NEXT{key} does not say {clause!r} as {alert}'s runbook does"


def test_a_step_that_uses_a_vendors_tool_is_in_the_vendors_words() -> None:
    """The default vendor's tools replace the neutral words (its health_tools.py); the table names no tool of its."""
    from clusterforge.accelerator_kernel.health_tools import health_tools

    tools = health_tools()
    assert tools.next_steps, "the default vendor declares its words for the steps that use its tools"
    for key, words in tools.next_steps.items():
        assert next_step(*key) == words != NEXT[key]
    assert "nvidia-smi -pl" in next_step("measured", "feed") and "nvidia-smi" not in NEXT["measured", "feed"]
    assert next_step("measured", "rack") == NEXT["measured", "rack"]
