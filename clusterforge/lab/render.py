"""Render the lab's blueprint (resized to the requested node count) with the same renderer as production."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from clusterforge.catalog.loader import Catalog
from clusterforge.catalog.models import Cpus, Server
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.model import Cluster, Pool
from clusterforge.render.yamlout import load

DEFAULT_BLUEPRINT = "blueprint.yaml"
METAL_BLUEPRINT = "metal.yaml"  # `lab up --metal`
DEFAULT_CATALOG = "catalog.yaml"


def data_file(name: str) -> Path:
    return Path(str(resources.files("clusterforge.lab") / "data" / name))


def resized(cluster: Cluster, nodes: int) -> Cluster:
    """The cluster with its first compute pool grown or shrunk so that it has `nodes` nodes in all."""
    compute = next((p for p in cluster.pools if p.role == "compute"), None)
    others = sum(p.count for p in cluster.pools if p is not compute)
    if compute is None or nodes - others < 1:
        raise ClusterforgeError(Problem(
            f"--nodes {nodes} leaves no compute node ({others} nodes are in other pools)", path="--nodes",
            hint=f"use --nodes {others + 1} or more"))
    pools = [p.model_copy(update={"count": nodes - others}) if p is compute else p for p in cluster.pools]
    return cluster.model_copy(update={"pools": pools})


HA_STATE = "/shared/slurm/state"
DBD_POOL = "db"  # on the volume every lab node mounts at /shared (nodes.SHARED_MOUNT)


def with_backup_controller(cluster: Cluster) -> Cluster:
    """The cluster with a second controller (the backup), slurmctld's state on the shared volume, where
    whichever controller is in charge reads and writes it, and the accounting database and monitoring on
    `db-0001`."""
    controller = next((p for p in cluster.pools if p.role == "controller"), None)
    if controller is None:
        raise ClusterforgeError(Problem("--ha needs a pool with role: controller in the lab's blueprint", "--ha"))
    pools = [p.model_copy(update={"count": 2}) if p is controller else p for p in cluster.pools]
    # slurmdbd on a node of its own: a backup that takes over must reach the accounting database, which would
    # die with the primary if it ran there
    pools.append(Pool(name=DBD_POOL, hardware=controller.hardware, count=1, role="login"))
    accounting = cluster.slurm.accounting.model_copy(update={"pool": DBD_POOL})
    slurm = cluster.slurm.model_copy(update={"state_save_location": HA_STATE, "accounting": accounting})
    # Prometheus and Alertmanager there too: an alert about the primary must not depend on the primary
    ops = cluster.operations
    operations = ops.model_copy(update={"monitoring": ops.monitoring.model_copy(update={"pool": DBD_POOL})})
    return cluster.model_copy(update={"pools": pools, "slurm": slurm, "operations": operations})


LAB_HARDWARE = "lab-node"


def host_cpus(sysfs: Path = Path("/sys/devices/system/cpu")) -> Cpus | None:
    """This machine's CPU topology as slurmd counts it (sockets, cores per socket, threads per core), read from
    sysfs; the lab's containers see every CPU of the host. None when sysfs does not say."""
    cores: dict[str, set[str]] = {}
    threads = 0
    for cpu in sysfs.glob("cpu[0-9]*/topology"):
        try:
            package = (cpu / "physical_package_id").read_text().strip()
            core = (cpu / "core_id").read_text().strip()
        except OSError:
            continue
        cores.setdefault(package, set()).add(core)
        threads += 1
    if not cores:
        return None
    per_socket = max(len(c) for c in cores.values())
    total_cores = sum(len(c) for c in cores.values())
    return Cpus(sockets=len(cores), cores_per_socket=per_socket, threads_per_core=max(1, threads // total_cores))


def with_host_cpus(catalog: Catalog) -> Catalog:
    """The lab's node entry with this machine's CPU topology, so slurm.conf's node line is what slurmd finds (a
    node line that differs makes slurmctld log an error at every registration)."""
    cpus = host_cpus()
    entry = catalog.get(LAB_HARDWARE) if LAB_HARDWARE in catalog else None
    if cpus is None or not isinstance(entry, Server):
        return catalog
    return catalog.with_entry(LAB_HARDWARE, entry.model_copy(update={"cpus": cpus}))


def render(blueprint: Path, catalogs: Sequence[Path], nodes: int | None, out: Path, ha: bool = False,
           macs: Mapping[str, str] | None = None) -> Cluster:
    """Write inventory/, group_vars and slurm/ for the lab into `out` (replaced as a whole); `ha` adds the
    backup controller, `macs` the DHCP reservations (render --macs). The cluster rendered."""
    from clusterforge.blueprint.load import Loaded
    from clusterforge.pipeline import analysis
    from clusterforge.render import RenderContext, write
    from clusterforge.target_kernel import project_dir

    policy = analysis.read_policy(analysis.PolicyInputs(catalogs=tuple(catalogs)))
    loaded = analysis.load(blueprint, policy)
    cluster = with_backup_controller(loaded.cluster) if ha else loaded.cluster
    if nodes is not None:
        cluster = resized(cluster, nodes)
    loaded = Loaded(cluster, loaded.source, with_host_cpus(loaded.catalog))
    result = analysis.analyze(loaded, policy)
    result.refuse_on_errors("the lab")
    write(RenderContext(loaded, result.plan, project_dir(cluster), macs=macs or {}), out)  # no project: no stack
    return cluster


def inventory_hosts(inventory: Path) -> dict[str, tuple[str, ...]]:
    """Every host of a rendered hosts.yml with the groups it is in (children resolved), in file order."""
    return inventory_groups(load(inventory.read_text()) or {})


def inventory_groups(data: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Every host of a parsed hosts.yml with the groups it is in (children resolved), in file order."""
    membership: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}

    def walk(group: str, body: dict[str, Any] | None) -> None:
        body = body or {}
        for host in body.get("hosts") or {}:
            membership.setdefault(host, [])
            if group != "all":
                membership[host].append(group)
        for child, child_body in (body.get("children") or {}).items():
            children.setdefault(group, []).append(child)
            walk(child, child_body)

    walk("all", data.get("all"))

    def ancestors(group: str) -> list[str]:
        parents = [g for g, kids in children.items() if group in kids and g != "all"]
        return parents + [a for p in parents for a in ancestors(p)]

    return {host: tuple(dict.fromkeys(g for group in groups for g in (group, *ancestors(group))))
            for host, groups in membership.items()}


def group_vars(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = load((out / "inventory/group_vars/all.yml").read_text()) or {}
    return data
