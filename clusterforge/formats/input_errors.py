"""Input that cannot be checked, as a verdict every format can show.

On exit 2 (a YAML error, an unknown key, a missing include, a bad waivers file) CI still needs the reason where
it looks: an annotation on the line, a code-scanning alert, a failing JUnit case, JSON a program can read. Each
problem becomes an error finding of the pseudo-rule INPUT at its file and line, so the machine formats need no
second shape: JSON keeps its contract (`verdict: fail`, the problems in `findings`)."""

from __future__ import annotations

from collections.abc import Sequence

from clusterforge.core.errors import Problem
from clusterforge.policies import Finding, Verdict
from clusterforge.policies.waivers import UNUSED_ID

RULE_ID = "INPUT"
TITLE = "Readable, valid input"
DOC = ("The blueprint, an included file, the policy config or the waivers could not be read or is not valid: "
       "nothing was checked. Fix the input at the line shown; `clusterforge validate FILE` says the same.")


def finding(problem: Problem) -> Finding:
    """One problem as an error finding of INPUT, where the loader located it."""
    return Finding(RULE_ID, "error", problem.path, problem.message, problem.hint, file=problem.file, line=problem.line)


def verdict_of(problems: Sequence[Problem], fail_level: str = "error", judged: Verdict | None = None) -> Verdict:
    """The failing verdict that stands for input that could not be checked, beside the verdict `judged` over the
    blueprints of the same run that could be: one unreadable file hides no other file's findings. A waiver
    unused by the judged ones says nothing (it may be meant for a blueprint that could not be read)."""
    inputs = tuple(finding(p) for p in problems)
    if judged is None:
        return Verdict(inputs, (), fail_level, (RULE_ID,))
    findings = tuple(f for f in judged.findings if f.id != UNUSED_ID)
    return Verdict((*inputs, *findings), judged.waived, fail_level, (RULE_ID, *judged.rules_run))


def sarif_rule() -> dict[str, object]:
    """The INPUT rule's descriptor beside the policy rules in a SARIF log."""
    return {"id": RULE_ID, "name": TITLE.replace(" ", "").replace(",", ""), "shortDescription": {"text": TITLE},
            "fullDescription": {"text": DOC}, "help": {"text": DOC}, "defaultConfiguration": {"level": "error"},
            "properties": {"domain": "input"}}
