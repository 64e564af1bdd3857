"""SLURM rules for nodes SLURM powers up elsewhere: a power-saved pool needs a program that can start its nodes
(SLM-008), and a partition keeps to one site (SLM-009), so an on-prem cluster can burst into the cloud per
partition (SchedMD's power saving and elastic computing guides: slurm.schedmd.com/power_save.html,
slurm.schedmd.com/elastic_computing.html)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs
from clusterforge.policies.registry import domain, rule
from clusterforge.target_kernel import can_power, node_power, pool_target, registered

DOMAIN = domain("slurm", "SLURM", 70)


@rule("SLM-008", "error", DOMAIN, "Power-saved pools have a power provider",
      "SLURM power saving guide (slurm.schedmd.com/power_save.html): ResumeProgram must start the nodes; "
      "clusterforge's resume program starts a target's nodes with the provider the target declares "
      "(its power.py's NodePower: cloud instances, lab containers, servers through their Redfish or IPMI BMCs; "
      "clusterforge/powersave/programs.py)",
      inputs=Inputs(("pools[].{max_count,target,bmc}", "target")))
def power_provider(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """A pool with `max_count` runs where clusterforge's resume program can power it up (EC2, the lab, on-prem
    servers whose BMCs answer Redfish): elsewhere slurmctld would call clusterforge-resume for servers it cannot
    start, and every job that needs them would wait until ResumeTimeout marks them DOWN."""
    powered = ", ".join(sorted(t.name for t in registered().values() if node_power(t) is not None))
    for index, pool in enumerate(ctx.cluster.pools):
        target = pool_target(ctx.cluster, pool)
        if not pool.power_saved or can_power(ctx.cluster, pool):
            continue
        power = node_power(target)
        if power is not None:  # the target can, this pool lacks what it needs (on-prem: its BMCs)
            yield Draft(("pools", index, "max_count"), f"pool {pool.name} has max_count {pool.ceiling:,} on target "
                        f"{target.name}, but nothing can power its servers on and off: it has no BMC clusterforge "
                        "reaches, so its nodes are State=CLOUD and would never start",
                        f"{power.needs}; or remove max_count and set count to {pool.ceiling:,}")
            continue
        yield Draft(("pools", index, "max_count"), f"pool {pool.name} has max_count {pool.ceiling:,} on target "
                    f"{target.name}, but clusterforge powers nodes up and down only on {powered}: "
                    "its nodes are State=CLOUD and would never start",
                    f"remove max_count and set count to the nodes the pool has ({pool.ceiling:,}), or run the "
                    "pool on one of those targets")


@rule("SLM-009", "error", DOMAIN, "A partition keeps to one site",
      "SchedMD power saving and elastic computing guides (slurm.schedmd.com/power_save.html, elastic_computing.html): "
      "cloud nodes burst per partition; a tightly coupled job's collectives cannot span sites",
      inputs=Inputs(("pools[].{partition,target}", "slurm.partitions[].pools", "target")))
def one_site_per_partition(ctx: Context, settings: Settings) -> Iterator[Draft]:
    """Every partition's pools run on one target: SLURM gives a job nodes from anywhere in its partition, and a job
    spread over an on-prem hall and a cloud region runs its collectives over the WAN link between them (or hangs
    when the sites cannot reach each other's fabric)."""
    cluster = ctx.cluster
    declared = {p.name: list(p.pools) for p in cluster.slurm.partitions}
    members = {name: list(pools) for name, pools in declared.items()}
    for pool in cluster.pools:
        if pool.partition and pool.name not in members.setdefault(pool.partition, []):
            members[pool.partition].append(pool.name)
    known = {p.name for p in cluster.pools}
    for partition, pools in members.items():
        sites: dict[str, list[str]] = {}
        for name in (n for n in pools if n in known):
            sites.setdefault(pool_target(cluster, cluster.pool(name)).name, []).append(name)
        if len(sites) < 2:
            continue
        path: tuple[str | int, ...] = (
            ("slurm", "partitions", list(declared).index(partition), "pools") if partition in declared else
            ("pools", next(i for i, p in enumerate(cluster.pools) if p.name == pools[-1]), "partition"))
        spread = "; ".join(f"{target}: {', '.join(names)}" for target, names in sites.items())
        yield Draft(path, f"partition {partition} mixes sites ({spread}): SLURM may give one job nodes on "
                    "both, and its collectives would cross the link between them",
                    "give each site's pools a partition of their own (e.g. train on premises, burst in the cloud)")
