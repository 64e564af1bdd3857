"""One registry of rules: each rule is one declaration next to its function.

The declaration holds everything said about the rule: id, level, domain, title, source, typed settings, the
inputs it reads and where it also runs at `pulumi preview`. `clusterforge rules`, docs/policies.md, SARIF
rule metadata and the CrossGuard pack are derived from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from clusterforge.core.errors import Problem, shown
from clusterforge.core.hints import Kinds, and_more
from clusterforge.core.validation import closest, problems_from
from clusterforge.files.yamlsource import Source
from clusterforge.policies.config import PolicyConfig, Settings
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs, Preview

if TYPE_CHECKING:
    from clusterforge.policies.context import Context

S = TypeVar("S", bound=Settings)
RuleFn = Callable[["Context", Any], Iterable[Draft]]


@dataclass(frozen=True)
class Domain:
    """A heading of the reference: `order` places it among the others (power 10, rack 20, ...)."""

    name: str
    title: str
    order: int


DOMAINS: dict[str, Domain] = {}


def domain(name: str, title: str, order: int) -> Domain:
    """Declare a domain once; a module in another package may declare the same one again, identically."""
    declared = DOMAINS.setdefault(name, Domain(name, title, order))
    if declared != Domain(name, title, order):
        raise RuntimeError(f"domain {name} declared twice with different titles or orders")
    return declared


@dataclass(frozen=True)
class Rule:
    id: str
    level: str
    domain: str
    title: str
    source: str
    settings: type[Settings]
    check: RuleFn
    needs_site: bool = False
    target: str | None = None  # a target's name: the rule applies only to blueprints of that target
    inputs: Inputs = field(default_factory=Inputs)
    preview: Preview | None = None
    # its findings say other rules read a figure that cannot be meant (a unit slip): shown before every other finding
    # of their level, so the cause is read before its effects
    leads: bool = False

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()

    def settings_for(self, config: PolicyConfig) -> Settings:
        return self.settings.model_validate(config.rules.get(self.id, {}))


REGISTRY: dict[str, Rule] = {}


def rule(
    id: str, level: str, domain: Domain, title: str, source: str, settings: type[Settings] = Settings, *,
    inputs: Inputs, needs_site: bool = False, target: str | None = None, preview: Preview | None = None,
    leads: bool = False,
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule function under a stable id (used in JSON, SARIF, JUnit, annotations and waivers)."""

    def register(fn: RuleFn) -> RuleFn:
        if id in REGISTRY:
            raise RuntimeError(f"rule {id} registered twice")
        REGISTRY[id] = Rule(id, level, domain.name, title, source, settings, fn, needs_site, target, inputs, preview,
                            leads)
        return fn

    return register


def ordered() -> list[Rule]:
    """Every registered rule in the order docs/policies.md shows: by domain order, then by id."""
    return sorted(REGISTRY.values(), key=lambda r: (DOMAINS[r.domain].order, r.id))


def coverage() -> dict[str, tuple[str, ...]]:
    """Rule id → the Pulumi resource types its CrossGuard policy reads."""
    return {r.id: r.preview.types for r in ordered() if r.preview is not None}


def settings_problems(config: PolicyConfig, source: Source, registry: dict[str, Rule]) -> list[Problem]:
    """Unknown rule ids and invalid per-rule settings in a policy config file, located: at most hints.PER_KIND of
    one kind, the rest counted (only those are located and searched for a close rule id)."""
    kinds = Kinds()
    problems: list[Problem] = []
    for rule_id, values in config.rules.items():
        path = ("rules", rule_id)
        if rule_id not in registry:
            message = f"unknown rule {shown(rule_id)}"
            if kinds.kept(message):
                suggestion = closest(rule_id, registry)
                problems.append(source.problem(path, message, f"did you mean {suggestion}?" if suggestion
                                               else "see `clusterforge rules`"))
            continue
        try:
            registry[rule_id].settings.model_validate(values)
        except ValidationError as exc:
            lines = source.lines if isinstance(source.lines, dict) else {}
            sub = Source(values, source.file, {k[2:]: v for k, v in lines.items() if k[:2] == path})
            for problem in problems_from(exc, sub, registry[rule_id].settings):
                problems.append(Problem(problem.message, problem.file, problem.line or source.line_of(path),
                                        f"rules.{rule_id}.{problem.path}".rstrip("."), problem.hint))
    return kinds.capped(problems, lambda p: p.message,
                        lambda p, n: dataclasses.replace(p, message=and_more(p.message, n), hint=""))
