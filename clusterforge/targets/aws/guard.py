"""Load the blueprint and run the policy rules; refuse, before any resource exists, on unwaived errors."""

from __future__ import annotations

from dataclasses import dataclass

from clusterforge.blueprint.load import Loaded
from clusterforge.pipeline.analysis import Analysis, PolicyInputs, analyze, read_policy
from clusterforge.policies import Finding
from clusterforge.targets.aws.settings import StackSettings


@dataclass(frozen=True)
class Checked:
    analysis: Analysis

    @property
    def loaded(self) -> Loaded:
        return self.analysis.loaded

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.analysis.verdict.findings if f.level == "warning"]


def check(settings: StackSettings) -> Checked:
    """The blueprint, catalogs, policy config and waivers from the stack config, through the same pipeline as
    `clusterforge check`; raises on any unwaived error."""
    policy = read_policy(PolicyInputs(settings.catalogs, settings.policy_config, settings.waivers))
    analysis = analyze(settings.blueprint, policy, controller_type=settings.controller_instance_type)
    analysis.refuse_on_errors(f"deploying {settings.blueprint.name}")
    return Checked(analysis)
