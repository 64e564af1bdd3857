"""The Plan: everything a blueprint implies (placement, fabric, loads), computed once and shared by all stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clusterforge.accelerator_kernel import accelerator
from clusterforge.catalog import Server, Switch
from clusterforge.files.yamlsource import PathKey


@dataclass(frozen=True)
class PlacedDevices:
    """`count` devices of one pool stacked in a rack from `position` (lowest U, 1-based) upwards."""

    pool: str
    count: int
    position: int | None = None
    path: PathKey | None = None  # the blueprint entry when placed explicitly; None when the planner placed it

    @property
    def explicit(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class PlacedSwitches:
    """`count` fabric switches of one tier in a rack, placed by the planner from the top of the rack's free U
    downwards (plan/switches.py); `switch` is the catalog key of `fabric.switch`."""

    tier: str  # leaf | spine | core
    count: int
    switch: str
    u_height: int = 0  # U of one switch, so a later placement into the same rack sees the U they take


@dataclass(frozen=True)
class RackPlan:
    """One rack of the site and what stands in it: devices of pools, and the fabric's switches."""

    row_index: int
    rack_index: int
    row: str
    name: str
    devices: tuple[PlacedDevices, ...] = ()
    switches: tuple[PlacedSwitches, ...] = ()

    @property
    def path(self) -> PathKey:
        return ("site", "rows", self.row_index, "racks", self.rack_index)


@dataclass(frozen=True)
class RackLoad:
    """Aggregates of one rack, computed in one pass; every physical rule reads these numbers."""

    rack: RackPlan
    servers: tuple[tuple[PlacedDevices, Server], ...]
    u_used: int
    weight_kg: float
    power_kw: float
    air_heat_kw: float
    liquid_heat_kw: float
    # the fabric switches in the rack; counted in u_used, weight_kg, power_kw and air_heat_kw like servers
    switches: tuple[tuple[PlacedSwitches, Switch], ...] = ()

    @property
    def device_count(self) -> int:
        """Servers and switches: anything that loads the rack."""
        return sum(placed.count for placed, _ in self.servers) + sum(placed.count for placed, _ in self.switches)


@dataclass(frozen=True)
class FatTree:
    """A folded-Clos (fat-tree) fabric sized for `endpoints` ports of switches with `radix` ports."""

    endpoints: int
    radix: int
    tiers: int
    oversubscription: float
    leaf_downlinks: int
    leaf_uplinks: int
    leaves: int
    spines: int
    cores: int
    capacity: int  # most endpoints this many tiers of this radix can carry at this oversubscription
    port_speed_gbps: int = 0  # the speed every link of the fabric runs at (0: not known)
    split: bool = False  # the switches' ports are split (e.g. 64 × 800G used as 128 × 400G): radix doubled
    spine_oversubscription: float = 1.0  # a spine's down:up in a three-tier tree (`oversubscription` is the leaf's)
    spine_downlinks: int = 0  # ports of a spine to leaves (k at two tiers, k/2 at 1:1 with three)
    spine_uplinks: int = 0  # ports of a spine to cores (three tiers only)

    @property
    def ratios(self) -> list[tuple[str, float, int, int]]:
        """(tier, down:up ratio, downlinks, uplinks) of each tier that has uplinks: the leaf, and at three tiers
        the spine — what `plan` and the report show per tier."""
        out = [("leaf", self.oversubscription, self.leaf_downlinks, self.leaf_uplinks)] if self.tiers >= 2 else []
        if self.tiers >= 3:
            out.append(("spine", self.spine_oversubscription, self.spine_downlinks, self.spine_uplinks))
        return out

    @property
    def ratio_note(self) -> str:
        """`1:1`, or `leaf 1:1, spine 2:1` when a three-tier tree's spines are oversubscribed too."""
        if self.tiers < 3 or self.spine_oversubscription == 1.0:
            return f"{self.oversubscription:g}:1"
        return f"leaf {self.oversubscription:g}:1, spine {self.spine_oversubscription:g}:1"

    @property
    def split_note(self) -> str:
        """How split ports are used ("" when native), for plan and report."""
        if not self.split:
            return ""
        return (f"{self.radix // 2} × {self.port_speed_gbps * 2}G ports split into {self.radix} × "
                f"{self.port_speed_gbps}G: the radix doubles for {self.port_speed_gbps}G NICs")

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores

    @property
    def cables(self) -> dict[str, int]:
        """Cables per tier: node-leaf, leaf-spine and spine-core."""
        out = {"node-leaf": self.endpoints}
        if self.tiers >= 2:
            out["leaf-spine"] = self.leaves * self.leaf_uplinks
        if self.tiers >= 3:
            out["spine-core"] = self.spines * self.spine_uplinks
        return out


