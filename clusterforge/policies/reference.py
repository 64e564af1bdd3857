"""The rule reference: what each rule reads and how it is configured, for `clusterforge rules` and docs/policies.md.

Everything about a rule comes from its declaration (level, title, source, docstring, settings, inputs, the
CrossGuard policy); this module only lays it out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from clusterforge.physics import Cooling, Electrical
from clusterforge.physics.budget import SEMANTICS
from clusterforge.policies.config import PolicyConfig, Settings
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.reference_software import software_sets
from clusterforge.policies.registry import DOMAINS, Rule
from clusterforge.policies.root_access import default_prefixes

SHARED: dict[str, type[BaseModel]] = {"electrical": Electrical, "cooling": Cooling}
# Policy-config sections of thresholds no rule reads (the health commands'): their keys, nested sections included,
# are listed from the model itself, so a key added to it appears on the page with its default and meaning.
THRESHOLDS = ("health",)


@dataclass(frozen=True)
class SettingDoc:
    """One policy-config key of a rule: `rules: {ID: {key: value}}`."""

    key: str
    default: str
    description: str


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _bounds(field: FieldInfo) -> str:
    """`> 0, ≤ 1` from the field's annotated constraints."""
    signs = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤"}
    return ", ".join(f"{sign} {_value(getattr(m, key))}" for m in field.metadata
                     for key, sign in signs.items() if hasattr(m, key))


def _described(field: FieldInfo) -> str:
    bounds = _bounds(field)
    return (field.description or "") + (f" ({bounds})" if bounds else "")


def setting_docs(rule: Rule) -> list[SettingDoc]:
    """Every key a policy config may set for the rule, with its default and where the default comes from."""
    rows = [SettingDoc("level", rule.level, "the level of its findings: error, warning or info"),
            SettingDoc("enabled", "true", f"false turns the rule off, like `--skip {rule.id}`")]
    for name, field in rule.settings.model_fields.items():
        if name not in Settings.model_fields:
            rows.append(SettingDoc(name, _value(field.default), _described(field)))
    return rows


def shared_docs(section: str) -> list[SettingDoc]:
    """The keys of a shared policy-config section (`electrical:`, `cooling:`)."""
    return [SettingDoc(f"{section}.{name}", _value(field.default), _described(field))
            for name, field in SHARED[section].model_fields.items()]


def _section(field: FieldInfo) -> type[BaseModel] | None:
    model = field.annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def section_docs(section: str) -> list[SettingDoc]:
    """Every key of a policy-config section, nested sections' keys as dotted paths (`health.perf.gemm_floor`)."""

    def walk(model: type[BaseModel], prefix: str) -> list[SettingDoc]:
        rows = []
        for name, field in model.model_fields.items():
            nested = _section(field)
            rows += (walk(nested, f"{prefix}.{name}") if nested else
                     [SettingDoc(f"{prefix}.{name}", _value(field.default), _described(field))])
        return rows

    model = _section(PolicyConfig.model_fields[section])
    assert model is not None, f"policy config section {section} is not a model"
    return walk(model, section)


def section_notes(section: str) -> list[str]:
    """Each (nested) section's docstring, as `` `health.perf`: text ``: what its keys decide, and why the defaults."""

    def walk(model: type[BaseModel], prefix: str) -> list[str]:
        notes = [f"`{prefix}`: " + " ".join(inspect.cleandoc(model.__doc__ or "").split())]
        for name, field in model.model_fields.items():
            nested = _section(field)
            notes += walk(nested, f"{prefix}.{name}") if nested else []
        return notes

    model = _section(PolicyConfig.model_fields[section])
    assert model is not None, f"policy config section {section} is not a model"
    return walk(model, section)


def checks(rule: Rule) -> str:
    """The rule's docstring, dedented: what it checks, as the pass condition."""
    return inspect.cleandoc(rule.doc)


def applies_to(rule: Rule) -> str:
    if rule.needs_site:
        return "on-prem blueprints with a `site:` (without one: an `info` finding, not checked)"
    return f"`target: {rule.target}` blueprints" if rule.target else "every blueprint"


def crossguard_text(rule: Rule) -> str:
    """Where the rule also runs at `pulumi preview`, or an empty string."""
    preview = rule.preview
    if preview is None:
        return ""
    if preview.scope == "stack":
        where = f"a stack policy over {preview.where}"
    else:
        where = "a resource policy on " + ", ".join(f"`{t}`" for t in preview.types)
    level = "mandatory" if rule.level == "error" else "advisory"
    return f"CrossGuard policy `{rule.id}` ({level}), {where}"


