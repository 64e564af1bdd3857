"""One registry of rules: id, default level, domain, docstring, source and typed settings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from clusterforge.errors import Problem, shown
from clusterforge.policies.config import PolicyConfig, Settings
from clusterforge.policies.findings import Draft
from clusterforge.validation import closest, problems_from
from clusterforge.yamlsource import Source

if TYPE_CHECKING:
    from clusterforge.policies.context import Context

S = TypeVar("S", bound=Settings)
RuleFn = Callable[["Context", Any], Iterable[Draft]]


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
    targets: str = "any"  # "onprem", "aws" or "any": rules for the other target are not applicable

    @property
    def doc(self) -> str:
        return (self.check.__doc__ or "").strip()

    def settings_for(self, config: PolicyConfig) -> Settings:
        return self.settings.model_validate(config.rules.get(self.id, {}))


REGISTRY: dict[str, Rule] = {}


def rule(
    id: str, level: str, domain: str, title: str, source: str, settings: type[Settings] = Settings,
    needs_site: bool = False, targets: str = "any",
) -> Callable[[RuleFn], RuleFn]:
    """Register a rule function under a stable id (used in JSON, SARIF, JUnit, annotations and waivers)."""

    def register(fn: RuleFn) -> RuleFn:
        if id in REGISTRY:
            raise RuntimeError(f"rule {id} registered twice")
        REGISTRY[id] = Rule(id, level, domain, title, source, settings, fn, needs_site, targets)
        return fn

    return register


def settings_problems(config: PolicyConfig, source: Source, registry: dict[str, Rule]) -> list[Problem]:
    """Unknown rule ids and invalid per-rule settings in a policy config file, located."""
    problems: list[Problem] = []
    for rule_id, values in config.rules.items():
        path = ("rules", rule_id)
        if rule_id not in registry:
            suggestion = closest(rule_id, registry)
            problems.append(source.problem(path, f"unknown rule {shown(rule_id)}",
                                           f"did you mean {suggestion}?" if suggestion else "see `clusterforge rules`"))
            continue
        try:
            registry[rule_id].settings.model_validate(values)
        except ValidationError as exc:
            lines = source.lines if isinstance(source.lines, dict) else {}
            sub = Source(values, source.file, {k[2:]: v for k, v in lines.items() if k[:2] == path})
            for problem in problems_from(exc, sub, registry[rule_id].settings):
                problems.append(Problem(problem.message, problem.file, problem.line or source.line_of(path),
                                        f"rules.{rule_id}.{problem.path}".rstrip("."), problem.hint))
    return problems