@dataclass(frozen=True)
class RackLimits:
    """What one rack may hold: the site's figures with the policy config's derating and cooling defaults."""

    u: int  # U for devices: u_height − reserved_u
    kw: float  # min(usable A side, usable B side): either side alone carries the rack
    kg: float  # total rack weight, tare included: min(max_weight_kg, floor load × footprint)
    tare_kg: float
    air_kw: float  # heat the rack's air cooling removes
    liquid_kw: float  # heat its liquid loop removes (0 unless kind: liquid)
    liquid: bool  # kind: liquid, the only racks that take liquid- or hybrid-cooled hardware


@dataclass(frozen=True)
class PlacementReport:
    """What auto-placement did with the pools the blueprint left unplaced."""

    auto_placed: dict[str, int]  # pool -> nodes placed by the planner
    racks_used: int  # racks that received auto-placed devices
    lower_bound: int | None  # fewest racks those pools could need; None when a pool fits in no rack at all
    bounds: dict[str, int | None]  # the lower bound per limit ("u", "kw", ...) and per pool ("pool gpu")


@dataclass(frozen=True)
class SwitchPlacement:
    """Where the planner racked the fabric's switches: into the site's `role: network` racks when it marks
    any, else into the room the pools leave in the other racks; per tier, how many found a rack and how many
    did not (RCK-007 reports those)."""

    where: str  # "network": the site's `role: network` racks | "compute": the room the pools leave
    placed: dict[str, int]  # tier -> switches racked
    unplaced: dict[str, int]  # tier -> switches that fit in no rack
    racks_used: int


@dataclass(frozen=True)
class RackedFabric:
    """One switched fabric racked into the site: the facility rules count its switches (PWR-007) and report
    those that fit in no rack (RCK-007) at `path`, where the blueprint names the switch. A plan holds one per
    blueprint; the plan of teams sharing a site (compose/shared_site.py) one per team."""

    path: PathKey
    switch: str  # the catalog key
    tree: FatTree
    placement: SwitchPlacement


@dataclass(frozen=True)
class NodeRun:
    """Nodes `first`..`first + count − 1` of a pool, standing in one rack (rack None: not placed)."""

    first: int
    count: int
    rack: str | None = None
    row: str | None = None
    positions: tuple[int | None, ...] = ()  # lowest U of each node, when the rack has room for it


