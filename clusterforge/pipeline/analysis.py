"""One pipeline from a blueprint to everything a command shows: load it, plan it with the policy config,
evaluate it with the waivers. `check`, `plan`, `render`, `report`, `new`, the lab, the stack guard and the
CrossGuard pack all go through here, so the same inputs reach the same verdict whichever command reads them.

Imports of the engine happen inside the functions: the CLI imports this module for `PolicyInputs` and must
stay quick for `--help`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clusterforge.core.bulk import bulk_objects
from clusterforge.policies.policy_inputs import Policy as Policy  # re-exported: commands name them from here
from clusterforge.policies.policy_inputs import PolicyInputs as PolicyInputs

if TYPE_CHECKING:
    from clusterforge.blueprint.load import Loaded
    from clusterforge.core.errors import Problem
    from clusterforge.model import Cluster
    from clusterforge.plan import Plan
    from clusterforge.policies.engine import Verdict

DEFAULT_INPUTS = PolicyInputs()  # the built-in catalog and thresholds, no waivers


@dataclass(frozen=True)
class Analysis:
    """What a command needs: the blueprint as written, the cluster as it is built (on AWS with the SLURM
    controller the stack adds), its plan and the policy verdict on it."""

    loaded: Loaded
    cluster: Cluster
    implicit_controller: bool
    plan: Plan
    verdict: Verdict
    policy: Policy

    def refuse_on_errors(self, what: str) -> None:
        """Raise an input error, one problem per unwaived error finding led by its rule id, when the verdict
        fails: for the commands that would build from a design the check rejects (the stack, the lab)."""
        from clusterforge.core.errors import ClusterforgeError, Problem

        errors = self.verdict.errors
        if self.verdict.failed and errors:
            raise ClusterforgeError([Problem(f"{f.id}: {f.message}", f.file, f.line, f.path, f.hint) for f in errors]
                                    + [Problem(f"{what} refused: the policy check has {len(errors)} unwaived "
                                               "error(s)", self.loaded.file, hint="fix the design or waive them")])


def read_policy(inputs: PolicyInputs = DEFAULT_INPUTS) -> Policy:
    """The catalog, policy config and waivers of `inputs`; unknown `skip` ids are input errors."""
    from clusterforge.core.errors import ClusterforgeError, Problem
    from clusterforge.core.validation import closest
    from clusterforge.policies import load_policy_config, load_waivers
    from clusterforge.policies.discovery import load_rules
    from clusterforge.policies.registry import REGISTRY
    from clusterforge.target_kernel import load_catalog

    load_rules()  # a config's `rules:` and `--skip` are checked against them
    unknown = [Problem(f"unknown rule {rule_id!r}", "command line", path="--skip", hint=f"did you mean {near}?" if (
        near := closest(rule_id, REGISTRY)) else "see `clusterforge rules`") for rule_id in inputs.skip
        if rule_id not in REGISTRY]
    if unknown:
        raise ClusterforgeError(unknown)
    with bulk_objects():
        return Policy(inputs, load_catalog(inputs.catalogs), load_policy_config(inputs.policy_config),
                      tuple(load_waivers(inputs.waivers)))


def load(blueprint: Path, policy: Policy) -> Loaded:
    """Read, parse and validate one blueprint against the policy's catalog."""
    from clusterforge.blueprint.load import load_blueprint

    with bulk_objects():
        return load_blueprint(blueprint, policy.catalog)


