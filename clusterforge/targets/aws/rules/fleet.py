"""Fleet rules of target aws: how long EC2 takes to launch the cluster's instances, and the sizes AWS refuses
(FLT-001 to FLT-003). Figures are from reference/scale.md, which cites AWS's EC2 API throttling page, the EC2 Fleet
quotas and the Capacity Blocks user guide.

Every instance a pool may run counts: `max_count` where power saving is on (SLURM may power all of them up at
once for one large job), else `count`.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from clusterforge.model import Cluster, Pool
from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule
from clusterforge.powersave.config import FLEET_MAX
from clusterforge.target_kernel import pool_target, slurm_launched, slurm_launches_nodes
from clusterforge.targets.aws.efa import reservation
from clusterforge.targets.aws.section import CapacityBlock, aws_section

DOMAIN = domain("fleet", "Cloud fleet", 75)
TARGET = "aws"
THROTTLING = ("AWS EC2 API throttling (docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html): "
              "RunInstances resource tokens, bucket 1,000, refill 2 per second; CreateFleet instant draws from the "
              "same bucket (aws-parallelcluster-node PR #734)")


def aws_pools(cluster: Cluster) -> list[tuple[int, Pool]]:
    """(index, pool) of every pool EC2 launches."""
    return [(i, p) for i, p in enumerate(cluster.pools) if pool_target(cluster, p).name == TARGET]


def size_path(index: int, pool: Pool) -> tuple[str | int, ...]:
    """Where the pool's instance count is written: max_count when it has one."""
    return ("pools", index, "max_count" if pool.power_saved else "count")


def launch_seconds(instances: int, bucket: int, refill_per_s: float) -> float:
    """Seconds until the last of `instances` launches: the bucket's burst at once, then the refill rate."""
    return max(0, instances - bucket) / refill_per_s


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:,.0f} min" if seconds >= 60 else f"{seconds:,.0f} s"


class LaunchRateSettings(Settings):
    bucket: int = Field(1000, ge=1, le=10_000_000, description="RunInstances resource-token bucket of the "
                        "account and Region (instances launched at once); AWS EC2 API throttling page")
    refill_per_s: float = Field(2.0, gt=0, le=100_000, description="instances the bucket refills per second after "
                                "the burst; AWS EC2 API throttling page (raise it with AWS before a large launch)")
    max_wait_s: float = Field(0, ge=0, le=86_400, description="warn when the last instance waits longer than "
                              "this for tokens (0: whenever the cluster launches more than the bucket holds)")


@rule("FLT-001", "warning", DOMAIN, "Launch time at the account's RunInstances rate", THROTTLING, LaunchRateSettings,
      target=TARGET, inputs=Inputs(("pools[].{count,max_count,hardware}", "slurm.recovery.resume_timeout_s"),
                                   also="the bucket and refill rate are settings: give the account's raised limits"))
def launch_rate(ctx: Context, settings: LaunchRateSettings) -> Iterator[Draft]:
    """The cluster's instances launch within the account's RunInstances token bucket: N instances take
    max(0, N − bucket) / refill seconds (12,500 at the default 1,000 and 2/s: about 96 min)."""
    pools = aws_pools(ctx.cluster)
    total = sum(p.ceiling for _, p in pools)
    wait = launch_seconds(total, settings.bucket, settings.refill_per_s)
    if not pools or total <= settings.bucket or wait <= settings.max_wait_s:
        return
    index, largest = max(pools, key=lambda item: item[1].ceiling)
    message = (f"{total:,} instances take (N − {settings.bucket:,}) / {settings.refill_per_s:g}/s = {wait:,.0f} s "
               f"(~{_minutes(wait)}) to launch at the account's RunInstances rate")
    if slurm_launches_nodes(ctx.cluster):
        timeout = ctx.cluster.slurm.recovery.resume_timeout(True)
        ready = settings.bucket + int(settings.refill_per_s * timeout)
        if ready < total:
            message += (f"; within ResumeTimeout ({timeout:,} s) only {ready:,} can launch, and SLURM marks the "
                        "rest DOWN")
    yield Draft(size_path(index, largest), message,
                "ask AWS to raise the account's RunInstances rate (at most 3x per request) and set this rule's "
                "bucket/refill_per_s to the new limits, or launch fewer nodes at once (count, max_count)",
                round(wait), settings.max_wait_s, "s")


class CapacityBlockSettings(Settings):
    per_block: int = Field(64, ge=1, le=100_000, description="instances one Capacity Block holds at most "
                           "(AWS: 1-64); Capacity Blocks for ML user guide")
    across_blocks: int = Field(256, ge=1, le=1_000_000, description="instances across an account's Capacity "
                               "Blocks at most (AWS: 256); Capacity Blocks for ML user guide")


