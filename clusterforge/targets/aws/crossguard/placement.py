"""NET-006 at preview: EFA nodes in one cluster placement group and one subnet, with a security group that
allows all traffic to and from itself (AWS EFA user guide; ParallelCluster EfaPlacementGroup and
EfaSecurityGroup validators)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clusterforge.catalog import Catalog
from clusterforge.targets.aws.crossguard.props import UNKNOWN, as_int, as_text, elements, is_list, read
from clusterforge.targets.aws.crossguard.stack import StackResource, Violation, handles, of_type, points_at, targets
from clusterforge.targets.aws.crossguard.tokens import (
    AUTOSCALING_GROUP,
    EGRESS_RULE,
    INGRESS_RULE,
    INSTANCE,
    LAUNCH_TEMPLATE,
    LEGACY_RULE,
    PLACEMENT_GROUP,
    PLACEMENT_OPT_OUT_TAG,
    SECURITY_GROUP,
)

SELF_RULE_FIX = ('add a SecurityGroupIngressRule and a SecurityGroupEgressRule with ipProtocol "-1" and '
                 "referencedSecurityGroupId set to the group's own id")


def uses_efa(template: StackResource) -> bool:
    """A launch template with at least one `efa` or `efa-only` interface."""
    kinds = (as_text(read(nic, "interfaceType")) for nic in elements(read(template.props, "networkInterfaces")))
    return any(kind in ("efa", "efa-only") for kind in kinds)


def launched_from(template: StackResource, resources: Sequence[StackResource]) -> list[StackResource]:
    """Auto scaling groups and instances that launch from the template."""
    spec = ("mixedInstancesPolicy", "launchTemplate", "launchTemplateSpecification")
    found = []
    for resource in of_type(resources, AUTOSCALING_GROUP, INSTANCE):
        refs = [("launchTemplate", read(resource.props, "launchTemplate", key)) for key in ("id", "name")]
        refs += [("mixedInstancesPolicy", read(resource.props, *spec, key))
                 for key in ("launchTemplateId", "launchTemplateName")]
        if any(targets(resource, prop, value, [template]) for prop, value in refs):
            found.append(resource)
    return found


def _reserved(resource: StackResource) -> bool:
    """Targets a capacity reservation or Capacity Block, whose placement AWS fixed when it was reserved."""
    target = read(resource.props, "capacityReservationSpecification", "capacityReservationTarget")
    market = read(resource.props, "instanceMarketOptions", "marketType")
    return (isinstance(target, Mapping) and any(read(target, key) for key in target)) or market == "capacity-block"


def _opted_out(template: StackResource) -> bool:
    """The blueprint opted this pool out of a placement group on purpose: NET-006 warns in the PR check (as
    ParallelCluster's validator does for an explicit opt-out), so preview does not block it."""
    return bool(read(template.props, "tags", PLACEMENT_OPT_OUT_TAG) == "none")


def placement_problems(template: StackResource, users: Sequence[StackResource],
                       resources: Sequence[StackResource]) -> list[Violation]:
    """Cluster strategy for every placement group the template's instances use; one where none is reserved."""
    groups = of_type(resources, PLACEMENT_GROUP)
    refs = [(template, "placement", read(template.props, "placement", key)) for key in ("groupName", "groupId")]
    for user in users:
        refs += [(user, key, read(user.props, key)) for key in ("placementGroup", "placementGroupId")]
    declared = [(source, prop, value) for source, prop, value in refs if value not in (None, "")]
    problems: dict[str, Violation] = {}
    for source, prop, value in declared:
        for group in targets(source, prop, value, groups):
            strategy = read(group.props, "strategy")
            if isinstance(strategy, str) and strategy != "cluster":
                problems[group.urn] = Violation(
                    f"placement group {group.name} uses strategy {strategy!r}; EFA instances from launch template "
                    f"{template.name} need strategy 'cluster'", group.urn)
    if not declared and not any(_reserved(r) for r in (template, *users)) and not _opted_out(template):
        problems[template.urn] = Violation(
            f"EFA launch template {template.name} launches outside a cluster placement group: set "
            "placement.groupName (or placementGroup on its auto scaling group)", template.urn)
    return list(problems.values())


def subnet_problems(users: Sequence[StackResource]) -> list[Violation]:
    """An auto scaling group of EFA nodes uses one subnet (EFA traffic does not cross subnets or AZs)."""
    problems = []
    for group in of_type(users, AUTOSCALING_GROUP):
        subnets = read(group.props, "vpcZoneIdentifiers")
        if is_list(subnets) and len(subnets) > 1:
            problems.append(Violation(f"auto scaling group {group.name} spreads EFA instances over {len(subnets)} "
                                      "subnets; keep them in one subnet of one AZ", group.urn))
    return problems


def security_groups(template: StackResource, resources: Sequence[StackResource]) -> list[StackResource]:
    """The stack's security groups on the template's interfaces (or its vpcSecurityGroupIds)."""
    candidates = of_type(resources, SECURITY_GROUP)
    refs: list[tuple[str, Any]] = []
    for nic in elements(read(template.props, "networkInterfaces")):
        listed = read(nic, "securityGroups")
        values = [UNKNOWN] if nic is UNKNOWN or listed is UNKNOWN else list(elements(listed))
        refs += [("networkInterfaces", value) for value in values]
    listed = read(template.props, "vpcSecurityGroupIds")
    refs += [("vpcSecurityGroupIds", v) for v in ([UNKNOWN] if listed is UNKNOWN else elements(listed))]
    found: dict[str, StackResource] = {}
    for prop, value in refs:
        found |= {group.urn: group for group in targets(template, prop, value, candidates)}
    return list(found.values())


def _all_traffic(protocol: Any) -> bool:
    text = as_text(protocol)
    return (text is not None and text.lower() in ("-1", "all")) or as_int(protocol) == -1


def self_directions(group: StackResource, resources: Sequence[StackResource]) -> set[str]:
    """Which of ingress and egress allow all traffic from/to the group itself."""
    found: set[str] = set()
    own = handles(group)
    for direction in ("ingress", "egress"):
        for entry in elements(read(group.props, direction)):
            named = {as_text(g) for g in elements(read(entry, "securityGroups"))}
            if _all_traffic(read(entry, "protocol")) and (read(entry, "self") is True or named & own):
                found.add(direction)
    for rule in of_type(resources, INGRESS_RULE, EGRESS_RULE):
        if (_all_traffic(read(rule.props, "ipProtocol")) and points_at(rule, "securityGroupId", group)
                and points_at(rule, "referencedSecurityGroupId", group)):
            found.add("ingress" if rule.resource_type == INGRESS_RULE else "egress")
    for rule in of_type(resources, LEGACY_RULE):
        kind = as_text(read(rule.props, "type"))
        itself = read(rule.props, "self") is True or points_at(rule, "sourceSecurityGroupId", group)
        if kind in ("ingress", "egress") and _all_traffic(read(rule.props, "protocol")) and itself and \
                points_at(rule, "securityGroupId", group):
            found.add(kind)
    return found


def security_group_problems(template: StackResource, resources: Sequence[StackResource]) -> list[Violation]:
    """At least one of the template's security groups allows all traffic in from and out to itself."""
    groups = security_groups(template, resources)
    if not groups:
        return []  # the VPC's default group, or groups managed outside this stack: nothing to inspect
    missing = {g.name: {"ingress", "egress"} - self_directions(g, resources) for g in groups}
    if any(not gaps for gaps in missing.values()):
        return []
    detail = "; ".join(f"{name} has no self-referencing all-traffic {' or '.join(sorted(gaps))} rule"
                       for name, gaps in missing.items())
    urn = groups[0].urn if len(groups) == 1 else template.urn
    return [Violation(f"EFA launch template {template.name}: {detail}; {SELF_RULE_FIX}", urn)]


def efa_stack_problems(resources: Sequence[StackResource], catalog: Catalog | None = None) -> list[Violation]:
    """NET-006 over a whole stack: placement, subnet and security group of every EFA launch template."""
    problems: list[Violation] = []
    for template in of_type(resources, LAUNCH_TEMPLATE):
        if not uses_efa(template):
            continue
        users = launched_from(template, resources)
        problems += placement_problems(template, users, resources)
        problems += subnet_problems(users)
        problems += security_group_problems(template, resources)
    return list(dict.fromkeys(problems))  # an auto scaling group shared by two templates is reported once
