"""The CrossGuard policies as pulumi_policy objects, each named after the rule id it runs.

Building them starts nothing; `policies/__main__.py` hands them to a PolicyPack, which starts the gRPC
analyzer server, so tests call each policy's `validate(args, report_violation)` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from clusterforge.catalog import Catalog, load_catalog
from clusterforge.crossguard.blueprint import CONFIG_KEYS, blueprint_violations
from clusterforge.crossguard.launch_template import launch_template_problems
from clusterforge.crossguard.lustre import capacity_problems, throughput_problems
from clusterforge.crossguard.placement import efa_stack_problems
from clusterforge.crossguard.stack import Violation
from clusterforge.crossguard.tokens import BLUEPRINT_POLICY, LAUNCH_TEMPLATE, LUSTRE
from clusterforge.policies.registry import REGISTRY, Rule

PropsCheck = Callable[[Mapping[str, Any]], list[str]]


def _rule(rule_id: str) -> Rule:
    import clusterforge.policies.rules  # noqa: F401  (registers the rules)

    return REGISTRY[rule_id]


def enforcement(rule_id: str) -> EnforcementLevel:
    """Error rules block (`pulumi up` stops); warnings advise. The pack config may override either."""
    return EnforcementLevel.MANDATORY if _rule(rule_id).level == "error" else EnforcementLevel.ADVISORY


def _report(name: str, check: Callable[[], Iterable[Violation]], report_violation: ReportViolation) -> None:
    """Report each violation; a crashing check is reported too, as the blueprint engine does, not raised."""
    try:
        violations = list(check())
    except UnknownValueError:
        raise  # the SDK turns this into "can't run during preview"
    except Exception as exc:  # a bug in one policy must not hide the others
        violations = [Violation(f"policy {name} failed: {type(exc).__name__}: {exc} (a clusterforge bug)")]
    for violation in violations:
        report_violation(violation.message, violation.urn)


def resource_policy(rule_id: str, resource_type: str, check: PropsCheck) -> ResourceValidationPolicy:
    """A policy that runs `check` on the props of every resource of one type."""
    rule = _rule(rule_id)

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type == resource_type:
            _report(rule_id, lambda: [Violation(m) for m in check(args.props)], report_violation)

    return ResourceValidationPolicy(name=rule_id, description=f"{rule.title}: {rule.doc}", validate=validate,
                                    enforcement_level=enforcement(rule_id))


def placement_policy() -> StackValidationPolicy:
    """NET-006 over the whole stack: it needs the links between templates, groups and rules."""
    rule = _rule("NET-006")

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        _report(rule.id, lambda: efa_stack_problems(args.resources), report_violation)

    return StackValidationPolicy(name=rule.id, description=f"{rule.title}: EFA instances in a cluster placement "
                                 "group and one subnet, with a security group allowing all traffic to and from "
                                 "itself", validate=validate, enforcement_level=enforcement(rule.id))


def blueprint_policy(base: Path) -> StackValidationPolicy:
    """Every rule over the configured blueprint; relative config paths resolve against `base`."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        config = args.get_config()
        _report(BLUEPRINT_POLICY, lambda: [Violation(m) for m in blueprint_violations(config, base)],
                report_violation)

    schema = PolicyConfigSchema(properties={key: {"type": "string", "description": text}
                                            for key, text in CONFIG_KEYS.items()})
    return StackValidationPolicy(name=BLUEPRINT_POLICY, description="Every clusterforge rule over the stack's "
                                 "blueprint: unwaived errors block", validate=validate,
                                 enforcement_level=EnforcementLevel.MANDATORY, config_schema=schema)


def policies(base: Path, catalog: Catalog | None = None) -> list[Policy]:
    """Every policy of the pack; `base` is the pack directory (where relative config paths start)."""
    cat = catalog if catalog is not None else load_catalog()
    return [
        resource_policy("NET-005", LAUNCH_TEMPLATE, lambda props: launch_template_problems(props, cat)),
        placement_policy(),
        resource_policy("STO-001", LUSTRE, capacity_problems),
        resource_policy("STO-002", LUSTRE, throughput_problems),
        blueprint_policy(base),
    ]