def rules() -> list[Rule]:
    """Every rule in the order docs/policies.md shows: by domain (power, rack, cooling, ...), then by id."""
    return load_rules()


def rule_summary(rule: Rule) -> dict[str, Any]:
    """One rule as data (`rules --format json`, `rules show --format json`)."""
    inputs = rule.inputs
    return {"id": rule.id, "level": rule.level, "domain": rule.domain, "title": rule.title, "checks": checks(rule),
            "source": rule.source, "applies_to": applies_to(rule), "inputs": list(inputs.fields),
            "catalog": list(inputs.catalog), "shared_settings": list(inputs.shared), "also": inputs.also,
            "settings": [s.__dict__ for s in setting_docs(rule)], "crossguard": crossguard_text(rule)}



# ---- the reference page (docs/policies.md) ----

REGENERATE = "clusterforge rules --format markdown > docs/policies.md"
POLICY_CONFIG_EXAMPLE = """\
# policy-config.yaml
apiVersion: clusterforge/v1
kind: PolicyConfig
electrical: {derate: 0.8, power_factor: 0.95}   # shared by PWR-001/002/006 and the planner
rules:
  PWR-002: {warn_fraction: 0.85}                 # a threshold: warn earlier
  PWR-005: {level: error, max_imbalance: 0.15}   # a level and a threshold
  RCK-006: {enabled: false}                      # no density contract here
health: {perf: {fleet_tolerance: 0.05}}          # `clusterforge health perf`: 5 % below its fleet is slow
"""

WAIVERS_EXAMPLE = """\
# waivers.yaml
apiVersion: clusterforge/v1
kind: Waivers
waivers:
  - rule: PWR-002
    cluster: vision-h100                         # the blueprint's name: the waiver applies to it only
    target: site.rows[0].racks[*].feeds          # every rack of row 0
    reason: B-side whips are upgraded to 60 A in the March maintenance window
    expires: 2027-03-31
    approver: facilities@example.com
"""

def _code(items: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{item}`" for item in items)


def table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """A GitHub table; `|` inside a cell is escaped so it cannot split the cell."""
    cells = [" | ".join(cell.replace("|", "\\|") for cell in row) for row in rows]
    return [f"| {' | '.join(header)} |", "|" + "---|" * len(header)] + [f"| {row} |" for row in cells]


def _settings_table(rows: list[SettingDoc]) -> list[str]:
    return table(("Key", "Default", "Meaning and source of the default"),
                  [(f"`{r.key}`", f"`{r.default}`", r.description) for r in rows])


def _pass_fail(rule: Rule) -> str:
    if rule.level == "error":
        text = ("Passes when the check holds; otherwise an `error` finding on the offending blueprint path, with the "
                "measured value, the limit and a fix, which fails the check unless waived")
    else:
        text = (f"Passes when the check holds; otherwise a `{rule.level}` finding on the offending blueprint path, "
                "with the measured value, the limit and a fix; it fails the check only with `--fail-level warning`")
    also = rule.inputs.also
    return text + (f". Also: {also}." if also else ".")


def rule_markdown(rule: Rule) -> list[str]:
    """One rule's section of the page."""
    inputs = rule.inputs
    read = _code(inputs.fields) or "none"
    if inputs.catalog:
        read += f"; catalog figures of the pool's hardware: {_code(inputs.catalog)}"
    if inputs.shared:
        read += "; policy config " + ", ".join(f"`{section}.*`" for section in inputs.shared)
    lines = [f'#### <a id="{rule.id.lower()}"></a>{rule.id}: {rule.title}', "",
             f"**Level** `{rule.level}` · **Domain** {rule.domain} · **Applies to** {applies_to(rule)}", "",
             f"**Checks.** {checks(rule)}", "", f"**Inputs.** {read}", "", f"**Pass / fail.** {_pass_fail(rule)}", "",
             f"**Settings** (`rules: {{{rule.id}: {{...}}}}` in the policy config):", "",
             *_settings_table(setting_docs(rule)), "", f"**Source.** {rule.source}", ""]
    if crossguard_text(rule):
        lines += [f"**At `pulumi preview`.** {crossguard_text(rule)}.", ""]
    return lines


def _intro(all_rules: list[Rule]) -> list[str]:
    domains = list(dict.fromkeys(r.domain for r in all_rules))
    return [
        "# Policy rules", "",
        "<!-- Generated from the rule registry; do not edit by hand. Regenerate with:",
        f"     {REGENERATE}",
        "     (a test fails when this file is stale). -->", "",
        "`clusterforge check` decides whether a cluster design physically fits before anything is deployed. "
        f"{len(all_rules)} rules in {len(domains)} domains. Each has a stable id used everywhere: JSON `id`, SARIF "
        "`ruleId`, JUnit test case, GitHub annotation title, waiver `rule`, `--skip`, and the CrossGuard policy "
        "name. Findings at level `error` fail the check; `warning` and `info` do not, unless `--fail-level warning` "
        "(for warnings).", "", SEMANTICS, "",
        *table(("ID", "Level", "Domain", "Title"),
                [(f"[{r.id}](#{r.id.lower()})", r.level, r.domain, r.title) for r in all_rules]), "",
    ]


def _usage() -> list[str]:
    return [
        "## Running the checks", "", "```sh",
        "clusterforge check cluster.yaml",
        "clusterforge check examples/*.yaml --policy-config policy-config.yaml --waivers waivers.yaml",
        "clusterforge check cluster.yaml --skip PWR-005 --skip RCK-006    # do not run these rules",
        "clusterforge check cluster.yaml --fail-level warning              # warnings fail too (exit 1)",
        "clusterforge check cluster.yaml --format sarif -o clusterforge.sarif",
        "clusterforge rules                   # every rule; `clusterforge rules show PWR-002` for one", "```", "",
        "Exit codes: `0` pass; `1` policy failure, an unwaived finding at or above `--fail-level`; `2` unreadable "
        "or invalid input (YAML, schema, unknown hardware, an unknown rule id in `--skip` or the policy config), "
        "printed as `file:line: path: message`.", "",
        "- `--skip ID` (repeatable) does not run the rule at all, so it cannot report; `enabled: false` in the "
        "policy config does the same from a file.",
        "- `--fail-level error` (default) fails on unwaived errors; `--fail-level warning` also on warnings. "
        "Info findings never fail.",
        "- With several files, one waiver file serves all of them (each waiver applies to the cluster it names), "
        "and the verdict covers them together.", "",
    ]