@dataclass(frozen=True)
class PoolNodes:
    """The named nodes of one pool and what every host of it carries (GPUs, rails, the target's own facts)."""

    pool: str
    role: str
    hardware: str
    count: int
    width: int  # digits of the zero-padded node number
    gpu_count: int
    gpu_model: str | None
    fabric_nics: int  # compute-fabric NICs per node (one per rail); 0 when the pool is off the fabric
    runs: tuple[NodeRun, ...]
    target_vars: tuple[tuple[str, Any], ...] = ()  # what the pool's target gives its nodes (NodeFacts.vars)
    network: str | None = None  # those facts for people (NodeFacts.network): "32 EFA, pg c-gpu, use1-az4"
    fabric_nic_gbps: int = 0  # the speed of each compute-fabric NIC (the health check and alerts expect it)
    domain_size: int = 1  # nodes per device: 18 trays of an NVL72 share one NVLink domain; 1 for servers
    gpu_vendor: str | None = None  # nvidia | amd | aws (the catalog's gpus.vendor)

    @property
    def domains(self) -> list[tuple[str, list[str]]]:
        """NVLink domains of a rack-scale pool: (name, its nodes), `domain_size` consecutive nodes each
        (`gb200-nvl01`: the trays of the pool's first rack); empty for servers (each its own NVLink island,
        nothing to schedule across). The SLURM block and the IMEX domain of those nodes carry this name."""
        if self.domain_size <= 1:
            return []
        names = self.names()
        width = max(2, len(str(-(-self.count // self.domain_size))))
        return [(f"{self.pool}-nvl{i // self.domain_size + 1:0{width}d}", names[i:i + self.domain_size])
                for i in range(0, len(names), self.domain_size)]

    def name(self, number: int) -> str:
        """Hostname of node `number` (1-based)."""
        return f"{self.pool}-{number:0{self.width}d}"

    def names(self) -> list[str]:
        return [self.name(n) for n in range(1, self.count + 1)]

    @property
    def hostlist(self) -> str:
        """All nodes of the pool as one SLURM range: `gpu-[0001-0016]`."""
        if self.count == 1:
            return self.name(1)
        return f"{self.pool}-[{1:0{self.width}d}-{self.count:0{self.width}d}]"


@dataclass(frozen=True)
class FabricSwitch:
    """One switch of the fat tree and what hangs below it (hostnames for a leaf, switches above that)."""

    name: str
    tier: str  # leaf | spine | core
    nodes: tuple[str, ...] = ()
    children: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topology:
    """The fat tree wired up: every switch, and the leaf each node's NIC i (rail i) plugs into."""

    switches: tuple[FabricSwitch, ...]
    rails: dict[str, tuple[str, ...]]  # hostname -> leaf per NIC


@dataclass(frozen=True)
class SlurmNodes:
    """One NodeName line: a pool's nodes as a hostlist, with their GPU GRES."""

    pool: str
    hostlist: str
    gpu_type: str | None  # GRES type, e.g. h100
    gpu_count: int
    sockets: int | None = None  # from the catalog's cpus, when it has them
    cores_per_socket: int | None = None
    threads_per_core: int | None = None
    real_memory_mib: int | None = None  # the catalog's memory less what the OS keeps (MEMORY_FOR_JOBS)

    @property
    def hardware_fields(self) -> str:
        """` Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=1992294`, or nothing when unknown."""
        out = ""
        if self.sockets:
            out += (f" Sockets={self.sockets} CoresPerSocket={self.cores_per_socket}"
                    f" ThreadsPerCore={self.threads_per_core}")
        if self.real_memory_mib:
            out += f" RealMemory={self.real_memory_mib}"
        return out

    @property
    def gres(self) -> str | None:
        return f"gpu:{self.gpu_type}:{self.gpu_count}" if self.gpu_type and self.gpu_count else None


@dataclass(frozen=True)
class SlurmPartition:
    name: str
    pools: tuple[str, ...]
    nodes: str  # hostlist
    default: bool
    max_time: str


@dataclass(frozen=True)
class SlurmSwitch:
    """One topology.conf line: a leaf-level switch with nodes, or a spine or core with switches below."""

    name: str
    nodes: str = ""  # hostlist of nodes (leaf level)
    switches: str = ""  # hostlist of child switches (spines and cores)
    leaves: str = ""  # the physical leaves a rail group stands for
    members: str = ""  # the spines or cores of the full tree a compact switch stands for (plan/compact.py)


@dataclass(frozen=True)
class SlurmBlock:
    """One topology.conf BlockName line: the nodes of one NVLink domain (the 18 trays of an NVL72 rack)."""

    name: str
    nodes: str  # hostlist


@dataclass(frozen=True)
class SlurmPlan:
    """What slurm.conf, gres.conf and topology.conf say, decided once here."""

    cluster_name: str
    controller: str | None  # the primary SlurmctldHost
    controller_reason: str  # why this host (a blueprint without a controller pool borrows one)
    nodes: tuple[SlurmNodes, ...]
    partitions: tuple[SlurmPartition, ...]
    switches: tuple[SlurmSwitch, ...]
    controllers: tuple[str, ...] = ()  # every SlurmctldHost, primary first: two or more is HA
    dbd_host: str | None = None  # where slurmdbd runs; None without accounting
    blocks: tuple[SlurmBlock, ...] = ()  # NVLink domains for topology/block (replaces `switches` when set)
    block_sizes: tuple[int, ...] = ()  # BlockSizes: the domain size, then the aggregates SLURM may plan with

    @property
    def topology_plugin(self) -> str | None:
        """topology/block for NVLink domains, topology/tree for a switched fabric, else none."""
        if self.blocks:
            return "topology/block"
        return "topology/tree" if self.switches else None


@dataclass(frozen=True)
class PowerSavePlan:
    """slurmctld's power saving, decided once here (plan/power_save.py) for render to write: which pools' nodes the
    programs launch (`State=CLOUD`), the always-on part of each, what is never powered down, and what follows."""

    launched: tuple[str, ...] = ()  # pools the power-save programs launch; none: a cluster that is always on
    static: tuple[tuple[str, str], ...] = ()  # (launched pool, hostlist of its first `count` nodes; '' for none)
    excluded_nodes: tuple[tuple[int, str], ...] = ()  # SuspendExcNodes: (the pool's index, hostlist)
    excluded_partitions: tuple[str, ...] = ()  # SuspendExcParts
    idle_controller: tuple[int, str] | None = None  # (pool's index, host): slurmctld on a node powered down when idle
    tcp_timeout_s: int | None = None  # TCPTimeout for nodes on several sites
    no_addr_cache: bool = False  # CommunicationParameters=NoAddrCache: the pinned SLURM caches addresses
    tree_width: int | None = None  # TreeWidth; None: SLURM's default
    slurmctld_parameters: tuple[str, ...] = ()  # what power saving adds to SlurmctldParameters
    private_data: tuple[str, ...] = ()  # PrivateData: the blueprint's, with `cloud` under power saving

    def static_of(self, pool: str) -> str:
        """The always-on nodes of a launched pool, as a hostlist ('' for none)."""
        return dict(self.static).get(pool, "")


@dataclass(frozen=True)
class Plan:
    racks: tuple[RackPlan, ...] = ()
    loads: tuple[RackLoad, ...] = ()
    unplaced: dict[str, int] = field(default_factory=dict)  # pool -> nodes the planner found no room for
    fabric: FatTree | None = None
    limits: tuple[RackLimits, ...] = ()  # one per rack, in the order of `racks`
    placement: PlacementReport | None = None  # None without a site
    nodes: tuple[PoolNodes, ...] = ()
    topology: Topology | None = None  # None without a switched fabric
    slurm: SlurmPlan | None = None
    switches: SwitchPlacement | None = None  # None without a site or without a switched fabric
    fabrics: tuple[RackedFabric, ...] = ()  # every fabric racked into the site (see RackedFabric)
    power_save: PowerSavePlan | None = None  # with `slurm`: what slurmctld powers up and down

    @property
    def unplaced_switches(self) -> dict[str, int]:
        """tier -> fabric switches that fit in no rack (empty when all are racked or nothing is to rack)."""
        return self.switches.unplaced if self.switches is not None else {}

    def domain_title(self) -> str:
        """How the rack-scale pools' GPU vendor names its scale-up domains (the first such pool's)."""
        vendor = next((p.gpu_vendor for p in self.nodes if p.domain_size > 1), None)
        return accelerator(vendor).domain_title

    def pool_nodes(self, pool: str) -> PoolNodes:
        return next(p for p in self.nodes if p.pool == pool)

    def infeasible(self) -> list[str]:
        """Why the planner itself cannot build this design (empty when it can): a fabric beyond what its
        switches can carry, and devices that fit in no rack."""
        reasons = []
        tree = self.fabric
        if tree is not None and tree.endpoints > tree.capacity:
            reasons.append(f"the fabric needs {tree.endpoints:,} endpoints; {tree.tiers} tiers of {tree.radix}-port "
                           f"switches at {tree.ratio_note} carry at most {tree.capacity:,}")
        for pool, count in self.unplaced.items():
            reasons.append(f"{count:,} node(s) of pool {pool} fit in no rack")
        return reasons
