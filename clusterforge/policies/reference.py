"""The rule reference: what each rule reads and how it is configured, for `clusterforge rules` and docs/policies.md.

Level, title, source, docstring and settings come from the registry; the inputs each rule reads are
listed here by hand (tests check every listed field exists), so the page cannot drift from the code.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from clusterforge.crossguard.tokens import BLUEPRINT_POLICY, COVERAGE
from clusterforge.policies.config import Cooling, Electrical, Settings
from clusterforge.policies.reference_software import software_sets
from clusterforge.policies.registry import REGISTRY, Rule

RACK = "site.rows[].racks[]"
HELD = (f"{RACK}.devices[].{{pool,count}}", "pools[].{hardware,count}")  # what stands in each rack
PLACED = (HELD[0], "pools[].{hardware,count,max_power_kw}")  # ... and what it draws
FEEDS = f"{RACK}.feeds[].{{side,voltage,amps,phase}}"
SOFTWARE = ("software.{stack,nvidia_driver,cuda,nccl,efa_installer,aws_ofi_nccl,slurm,rocm,rccl,amdgpu_driver,"
            "neuron_sdk,neuron_driver}")


@dataclass(frozen=True)
class Inputs:
    """Blueprint fields (`a[].{b,c}` = fields b and c of every item of a), catalog figures, shared config."""

    fields: tuple[str, ...]
    catalog: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    also: str = ""


INPUTS: dict[str, Inputs] = {
    "PWR-001": Inputs((FEEDS, *PLACED), ("max_power_kw",), ("electrical",),
                      "an `info` finding lists racks with devices but no feeds (power not checked)"),
    "PWR-002": Inputs((FEEDS, *PLACED), ("max_power_kw",), ("electrical",),
                      "a `warning` when a rack uses `warn_fraction` or more of its weaker side"),
    "PWR-003": Inputs((f"{RACK}.feeds[].side", *HELD), ("psus",)),
    "PWR-004": Inputs(("pools[].{hardware,max_power_kw}",), ("max_power_kw",)),
    "PWR-005": Inputs((f"{RACK}.feeds[].{{side,phase}}", *PLACED), ("psus", "max_power_kw")),
    "PWR-006": Inputs(("site.panels[].{name,voltage,amps,phase}", f"{RACK}.feeds[].{{panel,side}}", *PLACED),
                      ("max_power_kw",), ("electrical",)),
    "PWR-007": Inputs(("site.{contracted_it_kw,utility_kw,pue}", "pools[].{hardware,count,max_power_kw}",
                       "fabric.switch"), ("max_power_kw",)),
    "RCK-001": Inputs((f"{RACK}.{{u_height,reserved_u}}", f"{RACK}.devices[].{{pool,count,position}}"),
                      ("u_height",)),
    "RCK-002": Inputs((f"{RACK}.{{max_weight_kg,tare_weight_kg}}", *HELD), ("weight_kg",)),
    "RCK-003": Inputs(("site.floor_load_kg_per_m2", f"{RACK}.{{footprint_m2,tare_weight_kg}}", *HELD),
                      ("weight_kg",)),
    "RCK-004": Inputs((f"{RACK}.mounting_depth_mm", *HELD), ("depth_mm",)),
    "RCK-005": Inputs((f"{RACK}.airflow", *HELD), ("airflow",)),
    "RCK-006": Inputs((f"{RACK}.contracted_kw", "site.contracted_kw_per_rack", *PLACED), ("max_power_kw",)),
    "CLG-001": Inputs((f"{RACK}.cooling.{{kind,air_kw}}", *PLACED), ("max_power_kw", "liquid_heat_fraction"),
                      ("cooling",), "a `warning` when a rack uses `warn_fraction` or more of its air capacity"),
    "CLG-002": Inputs((f"{RACK}.cooling.kind", *HELD), ("cooling",)),
    "CLG-003": Inputs((f"{RACK}.cooling.{{kind,liquid_kw,air_kw}}", *PLACED),
                      ("max_power_kw", "liquid_heat_fraction"), ("cooling",)),
    "CLG-004": Inputs(("site.rows[].cooling.{crah_kw,cdu_kw}", f"{RACK}.cooling.{{kind,air_kw}}", *PLACED),
                      ("max_power_kw", "liquid_heat_fraction")),
    "CLG-005": Inputs(("site.{max_inlet_c,inlet_class}", *HELD), ("max_inlet_c",)),
    "CLG-006": Inputs(("site.{max_supply_water_c,facility_water_class}", *HELD), ("max_supply_water_c",)),
    "CLG-007": Inputs((f"{RACK}.cooling.delivered_cfm", *PLACED), ("max_power_kw", "liquid_heat_fraction")),
    "NET-001": Inputs(("fabric.{kind,switch,tiers,oversubscription}", "pools[].{hardware,count,role}"),
                      ("nics", "ports")),
    "NET-002": Inputs(("fabric.oversubscription",)),
    "NET-003": Inputs(("fabric.rail_optimized", "pools[].{hardware,role}"), ("gpus", "nics")),
    "NET-004": Inputs(("fabric.{switch,oversubscription,leaves,spines,cores}", "pools[].{hardware,count,role}"),
                      ("nics", "ports")),
    "NET-005": Inputs(("pools[].{hardware,efa_interfaces}",), ("efa_max_interfaces", "efa_bandwidth_gbps"),
                      also="a `warning` when a pool uses fewer interfaces than the instance type offers"),
    "NET-006": Inputs(("pools[].{hardware,efa_interfaces,placement,availability_zone}",
                       "aws.{availability_zones,capacity}"), ("efa_max_interfaces",)),
    "STO-001": Inputs(("storage.lustre.{capacity_gib,deployment_type,storage_type,throughput_mb_s_per_tib}",)),
    "STO-002": Inputs(("storage.lustre.{deployment_type,storage_type,throughput_mb_s_per_tib}",)),
    "STO-003": Inputs(("workload.{model_params_b,bytes_per_param,max_checkpoint_s}",
                       "storage.lustre.{capacity_gib,throughput_mb_s_per_tib,write_gb_s}")),
    "SW-001": Inputs(("target", SOFTWARE), also="the catalog's software tables: built-in rows in "
                     "`clusterforge/catalog/data/software.yaml` (a source each), a site's qualified sets from "
                     "`--catalog` (see \"Adding a qualified software set\"); `clusterforge catalog software` lists "
                     "them"),
    "SW-002": Inputs((SOFTWARE,)),
    "SLM-001": Inputs(("pools[].{name,role,partition}", "slurm.partitions[].{name,pools,default}")),
    "SLM-002": Inputs(("pools[].{hardware,gres}",), ("gpus",)),
    "SEC-001": Inputs(("aws.security.imds_tokens",)),
    "SEC-002": Inputs(("aws.security.encrypt_root_volumes",)),
    "SEC-003": Inputs(("aws.security.ingress[].{cidr,protocol,from_port,to_port}",)),
    "SEC-004": Inputs(("aws.security.node_policies",)),
}
SHARED: dict[str, type[BaseModel]] = {"electrical": Electrical, "cooling": Cooling}


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


def checks(rule: Rule) -> str:
    """The rule's docstring, dedented: what it checks, as the pass condition."""
    return inspect.cleandoc(rule.doc)