def _config() -> list[str]:
    shared = [row for section in SHARED for row in shared_docs(section)]
    return [
        "## Policy config (`--policy-config`)", "",
        "Every threshold is a typed setting with a sourced default; a YAML file overrides them per rule. Unknown "
        "rule ids or keys and out-of-range values are input errors, reported with their line.", "",
        "```yaml", *POLICY_CONFIG_EXAMPLE.splitlines(), "```", "",
        "Per-rule keys are listed with each rule below (`level` and `enabled` exist for every rule). The shared "
        "sections, used by several rules and the planner:", "", *_settings_table(shared), "",
        *_allowances(), "", *_thresholds(),
    ]


def _thresholds() -> list[str]:
    """The sections no rule reads (THRESHOLDS), each key with its default, from the policy-config model."""
    lines = ["Thresholds that no rule reads, for the commands beyond `check`; every key with its default:", ""]
    for section in THRESHOLDS:
        lines += [*(f"- {note}" for note in section_notes(section)), "", *_settings_table(section_docs(section)), ""]
    return lines


def _allowances() -> list[str]:
    prefixes = [f"`{prefix}`" for prefix in default_prefixes()]
    return [
        "What blueprints may hand to root is the platform team's to allow, here and never in a blueprint "
        "(clusterforge/policies/root_access.py). A `slurm.settings` or `slurm.cgroup_settings` key that names a "
        "program, file, folder, plugin, remote endpoint or credential, or switches job confinement off (the classes "
        "and the exceptions are data: `restricted` in clusterforge/catalog/data/slurm-parameters.yaml), is refused "
        "(exit 2, by `check`, `plan`, `render` with or without `--force`, `report`, the stack guard and CrossGuard "
        "alike) unless `slurm.allowed_settings` / `slurm.allowed_cgroup_settings` allow that key with that exact "
        f"value. Mount points must be at or under {', '.join(prefixes[:-1])} or {prefixes[-1]}, slurmctld's state "
        "and job_container/tmpfs's base path a folder below one (state also under `/var/spool/slurmctld`); "
        "`storage.mount_prefixes` adds prefixes.", "",
        "```yaml",
        "slurm:",
        "  allowed_settings: {HealthCheckProgram: [/usr/local/sbin/nhc]}",
        "  allowed_cgroup_settings: {ConstrainSwapSpace: [\"no\"]}",
        "storage: {mount_prefixes: [/gpfs]}",
        "```",
    ]


