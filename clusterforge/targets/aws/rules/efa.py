"""EFA rules of target aws: interfaces per instance type and the cluster placement group (NET-005, NET-006)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft, PoolRef
from clusterforge.policies.inputs import Inputs, Preview
from clusterforge.policies.registry import domain, rule
from clusterforge.targets.aws.crossguard.tokens import (
    AUTOSCALING_GROUP,
    EGRESS_RULE,
    INGRESS_RULE,
    INSTANCE,
    LAUNCH_TEMPLATE,
    LEGACY_RULE,
    PLACEMENT_GROUP,
    SECURITY_GROUP,
)
from clusterforge.targets.aws.efa import reservation
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.section import aws_pool, aws_section

DOMAIN = domain("network", "Network", 40)


@rule("NET-005", "error", DOMAIN, "EFA interfaces",
      "AWS EC2 User Guide, EFA supported instance types (p5/p5e 32, p5en 16, p6-b200 8, p4d 4) and efa-acc-inst-types "
      "(an EFA-only interface is never primary); p6-b300: 16 EFA on cards 1-16, card 0 ENA only (aws-parallelcluster "
      "issue 7143)", target="aws",
      inputs=Inputs(("pools[].{hardware,efa_interfaces}",), ("efa_max_interfaces", "efa_bandwidth_gbps"),
                    also="a `warning` when a pool uses fewer interfaces than the instance type offers"),
      preview=Preview((LAUNCH_TEMPLATE,),
                      "clusterforge.targets.aws.crossguard.launch_template:launch_template_problems",
                      "`networkInterfaces` against `instanceType`: EFA interfaces ≤ the type's maximum, network card "
                      "indexes unique and in range, the primary (card 0, device 0) not `efa-only`, no `efa` or "
                      "`efa-only` on a card the type keeps for ENA (catalog `primary_card_efa: false`: p6-b300's "
                      "card 0); types the catalog does not know are skipped"))
def efa_interfaces(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Configured EFA interfaces ≤ the instance maximum (error) and = it for full bandwidth (warning below)."""
    for i, pool in enumerate(ctx.cluster.pools):
        instance = ctx.instance(pool)
        asked = aws_pool(pool).efa_interfaces
        if not isinstance(instance, Ec2Instance) or asked is None:
            continue
        maximum = instance.efa_max_interfaces
        path = ("pools", i, "efa_interfaces")
        if asked > maximum:
            yield Draft(path, f"pool {pool.name} asks for {asked} EFA interfaces; {pool.hardware} "
                        f"supports {maximum}", f"set efa_interfaces: {maximum} or omit it", asked,
                        maximum, "interfaces")
        elif asked < maximum:
            bandwidth = instance.efa_bandwidth_gbps * asked / maximum if maximum else 0
            yield Draft(path, f"pool {pool.name} uses {asked} of {maximum} EFA interfaces: about "
                        f"{bandwidth:.0f} of {instance.efa_bandwidth_gbps} Gbps", "omit efa_interfaces for the "
                        "instance's full layout", asked, maximum, "interfaces", level="warning")


@rule("NET-006", "error", DOMAIN, "EFA placement",
      "AWS placement group docs; ParallelCluster EfaMultiAz / EfaPlacementGroup validators", target="aws",
      inputs=Inputs(("pools[].{hardware,efa_interfaces,placement,availability_zone}",
                     "aws.{availability_zones,capacity}"), ("efa_max_interfaces",)),
      preview=Preview((PLACEMENT_GROUP, SECURITY_GROUP, INGRESS_RULE, EGRESS_RULE, LEGACY_RULE, AUTOSCALING_GROUP,
                       INSTANCE, LAUNCH_TEMPLATE), "clusterforge.targets.aws.crossguard.placement:efa_stack_problems",
                      "every placement group an EFA launch template (or its auto scaling group / instances) uses has "
                      "strategy `cluster`, and one is used unless the capacity is reserved (ODCR or Capacity Block); "
                      "an EFA auto scaling group uses one subnet; one of the template's security groups allows all "
                      "traffic in from and out to itself (`SecurityGroupIngressRule`/`SecurityGroupEgressRule` with "
                      "`ipProtocol` `-1` and `referencedSecurityGroupId` = the group, or inline `ingress`/`egress` "
                      "with `self: true`)", scope="stack",
                      where="the EFA launch templates and the placement groups, auto scaling groups, instances and "
                            "security group rules they use"))
def efa_placement(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """The EFA nodes of one pool share one cluster placement group in one AZ and one subnet. A pool that launches
    into an ODCR or a Capacity Block may go without a group of its own: AWS placed that capacity when it was
    reserved; an explicit `placement: none` on on-demand capacity is a warning (ParallelCluster does the same;
    the CrossGuard policy agrees)."""
    aws = aws_section(ctx.cluster)
    if aws is None:
        return
    for i, pool in enumerate(ctx.cluster.pools):
        instance = ctx.instance(pool)
        own = aws_pool(pool)
        if not isinstance(instance, Ec2Instance) or not instance.efa_max_interfaces or own.efa_interfaces == 0:
            continue
        if own.placement != "cluster" and reservation(aws, pool) is None:
            # an explicit opt-out is the user's call, as in ParallelCluster's validator: warn, don't block
            yield Draft(("pools", i, "placement"), f"pool {pool.name} uses EFA on on-demand capacity without a "
                        "cluster placement group: its nodes may land far apart and lose EFA bandwidth and latency",
                        "set placement: cluster unless the spread is intended", level="warning",
                        where=PoolRef(pool.name))
        if own.availability_zone is not None and own.availability_zone not in aws.availability_zones:
            yield Draft(("pools", i, "availability_zone"), f"pool {pool.name} names AZ {own.availability_zone}, "
                        f"not one of {', '.join(aws.availability_zones)}", "use one of aws.availability_zones")
        elif own.availability_zone is None and len(aws.availability_zones) > 1:
            yield Draft(("aws", "availability_zones"), f"EFA pool {pool.name} would span "
                        f"{len(aws.availability_zones)} AZs; EFA traffic stays within one placement group in one AZ",
                        f"set pools[{i}].availability_zone or list one AZ", len(aws.availability_zones), 1, "AZs")
