"""The CrossGuard policies as pulumi_policy objects, each named after the rule id it runs.

Building them starts nothing; `policy-pack/__main__.py` hands them to a PolicyPack, which starts the gRPC
analyzer server, so tests call each policy's `validate(args, report_violation)` directly.
"""

from __future__ import annotations

import importlib
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

from clusterforge.catalog import Catalog
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.registry import REGISTRY, Rule
from clusterforge.target_kernel import load_catalog
from clusterforge.targets.aws.crossguard.blueprint import CONFIG_KEYS, blueprint_violations
from clusterforge.targets.aws.crossguard.stack import Violation
from clusterforge.targets.aws.crossguard.tokens import BLUEPRINT_POLICY

PropsCheck = Callable[[Mapping[str, Any], Catalog], list[str]]
StackCheck = Callable[[Any, Catalog], list[Violation]]


def _rule(rule_id: str) -> Rule:
    load_rules()
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


def _function(dotted: str) -> Callable[..., Any]:
    """`module:function` of a rule's Preview, imported when the pack is built."""
    module, _, name = dotted.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return function


def resource_policy(rule: Rule, resource_types: tuple[str, ...], check: PropsCheck, catalog: Catalog
                    ) -> ResourceValidationPolicy:
    """A policy that runs `check` on the props of every resource of the rule's types."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if args.resource_type in resource_types:
            _report(rule.id, lambda: [Violation(m) for m in check(args.props, catalog)], report_violation)

    return ResourceValidationPolicy(name=rule.id, description=f"{rule.title}: {rule.doc}", validate=validate,
                                    enforcement_level=enforcement(rule.id))


def stack_policy(rule: Rule, check: StackCheck, catalog: Catalog) -> StackValidationPolicy:
    """A policy over the whole stack, for rules that need the links between resources (NET-006)."""
    assert rule.preview is not None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        _report(rule.id, lambda: check(args.resources, catalog), report_violation)

    return StackValidationPolicy(name=rule.id, description=f"{rule.title}: {rule.preview.checks}", validate=validate,
                                 enforcement_level=enforcement(rule.id))


def rule_policy(rule: Rule, catalog: Catalog) -> Policy:
    """The CrossGuard policy a rule's Preview declares."""
    assert rule.preview is not None
    check = _function(rule.preview.check)
    if rule.preview.scope == "stack":
        return stack_policy(rule, check, catalog)
    return resource_policy(rule, rule.preview.types, check, catalog)


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
    """Every policy of the pack: one per rule that declares a Preview, and the blueprint policy. `base` is the
    pack directory (where relative config paths start)."""
    cat = catalog if catalog is not None else load_catalog()
    return [*(rule_policy(rule, cat) for rule in load_rules() if rule.preview is not None), blueprint_policy(base)]