def applies_to(rule: Rule) -> str:
    if rule.needs_site:
        return "on-prem blueprints with a `site:` (without one: an `info` finding, not checked)"
    return {"aws": "`target: aws` blueprints", "onprem": "`target: onprem` blueprints"}.get(rule.targets,
                                                                                        "every blueprint")


def crossguard_text(rule: Rule) -> str:
    """Where the rule also runs at `pulumi preview`, or an empty string."""
    types = COVERAGE.get(rule.id)
    if not types:
        return ""
    if len(types) > 1:
        where = ("a stack policy over the EFA launch templates and the placement groups, auto scaling groups, "
                 "instances and security group rules they use")
    else:
        where = f"a resource policy on `{types[0]}`"
    level = "mandatory" if rule.level == "error" else "advisory"
    return f"CrossGuard policy `{rule.id}` ({level}), {where}"


def rules() -> list[Rule]:
    """Every rule in the order of POLICIES.md: by domain (power, rack, cooling, ...), then by id."""
    from clusterforge.policies.rules import DOMAINS

    order = {module.__name__: i for i, module in enumerate(DOMAINS)}
    return sorted(REGISTRY.values(), key=lambda r: (order.get(r.check.__module__, len(order)), r.id))


def rule_summary(rule: Rule) -> dict[str, Any]:
    """One rule as data (`rules --format json`, `rules show --format json`)."""
    inputs = INPUTS.get(rule.id, Inputs(()))
    return {"id": rule.id, "level": rule.level, "domain": rule.domain, "title": rule.title, "checks": checks(rule),
            "source": rule.source, "applies_to": applies_to(rule), "inputs": list(inputs.fields),
            "catalog": list(inputs.catalog), "shared_settings": list(inputs.shared), "also": inputs.also,
            "settings": [s.__dict__ for s in setting_docs(rule)], "crossguard": crossguard_text(rule)}



