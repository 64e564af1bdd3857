"""Load the blueprint and run the policy rules; refuse, before any resource exists, on unwaived errors."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.aws.settings import StackSettings
from clusterforge.errors import ClusterforgeError, Problem
from clusterforge.load import Loaded, load_blueprint
from clusterforge.policies import Finding, Verdict, evaluate, load_policy_config, load_waivers


@dataclass(frozen=True)
class Checked:
    loaded: Loaded
    verdict: Verdict

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.verdict.findings if f.level == "warning"]


def refusal(errors: list[Finding]) -> ClusterforgeError:
    """One problem per error finding, each led by its rule id and located on the blueprint's line."""
    return ClusterforgeError([Problem(f"{f.id}: {f.message}", f.file, f.line, f.path, f.hint) for f in errors])


def check(settings: StackSettings) -> Checked:
    """The blueprint, the policy config and the waivers from the stack config; raises on any error finding."""
    loaded = load_blueprint(settings.blueprint)
    verdict = evaluate(loaded, config=load_policy_config(settings.policy_config),
                       waivers=load_waivers(settings.waivers))
    if verdict.errors:
        raise refusal(verdict.errors)
    return Checked(loaded, verdict)
