"""What render writes as a power-saved AWS pool's launch data (`NodeGroup.launch`): the launch template the stack
made for the pool, the instance type a node launches as, and how its capacity is bought, as the EC2 provider reads
it (`powersave.Ec2Launch`, which checks a file's data on the controller, so the two cannot disagree). Render asks
this module through the kernel (`target_kernel.stage_part`), never by name."""

from __future__ import annotations

from clusterforge.catalog import Entry, Instance
from clusterforge.model import Cluster, Pool
from clusterforge.targets.aws.efa import reservation
from clusterforge.targets.aws.powersave import Capacity, Ec2Launch
from clusterforge.targets.aws.section import aws_section

# the target's purchase words (`purchase`, which cost prices) in the file's capacity words
CAPACITY: dict[str, Capacity] = {"on-demand": "on-demand", "reservation": "capacity-reservation",
                                 "capacity-block": "capacity-block"}


def launch_template_name(cluster: Cluster, pool: Pool) -> str:
    """The name of the pool's launch template (EC2 names are unique per Region and account): the stack gives its
    template this name, and the resume program asks CreateFleet for it by name."""
    return f"{cluster.name}-{pool.name}"


def purchase(cluster: Cluster, pool: Pool) -> str | None:
    """A compute pool launches into the blueprint's Capacity Block or ODCR; every other pool runs on demand
    (cost's `purchase`)."""
    aws = aws_section(cluster)
    capacity = reservation(aws, pool) if aws is not None else None
    if capacity is None:
        return "on-demand"
    return "reservation" if capacity.type == "odcr" else capacity.type


def launch_data(cluster: Cluster, pool: Pool, entry: Entry | None) -> dict[str, str]:
    """The pool's launch data as render writes it: its template, the instance type a node launches as (a device of
    several instances launches as one of them: catalog Instance.launched_as), and its capacity."""
    bought = CAPACITY.get(purchase(cluster, pool) or "on-demand", "on-demand")
    capacity = getattr(aws_section(cluster), "capacity", None)
    reserved = getattr(capacity, "reservation_id", "") if bought != "on-demand" else ""
    launched = entry.launched_as(pool.hardware) if isinstance(entry, Instance) else pool.hardware
    made = Ec2Launch(launch_template=launch_template_name(cluster, pool), instance_type=launched,
                     capacity=bought, reservation=reserved or "")
    return {key: str(value) for key, value in made.model_dump().items()}


def region(cluster: Cluster) -> str | None:
    """The region the provider calls EC2 in: the blueprint's `aws.region`."""
    aws = aws_section(cluster)
    return aws.region if aws is not None else None