def _waivers() -> list[str]:
    return [
        "## Waivers (`--waivers`)", "",
        "A waiver accepts a known finding for a while, on the record. Waivers are data, reviewed like code:", "",
        "```yaml", *WAIVERS_EXAMPLE.splitlines(), "```", "",
        "- `rule`: the rule id. `cluster` (required): the `name:` of the blueprint the waiver is for; it waives "
        "nothing in any other cluster, even when several are checked in one run. The facility findings of teams "
        "that share a site file and are checked together belong to the site: `cluster: site:<site name>` "
        "(e.g. `site:dc1`). A waiver without `cluster` is an input error (exit 2) that says what to add.",
        "- `target`: the finding's path as printed (`site.rows[0].racks[2].feeds`); `*` "
        "stands for any run of characters within one index or name (`site.rows[*].racks[*]`), and a target also "
        "covers the paths below it. Targets are compared segment by segment, never as a regular expression.",
        "- `reason` (at least 10 characters) and `expires` (`YYYY-MM-DD`) are required; `approver` says who "
        "accepted the risk. Both are one line without control, format or invisible characters (no bidi "
        "overrides or zero-width characters: what a reviewer reads is what is there).",
        "- JSON echoes each waived finding's waiver, `cluster` included; SARIF's suppression justification is "
        "`<cluster>: <reason>`. Each finding carries its `cluster`.",
        "- Waived findings are still reported (JSON `waived`, SARIF suppressions, JUnit skipped, GitHub notices) "
        "and do not fail the check. Info findings cannot be waived.",
        "- `WVR-001` (error): a waiver past its `expires` date; the finding it covered counts again.",
        "- `WVR-002` (warning): a waiver that matches no finding (fixed, or a mistyped id or path).", "",
    ]


def _formats() -> list[str]:
    rows = [
        ("`text`", "people", "findings grouped by rack and row with value, limit and fix; `--show-info` adds info"),
        ("`json`", "scripts", '`{"verdict", "fail_level", "summary", "findings": [...], "waived": [...]}` with '
         'verdict `pass` or `fail`; a finding is `{id, level, path, message, hint, measured, limit, unit, file, '
         "line, group}`"),
        ("`sarif`", "GitHub code scanning", "SARIF 2.1.0; `ruleId` is the rule id, `partialFingerprints` keep "
         "alerts from duplicating, waived findings are suppressions"),
        ("`junit`", "CI test reports", "a test case per rule that ran and per finding; failures at or above the "
         "fail level, waived findings skipped"),
        ("`github`", "Actions annotations", "`::error file=F,line=L,title=ID::message` on the offending line "
         "(`::warning`; info and waived as `::notice`)"),
    ]
    return ["## Output formats (`--format`, `-o FILE`)", "", *table(("Format", "For", "Shape"), rows), "",
            "`-o FILE` writes the report atomically; the exit code is the same in every format. Every format names "
            "a file below the working directory (the repository's root in CI) relative to it, a waiver's file in "
            "JSON included; a file outside it keeps the name it was given.", ""]


def _targets() -> list[str]:
    """Each registered target's sections: where its rules also run (target aws: the CrossGuard pack)."""
    from clusterforge.target_kernel import registered, stage_function

    found: list[str] = []
    for target in registered().values():
        sections: Callable[[], list[str]] | None = stage_function(target, "rules_reference", "sections")
        found += sections() if sections is not None else []
    return found


def page() -> str:
    """The whole reference page, as committed in docs/policies.md."""
    all_rules = rules()
    lines = [*_intro(all_rules), *_usage(), *_config(), *_waivers(), *software_sets(), *_formats(), *_targets(),
             "## Rules", "",
             "Inputs name blueprint fields; `a[].{b,c}` means fields `b` and `c` of every item of `a`. What stands "
             "in a rack is its `devices` list or, where a rack omits it, the planner's placement of the pools, and "
             "the fabric's switches the planner racks (in racks marked `role: network`, else in the room the pools "
             "leave): their U, kW, kg and heat count like a server's.", ""]
    for domain in dict.fromkeys(r.domain for r in all_rules):
        lines += [f"### {DOMAINS[domain].title}", ""]
        for rule in (r for r in all_rules if r.domain == domain):
            lines += rule_markdown(rule)
    return "\n".join(lines).rstrip("\n") + "\n"
