"""Security rules: the overrides a blueprint may make to the stack's secure defaults, reported in the PR."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from pydantic import Field

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule
from clusterforge.targets.aws.section import aws_section

DOMAIN = domain("security", "Security", 80)

BROAD_POLICIES = ("AdministratorAccess", "PowerUserAccess", "IAMFullAccess")


@rule("SEC-001", "error", DOMAIN, "IMDSv2 required",
      "AWS EC2 User Guide, Use IMDSv2 (session tokens stop SSRF credential theft)", target="aws",
      inputs=Inputs(("aws.security.imds_tokens",)))
def imds_v2(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Instance metadata answers only session-token (IMDSv2) requests on every node."""
    aws = aws_section(ctx.cluster)
    if aws is not None and aws.security.imds_tokens != "required":
        yield Draft(("aws", "security", "imds_tokens"), "instance metadata accepts IMDSv1 requests "
                    "(imds_tokens: optional): any SSRF in a job can read the node's credentials",
                    "remove the override; software that needs IMDSv1 should be upgraded")


@rule("SEC-002", "error", DOMAIN, "Encryption at rest",
      "AWS EBS encryption; FSx for Lustre and S3 encrypt at rest, the stack adds KMS and TLS-only", target="aws",
      inputs=Inputs(("aws.security.encrypt_root_volumes",)))
def encryption_at_rest(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Node root volumes are encrypted (FSx and the checkpoint bucket always are)."""
    aws = aws_section(ctx.cluster)
    if aws is not None and not aws.security.encrypt_root_volumes:
        yield Draft(("aws", "security", "encrypt_root_volumes"), "node root volumes would be unencrypted",
                    "remove encrypt_root_volumes: false")


def _internet(cidr: str) -> bool:
    try:
        network = ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False
    return network.prefixlen == 0


@rule("SEC-003", "error", DOMAIN, "No ingress from the internet",
      "AWS Well-Architected security pillar; nodes are reached through SSM Session Manager", target="aws",
      inputs=Inputs(("aws.security.ingress[].{cidr,protocol,from_port,to_port}",)))
def no_open_ingress(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """No ingress rule admits 0.0.0.0/0 or ::/0: reach nodes through Session Manager or a VPN range."""
    aws = aws_section(ctx.cluster)
    if aws is None:
        return
    for i, entry in enumerate(aws.security.ingress):
        if _internet(entry.cidr):
            yield Draft(("aws", "security", "ingress", i, "cidr"),
                        f"ingress {entry.protocol} {entry.from_port}-{entry.to_port} is open to the internet "
                        f"({entry.cidr})", "use your VPN or office range, or Session Manager port forwarding")


class LeastPrivilegeSettings(Settings):
    review_extra: bool = Field(True, description="warn for every extra managed policy so a reviewer sees it")


@rule("SEC-004", "error", DOMAIN, "Least-privilege node role",
      "AWS IAM best practices (least privilege); nodes need SSM and this cluster's buckets only",
      LeastPrivilegeSettings, target="aws",
      inputs=Inputs(("aws.security.node_policies",)))
def least_privilege(ctx: Context, settings: LeastPrivilegeSettings) -> Iterator[Draft]:
    """Nodes carry SSM and this cluster's buckets; no broad managed policy (administrator, power user, *FullAccess)."""
    aws = aws_section(ctx.cluster)
    if aws is None:
        return
    for i, arn in enumerate(aws.security.node_policies):
        name = arn.rsplit("/", 1)[-1]
        path = ("aws", "security", "node_policies", i)
        if name in BROAD_POLICIES or name.endswith("FullAccess"):
            yield Draft(path, f"node role would get {name}: every job on every node could use it",
                        "grant a policy scoped to the resources the jobs need")
        elif settings.review_extra:
            yield Draft(path, f"node role gets the extra policy {name}", "check that it is scoped to this cluster",
                        level="warning")