@rule("FLT-002", "error", DOMAIN, "Capacity Block size",
      "AWS EC2 Capacity Blocks for ML: 1-64 instances per block, at most 256 across blocks (reference/scale.md)",
      CapacityBlockSettings, target=TARGET,
      inputs=Inputs(("pools[].{count,max_count,role}", "aws.capacity.{type,reservation_id}")))
def capacity_block_size(ctx: Context, settings: CapacityBlockSettings) -> Iterator[Draft]:
    """The instances that launch into a Capacity Block fit it (at most 64 a block, 256 across blocks): AWS does not
    fall back to On-Demand, the launch fails with insufficient capacity."""
    aws = aws_section(ctx.cluster)
    if aws is None:
        return
    blocks: dict[str, list[tuple[int, Pool]]] = {}
    for index, pool in aws_pools(ctx.cluster):
        capacity = reservation(aws, pool)
        if isinstance(capacity, CapacityBlock):
            blocks.setdefault(capacity.reservation_id, []).append((index, pool))
    for block, pools in blocks.items():
        count = sum(p.ceiling for _, p in pools)
        if count > settings.per_block:
            index, pool = max(pools, key=lambda item: item[1].ceiling)
            yield Draft(size_path(index, pool), f"{count:,} instances launch into Capacity Block {block}, which "
                        f"holds at most {settings.per_block:,}", "lower the count (or max_count), or split the pool "
                        "over Capacity Blocks", count, settings.per_block, "instances")
    total = sum(p.ceiling for pools in blocks.values() for _, p in pools)
    if total > settings.across_blocks:
        yield Draft(("aws", "capacity"), f"{total:,} instances launch into Capacity Blocks; AWS allows at most "
                    f"{settings.across_blocks:,} across an account's blocks", "run the rest on demand or in an "
                    "On-Demand Capacity Reservation (odcr)", total, settings.across_blocks, "instances")


class FleetSettings(Settings):
    fleet_max: int = Field(FLEET_MAX, ge=1, le=10_000_000, description="target capacity of one EC2 Fleet at most "
                           "(10,000); EC2 Fleet quotas")


@rule("FLT-003", "error", DOMAIN, "EC2 Fleet request size",
      "AWS EC2 Fleet quotas: 10,000 target capacity per fleet (reference/scale.md)", FleetSettings, target=TARGET,
      inputs=Inputs(("slurm.power_save.launch_batch_size", "pools[].max_count")))
def fleet_request_size(ctx: Context, settings: FleetSettings) -> Iterator[Draft]:
    """The resume program asks CreateFleet for at most `launch_batch_size` instances at a time; a batch above
    EC2 Fleet's 10,000 target capacity is refused. Larger launches are split into batches, so only the batch size
    matters."""
    if not any(slurm_launched(ctx.cluster, p) for _, p in aws_pools(ctx.cluster)):
        return
    batch = ctx.cluster.slurm.power_save.launch_batch_size
    if batch > settings.fleet_max:
        yield Draft(("slurm", "power_save", "launch_batch_size"), f"launch_batch_size {batch:,} is above EC2 "
                    f"Fleet's target capacity of {settings.fleet_max:,} per fleet", f"use at most "
                    f"{settings.fleet_max:,} (the default, 500, is ParallelCluster's)", batch, settings.fleet_max,
                    "instances")


@rule("FLT-004", "error", DOMAIN, "Power-saved pools boot the baked image",
      "clusterforge docs/aws.md, The node image: a pinned aws.ami carries no boot phase, its nodes join by a push",
      target=TARGET, inputs=Inputs(("pools[].max_count", "aws.ami")))
def power_saved_image(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A node slurmctld powers up must configure itself and join: only the image the stack bakes runs the roles'
    boot phase at first boot. A pinned `aws.ami` gets identity-only user data and waits for `clusterforge
    provision`, which no power-up runs: every node would miss ResumeTimeout and be terminated."""
    aws = aws_section(ctx.cluster)
    if aws is None or aws.ami is None:
        return
    for index, pool in aws_pools(ctx.cluster):
        if pool.power_saved:
            yield Draft(("pools", index, "max_count"), f"pool {pool.name} is powered up by slurmctld, but the "
                        f"blueprint pins aws.ami {aws.ami}, whose nodes join only when the roles are pushed",
                        "remove aws.ami so the stack bakes the node image (its nodes configure themselves at "
                        "boot), or drop max_count")