# ---- the reference page (docs/policies.md) ----

REGENERATE = "clusterforge rules --format markdown > docs/policies.md"
DOMAIN_TITLES = {"power": "Power", "rack": "Rack density", "cooling": "Cooling", "network": "Network",
                 "storage": "Storage", "software": "Software", "slurm": "SLURM"}

POLICY_CONFIG_EXAMPLE = """\
apiVersion: clusterforge/v1
kind: PolicyConfig
electrical: {derate: 0.8, power_factor: 0.95}   # shared by PWR-001/002/006 and the planner
rules:
  PWR-002: {warn_fraction: 0.85}                 # a threshold: warn earlier
  PWR-005: {level: error, max_imbalance: 0.15}   # a level and a threshold
  RCK-006: {enabled: false}                      # no density contract here
"""

WAIVERS_EXAMPLE = """\
apiVersion: clusterforge/v1
kind: Waivers
waivers:
  - rule: PWR-002
    target: site.rows[0].racks[*].feeds          # every rack of row 0
    reason: B-side whips are upgraded to 60 A in the March maintenance window
    expires: 2027-03-31
    approver: facilities@example.com
"""

PACK_CONFIG_EXAMPLE = """\
{
  "clusterforge-blueprint": {
    "blueprint": "../blueprints/nlp-p5.yaml",
    "policyConfig": "../policy-config.yaml",
    "waivers": "../waivers.yaml"
  },
  "NET-006": "advisory"
}
"""

CROSSGUARD_ROWS = (
    ("NET-005", "`aws:ec2/launchTemplate:LaunchTemplate`",
     "`networkInterfaces` against `instanceType`: EFA interfaces ≤ the type's maximum, network card indexes unique "
     "and in range, the primary (card 0, device 0) not `efa-only`; types the catalog does not know are skipped"),
    ("NET-006", "the stack",
     "every placement group an EFA launch template (or its auto scaling group / instances) uses has strategy "
     "`cluster`, and one is used unless the capacity is reserved (ODCR or Capacity Block); an EFA auto scaling "
     "group uses one subnet; one of the template's security groups allows all traffic in from and out to itself "
     "(`SecurityGroupIngressRule`/`SecurityGroupEgressRule` with `ipProtocol` `-1` and `referencedSecurityGroupId` "
     "= the group, or inline `ingress`/`egress` with `self: true`)"),
    ("STO-001", "`aws:fsx/lustreFileSystem:LustreFileSystem`",
     "`storageCapacity` for the `deploymentType`/`storageType` (same helper as the blueprint rule)"),
    ("STO-002", "`aws:fsx/lustreFileSystem:LustreFileSystem`",
     "`perUnitStorageThroughput` is a tier of the deployment and storage type; none for SCRATCH"),
    (BLUEPRINT_POLICY, "the stack",
     "when configured with a `blueprint`, every rule over it; each unwaived error is one violation, "
     "`file:line: ID: message`"),
)


