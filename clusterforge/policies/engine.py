"""Run every registered rule, locate the findings, apply levels, skips and waivers, decide the verdict."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from clusterforge.blueprint.load import Loaded
from clusterforge.core.hints import FINDINGS_PER_KIND, and_more, capped
from clusterforge.plan import Plan
from clusterforge.policies.config import LEVEL_RANK, PolicyConfig
from clusterforge.policies.context import Context, from_loaded
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.findings import Draft, Finding, WaiverRef
from clusterforge.policies.registry import Rule
from clusterforge.policies.waivers import EXPIRED_ID, UNUSED_ID, Waiver


@dataclass(frozen=True)
class Verdict:
    findings: tuple[Finding, ...]
    waived: tuple[Finding, ...]
    fail_level: str = "error"
    rules_run: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        threshold = LEVEL_RANK[self.fail_level]
        return any(LEVEL_RANK[f.level] >= threshold for f in self.findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    def count(self, level: str) -> int:
        return sum(1 for f in self.findings if f.level == level)


def _locate(rule: Rule, draft: Draft, ctx: Context, level: str) -> Finding:
    source = ctx.loaded.source
    own = draft.level or rule.level
    final = level if own == rule.level else own
    file, line = source.locate(draft.path)
    return Finding(rule.id, final, draft.path_text, draft.message, draft.hint, draft.measured, draft.limit,
                   draft.unit, file, line, draft.where, draft.minimum)


def _more(draft: Draft, count: int) -> Draft:
    """The line that stands for `count` more drafts like `draft` (hints.capped)."""
    return replace(draft, message=and_more(draft.message, count), hint="", measured=None, limit=None, unit="")


def _run_rule(rule: Rule, ctx: Context) -> Iterable[Finding]:
    settings = rule.settings_for(ctx.config)
    if not settings.enabled:
        return
    level = settings.level or rule.level
    if (rule.target is not None and rule.target not in ctx.targets) or (rule.needs_site and not ctx.target.facility):
        return  # not applicable: another target's rule, or a facility rule where there is no facility
    if rule.needs_site and ctx.cluster.site is None:
        yield Finding(rule.id, "info", "", f"{rule.title}: not checked, the blueprint has no `site:` (design only)",
                      "add the facility to check power, space and cooling", file=ctx.loaded.file, line=1)
        return
    try:
        for draft in capped(rule.check(ctx, settings), lambda d: d.message, _more, FINDINGS_PER_KIND):
            yield _locate(rule, draft, ctx, level)
    except Exception as exc:  # a broken rule must not hide the others
        yield Finding(rule.id, "error", "", f"rule {rule.id} failed: {type(exc).__name__}: {exc}",
                      hint="this is a bug in the rule; please report it", file=ctx.loaded.file)


def _apply_waivers(
    findings: list[Finding], waivers: Sequence[Waiver], today: dt.date
) -> tuple[list[Finding], list[Finding]]:
    active: list[Finding] = []
    waived: list[Finding] = []
    used: set[int] = set()
    for finding in findings:
        match = next((i for i, w in enumerate(waivers) if w.matches(finding.id, finding.path, finding.cluster)), None)
        if match is None or finding.level == "info":
            active.append(finding)
            continue
        waiver = waivers[match]
        used.add(match)
        if waiver.expired(today):
            active.append(finding)
            continue
        waived.append(replace(finding, waiver=waiver.summary()))
    for i, waiver in enumerate(waivers):
        e = waiver.entry
        if waiver.expired(today):
            active.append(Finding(EXPIRED_ID, "error", f"waivers[{i}]",
                                  f"waiver for {e.rule} on {e.target} expired on {e.expires.isoformat()}",
                                  "renew it with a new reason and approver, or fix the design", file=waiver.file,
                                  line=waiver.line, where=WaiverRef(i)))
        elif i not in used:
            active.append(Finding(UNUSED_ID, "warning", f"waivers[{i}]",
                                  f"waiver for {e.rule} on {e.target} matches no finding",
                                  "remove it, or fix its rule id or target path", file=waiver.file,
                                  line=waiver.line, where=WaiverRef(i)))
    return active, waived


def decide(
    findings: Sequence[Finding], waivers: Sequence[Waiver] = (), fail_level: str = "error",
    rules_run: Sequence[str] = (), today: dt.date | None = None,
) -> Verdict:
    """Apply waivers, order the findings (errors first; within a level those of leading rules, the unit slips that
    other findings follow from, then by file and line) and wrap them in a Verdict."""
    active, waived = _apply_waivers(list(findings), waivers, today or dt.date.today())
    rules = load_rules()
    order = {rule.id: i for i, rule in enumerate(rules)}
    leading = {rule.id for rule in rules if rule.leads}
    active.sort(key=lambda f: (-LEVEL_RANK[f.level], f.id not in leading, f.file, f.line, order.get(f.id, 999)))
    return Verdict(tuple(active), tuple(waived), fail_level, tuple(rules_run))


def evaluate(
    loaded: Loaded,
    plan: Plan | None = None,
    config: PolicyConfig | None = None,
    waivers: Sequence[Waiver] = (),
    skip: Iterable[str] = (),
    fail_level: str = "error",
    today: dt.date | None = None,
    scope: str | None = None,
) -> Verdict:
    """Every rule over one blueprint. Exit-code logic lives in the Verdict, printing in the CLI.

    Each finding names its cluster (`scope`, else the blueprint's `name:`), so a waiver applies to one cluster
    only."""
    ctx = from_loaded(loaded, config, plan)
    skipped = set(skip)
    run = [r for r in load_rules() if r.id not in skipped]
    cluster = scope if scope is not None else ctx.cluster.name
    findings = [replace(f, cluster=cluster) for rule in run for f in _run_rule(rule, ctx)]
    return decide(findings, waivers, fail_level, [r.id for r in run], today)


def merge(verdicts: Sequence[Verdict], waivers: Sequence[Waiver] = (), today: dt.date | None = None) -> Verdict:
    """One verdict over several blueprints; waivers apply across all of them (unused means unused by every file)."""
    findings = [f for v in verdicts for f in (*v.findings, *v.waived) if f.id not in (EXPIRED_ID, UNUSED_ID)]
    rules = list(dict.fromkeys(r for v in verdicts for r in v.rules_run))
    fail_level = verdicts[0].fail_level if verdicts else "error"
    return decide([replace(f, waiver=None) for f in findings], waivers, fail_level, rules, today)