def analyze(
    blueprint: Path | Loaded, policy: Policy, *, detail: bool = True, controller_type: str | None = None,
    also_skip: frozenset[str] = frozenset(),
) -> Analysis:
    """Load (unless given loaded), plan with the policy config and evaluate with the waivers.

    `detail=False` plans only what the rules read (placement and fabric), for `check`. `controller_type`: the
    instance an AWS cluster without a controller pool gets, as the stack builds it (default: the stack's).
    `also_skip`: rules a caller runs elsewhere (facility rules of a shared site run once on the combined load).
    """
    from clusterforge.blueprint.load import Loaded
    from clusterforge.plan import build_plan
    from clusterforge.policies import evaluate
    from clusterforge.policies.root_access import refuse_root_access
    from clusterforge.target_kernel import blueprint_part, target_of

    loaded = blueprint if isinstance(blueprint, Loaded) else load(blueprint, policy)
    refuse_root_access(loaded.cluster, loaded.source, policy.config)  # before any rule runs or file is written
    cluster, implicit = loaded.cluster, False
    with_controller = blueprint_part(target_of(cluster)).with_controller
    if with_controller is not None:
        cluster, implicit = with_controller(cluster, controller_type)
    inputs = policy.inputs
    with bulk_objects():
        plan = build_plan(cluster, loaded.catalog, policy.config, detail=detail)
        verdict = evaluate(loaded, plan, policy.config, policy.waivers, (*inputs.skip, *sorted(also_skip)),
                           inputs.fail_level, inputs.today)
    return Analysis(loaded, cluster, implicit, plan, verdict, policy)


def load_set(files: Sequence[Path], policy: Policy,
             read: Callable[[Path, Policy], Loaded] | None = None) -> tuple[list[Loaded], list[Problem]]:
    """Every blueprint of a set, each read by `read` (default: `load`), and the problems of all that cannot be
    read, together: one unreadable file must not hide what the others hold (the caller checks those and reports
    both)."""
    from clusterforge.core.errors import ClusterforgeError

    loadeds, problems = [], []
    for path in files:
        try:
            loadeds.append((read or load)(path, policy))
        except ClusterforgeError as error:
            problems += error.problems
    return loadeds, problems


@dataclass(frozen=True)
class SetVerdict:
    """One verdict over a set of blueprints, what was checked together (for the reader: `notes`), and the input
    problems of the blueprints that could not be judged (their settings refused before any rule ran)."""

    verdict: Verdict
    notes: tuple[str, ...]
    problems: tuple[Problem, ...] = ()
    judged: int = 0  # how many blueprints the verdict covers


def check_set(loadeds: Sequence[Loaded], policy: Policy) -> SetVerdict:
    """The verdict over several blueprints: each planned and evaluated alone, except that teams sharing one site
    file have its facility rules run once on their combined load (compose.check_together); waivers apply across
    the set. One blueprint's verdict is the set's (decided with these waivers already). A blueprint whose
    settings the root-access gate refuses is left out of the verdict and its problems returned, so the others are
    still judged."""
    from clusterforge.compose.shared_site import check_together, groups
    from clusterforge.core.errors import ClusterforgeError
    from clusterforge.files.paths import report_path
    from clusterforge.policies.engine import Verdict, merge
    from clusterforge.policies.registry import REGISTRY
    from clusterforge.policies.root_access import refuse_root_access

    accepted: list[Loaded] = []
    problems: list[Problem] = []
    for loaded in loadeds:
        try:
            refuse_root_access(loaded.cluster, loaded.source, policy.config)
            accepted.append(loaded)
        except ClusterforgeError as error:
            problems += error.problems
    if not accepted:
        return SetVerdict(Verdict((), (), policy.inputs.fail_level), (), tuple(problems), 0)
    site_rules = frozenset(r.id for r in REGISTRY.values() if r.needs_site)
    shared = groups(accepted)
    in_a_group = {id(loaded) for group in shared for loaded in group}
    verdicts = [analyze(loaded, policy, detail=False,
                        also_skip=site_rules if id(loaded) in in_a_group else frozenset()).verdict
                for loaded in accepted]
    notes = []
    for group in shared:
        combined, together = check_together(group, policy)
        verdicts.append(together)
        teams = ", ".join(report_path(g.file) for g in group)
        notes.append(f"{report_path(combined.file)}: shared by {teams}: facility rules check their combined load")
    verdict = verdicts[0] if len(verdicts) == 1 else merge(verdicts, policy.waivers, policy.inputs.today)
    return SetVerdict(verdict, tuple(notes), tuple(problems), len(accepted))