def _code(items: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{item}`" for item in items)


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    """A GitHub table; `|` inside a cell is escaped so it cannot split the cell."""
    cells = [" | ".join(cell.replace("|", "\\|") for cell in row) for row in rows]
    return [f"| {' | '.join(header)} |", "|" + "---|" * len(header)] + [f"| {row} |" for row in cells]


def _settings_table(rows: list[SettingDoc]) -> list[str]:
    return _table(("Key", "Default", "Meaning and source of the default"),
                  [(f"`{r.key}`", f"`{r.default}`", r.description) for r in rows])


def _pass_fail(rule: Rule) -> str:
    if rule.level == "error":
        text = ("Passes when the check holds; otherwise an `error` finding on the offending blueprint path, with the "
                "measured value, the limit and a fix, which fails the check unless waived")
    else:
        text = (f"Passes when the check holds; otherwise a `{rule.level}` finding on the offending blueprint path, "
                "with the measured value, the limit and a fix; it fails the check only with `--fail-level warning`")
    also = INPUTS[rule.id].also if rule.id in INPUTS else ""
    return text + (f". Also: {also}." if also else ".")


def rule_markdown(rule: Rule) -> list[str]:
    """One rule's section of the page."""
    inputs = INPUTS.get(rule.id, Inputs(()))
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
        "(for warnings).", "",
        *_table(("ID", "Level", "Domain", "Title"),
                [(f"[{r.id}](#{r.id.lower()})", r.level, r.domain, r.title) for r in all_rules]), "",
    ]


def _usage() -> list[str]:
    return [
        "## Running the checks", "", "```sh",
        "clusterforge check cluster.yaml",
        "clusterforge check blueprints/*.yaml --policy-config policy-config.yaml --waivers waivers.yaml",
        "clusterforge check cluster.yaml --skip PWR-005 --skip RCK-006    # do not run these rules",
        "clusterforge check cluster.yaml --fail-level warning              # warnings fail too",
        "clusterforge check cluster.yaml --format sarif -o clusterforge.sarif",
        "clusterforge rules                   # every rule; `clusterforge rules show PWR-002` for one", "```", "",
        "Exit codes: `0` pass; `1` policy failure, an unwaived finding at or above `--fail-level`; `2` unreadable "
        "or invalid input (YAML, schema, unknown hardware, an unknown rule id in `--skip` or the policy config), "
        "printed as `file:line: path: message`.", "",
        "- `--skip ID` (repeatable) does not run the rule at all, so it cannot report; `enabled: false` in the "
        "policy config does the same from a file.",
        "- `--fail-level error` (default) fails on unwaived errors; `--fail-level warning` also on warnings. "
        "Info findings never fail.",
        "- With several files, waivers apply across all of them, and the verdict covers them together.", "",
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
    ]


def _waivers() -> list[str]:
    return [
        "## Waivers (`--waivers`)", "",
        "A waiver accepts a known finding for a while, on the record. Waivers are data, reviewed like code:", "",
        "```yaml", *WAIVERS_EXAMPLE.splitlines(), "```", "",
        "- `rule`: the rule id. `target`: the finding's path as printed (`site.rows[0].racks[2].feeds`); `*` "
        "stands for any one index or name (`site.rows[*].racks[*]`), and a target also covers the paths below it.",
        "- `reason` (at least 10 characters) and `expires` (`YYYY-MM-DD`) are required; `approver` says who "
        "accepted the risk.",
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
    return ["## Output formats (`--format`, `-o FILE`)", "", *_table(("Format", "For", "Shape"), rows), "",
            "`-o FILE` writes the report atomically; the exit code is the same in every format.", ""]


def _crossguard() -> list[str]:
    rows = [(f"`{name}`", "mandatory" if name == BLUEPRINT_POLICY or REGISTRY[name].level == "error"
             else "advisory", where, text) for name, where, text in CROSSGUARD_ROWS]
    return [
        "## At `pulumi preview`: the CrossGuard pack", "",
        "The same rule functions run as a Pulumi policy pack (`policies/` in this repository), on the resources a "
        "stack is about to create:", "",
        "```sh", "pulumi preview --policy-pack policies/ --policy-pack-config policy-pack-config.json", "```", "",
        *_table(("Policy", "Enforcement", "Runs on", "Checks"), rows), "",
        "Pack config (`policy-pack-config.json`): relative paths start at the pack directory; an enforcement level "
        "per policy overrides the default:", "",
        "```json", *PACK_CONFIG_EXAMPLE.splitlines(), "```", "",
        "Props are read by their camelCase wire names and numbers may arrive as `32.0`. Values Pulumi does not know "
        "during preview (ids of resources not yet created) are skipped, or resolved through the engine's property "
        "dependencies; `pulumi up` checks them again once known.", "",
    ]


def page() -> str:
    """The whole reference page, as committed in docs/policies.md."""
    all_rules = rules()
    lines = [*_intro(all_rules), *_usage(), *_config(), *_waivers(), *software_sets(), *_formats(), *_crossguard(),
             "## Rules", "",
             "Inputs name blueprint fields; `a[].{b,c}` means fields `b` and `c` of every item of `a`. What stands "
             "in a rack is its `devices` list or, where a rack omits it, the planner's placement of the pools.", ""]
    for domain in dict.fromkeys(r.domain for r in all_rules):
        lines += [f"### {DOMAIN_TITLES.get(domain, domain.title())}", ""]
        for rule in (r for r in all_rules if r.domain == domain):
            lines += rule_markdown(rule)
    return "\n".join(lines).rstrip("\n") + "\n"
