"""Shapes of catalog entries: hardware as data, every figure with a source."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

import clusterforge.accelerator_kernel as accelerators
from clusterforge.catalog.prices import PriceTable
from clusterforge.catalog.software import SoftwareTables
from clusterforge.core.text import CatalogKey, OneLine
from clusterforge.core.validation import expected, figure

_BOOKKEEPING = {"kind", "form", "provider", "description", "sources", "notes"}

# A site catalog is as untrusted as a blueprint: the GPU model becomes gres.conf's Type= and a slurm.conf Gres=,
# so it is a word of safe characters; text for people is one line without control characters.
GPU_MODEL = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"
GpuModel = Annotated[str, StringConstraints(pattern=GPU_MODEL), Field(description=expected(
    GPU_MODEL, "a GPU model of letters, digits, '.', '_' or '-' (at most 40 characters), e.g. H100-SXM5"))]
ONE_LINE = OneLine(1, 200)
LINE = ONE_LINE.pattern
Line = Annotated[str, ONE_LINE, Field(description=expected(
    LINE, "one line of text without control characters, 1 to 200 characters"))]
PROSE_LINE = OneLine(0, 2000)
PROSE = PROSE_LINE.pattern
Prose = Annotated[str, PROSE_LINE, Field(description=expected(
    PROSE, "text without control characters or line breaks, at most 2,000 characters"))]


class _Frozen(BaseModel):
    """Unknown keys are errors and numbers are finite (`.inf`/`.nan` would overflow or pass every limit). A site
    catalog is untrusted too: every count and size is bounded (figure()) far above any real hardware, since
    one entry's figures multiply with the blueprint's counts (hosts per device × devices are SLURM nodes)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _registered_vendor(value: Any) -> str:
    """A vendor of the accelerator registry (clusterforge/accelerators), refused as a literal would be."""
    if not isinstance(value, str) or value not in accelerators.registered():
        raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": accelerators.known()})
    return value


def _vendor_enum(schema: dict[str, Any]) -> None:
    schema.update(type="string", enum=list(accelerators.registered()), default=accelerators.default().name)


Vendor = Annotated[str, PlainValidator(_registered_vendor), Field(json_schema_extra=_vendor_enum)]


class Gpus(_Frozen):
    """Accelerators of one host. `vendor` (an entry of clusterforge/accelerators) picks the software the rules
    expect (CUDA/NCCL, ROCm/RCCL, Neuron) and how gres.conf names the devices."""

    model: GpuModel
    count: Annotated[int, figure("GPUs", 1_024)]
    memory_gib: Annotated[float, figure("GiB per GPU", 4_096)]
    vendor: Vendor = Field(default_factory=lambda: accelerators.default().name)


class Psus(_Frozen):
    """N+M power supplies: `required` (N) must stay powered for full performance.

    `watts` is one PSU's rated output. With it, `required` may be left out: the server derives it as
    ⌈max_power_kw / watts⌉ (Server._psus_carry_the_maximum), and a stated `required` is checked to carry the
    maximum. Without it (site catalogs written before ratings were recorded), `required` is taken as stated.
    """

    count: Annotated[int, figure("PSUs", 256)]
    required: Annotated[int, figure("PSUs", 256)]
    watts: Annotated[int, figure("W per PSU", 100_000)] | None = None

    @model_validator(mode="after")
    def _required_fits(self) -> Psus:
        if self.required > self.count:
            raise ValueError(f"required PSUs ({self.required}) exceed the PSU count ({self.count})")
        return self

    def carry_w(self, psus: int) -> int | None:
        """Watts `psus` of these supplies deliver (None when the rating is not recorded)."""
        return None if self.watts is None else psus * self.watts

    @property
    def redundancy(self) -> str:
        return f"{self.required}+{self.count - self.required}"


class Cpus(_Frozen):
    """Host CPUs as SLURM counts them (Sockets × CoresPerSocket × ThreadsPerCore)."""

    sockets: Annotated[int, figure("sockets", 16)]
    cores_per_socket: Annotated[int, figure("cores per socket", 1_024)]
    threads_per_core: Annotated[int, figure("threads per core", 16)] = 1

    @property
    def threads(self) -> int:
        return self.sockets * self.cores_per_socket * self.threads_per_core


LinkProtocol = Literal["infiniband", "ethernet"]
"""What a switch's or a NIC's ports speak on the wire (RoCE is RDMA over Ethernet)."""


class Nics(_Frozen):
    """Compute-fabric NICs (one per rail on rail-optimized designs). `protocols` is what the NICs can run: both
    for a VPI adapter (ConnectX-7/8, set per port), one for an Ethernet-only NIC; left out where the catalog
    does not know the NIC model, and then NET-008 checks only the switch. Sourced under the entry's `nics` (or
    `hosts`) source."""

    compute: Annotated[int, figure("NICs", 64)]
    speed_gbps: Annotated[int, figure("Gb/s", 10_000)]
    protocols: Annotated[tuple[LinkProtocol, ...], Field(min_length=1, max_length=2)] | None = None
    model: CatalogKey | None = None
    """The catalog's `nic` entry of these NICs, where the catalog has one: the loader checks that they run no
    faster than it and speak only what it speaks."""


class Hosts(_Frozen):
    """The hosts inside a rack-scale system (an NVL72's 18 compute trays). Each runs its own OS and slurmd, so
    inventory, slurm.conf, gres.conf and the roles see these; the physical rules see the rack. The hosts of one
    rack form one NVLink domain: one IMEX domain and one SLURM topology block."""

    count: Annotated[int, figure("hosts per device", 1_024)]
    name: Line = "tray"
    gpus: Gpus
    cpus: Cpus | None = None
    memory_gib: Annotated[float, figure("GiB", 65_536)] | None = None
    nics: Nics | None = None


class _Sourced(_Frozen):
    """Every figure an entry sets must name its source in `sources`."""

    description: Line
    sources: dict[str, Prose]
    notes: Prose = ""

    @model_validator(mode="after")
    def _every_figure_sourced(self) -> _Sourced:
        figures = {name for name in self.model_fields_set if name not in _BOOKKEEPING}
        missing = sorted(figures - set(self.sources))
        if missing:
            raise ValueError(f"figures without a source: {', '.join(missing)} (add them under `sources`)")
        unknown = sorted(set(self.sources) - set(type(self).model_fields))
        if unknown:
            raise ValueError(f"sources name unknown figures: {', '.join(unknown)}")
        return self


class _Physical(_Sourced):
    """What racks care about: space, power, weight, depth, air."""

    max_power_kw: Annotated[float, figure("kW", 5_000)]
    u_height: Annotated[int, figure("U", 100)]
    weight_kg: Annotated[float, figure("kg", 20_000)]
    depth_mm: Annotated[int, figure("mm", 5_000)]
    airflow: Literal["front-to-rear", "rear-to-front"] = "front-to-rear"


class Server(_Physical):
    """A server chassis, or a rack-scale system (`form: rack`) that fills a rack of its own."""

    kind: Literal["server"]
    form: Literal["chassis", "rack"] = "chassis"
    gpus: Gpus | None = None
    psus: Psus
    cooling: Literal["air", "liquid", "hybrid"] = "air"
    liquid_heat_fraction: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0
    max_inlet_c: Annotated[float, figure("°C", 100, -50, inclusive=True)]
    max_supply_water_c: Annotated[float, figure("°C", 100, -50, inclusive=True)] | None = None
    nics: Nics | None = None
    cpus: Cpus | None = None
    memory_gib: Annotated[float, figure("GiB", 65_536)] | None = None
    hosts: Hosts | None = None
    # What one device draws powered up and idle, where a source states it: what powering an idle node down saves
    # (clusterforge/cost). Without it the cost uses the catalog's `idle_power_fraction` of `max_power_kw`.
    idle_power_kw: Annotated[float, figure("kW", 5_000)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _derive_required_psus(cls, data: Any) -> Any:
        """`psus: {count, watts}` without `required`: N = ⌈max_power_kw / watts⌉, the fewest PSUs that carry the
        maximum (to the watt). Anything malformed is left for the field validators to report."""
        if not isinstance(data, dict):
            return data
        psus, kw = data.get("psus"), data.get("max_power_kw")
        if not isinstance(psus, dict) or "required" in psus:
            return data
        watts = psus.get("watts")
        numbers = not isinstance(kw, bool) and not isinstance(watts, bool)
        if numbers and isinstance(watts, int) and watts > 0 and isinstance(kw, int | float) and 0 < kw < 1e9:
            return {**data, "psus": {**psus, "required": -(-round(kw * 1000) // watts)}}
        return data

    @model_validator(mode="after")
    def _psus_carry_the_maximum(self) -> Server:
        """The N PSUs a server needs must deliver its maximum draw, or a feed loss check counts the wrong N."""
        carried = self.psus.carry_w(self.psus.required)
        if carried is not None and carried < round(self.max_power_kw * 1000):
            raise ValueError(
                f"psus: {self.psus.required} required x {self.psus.watts:,} W = {carried:,} W cannot carry "
                f"max_power_kw {self.max_power_kw:g} kW; required must be at least "
                f"{-(-round(self.max_power_kw * 1000) // (self.psus.watts or 1))} (or leave it out to derive it)")
        return self

    @model_validator(mode="after")
    def _idle_within_the_maximum(self) -> Server:
        if self.idle_power_kw is not None and self.idle_power_kw > self.max_power_kw:
            raise ValueError(f"idle_power_kw {self.idle_power_kw:g} kW exceeds max_power_kw {self.max_power_kw:g} kW "
                             "(idle is the least a powered-up server draws)")
        return self

    @model_validator(mode="after")
    def _liquid_needs_fraction(self) -> Server:
        if self.cooling != "air" and "liquid_heat_fraction" not in self.model_fields_set:
            raise ValueError("liquid or hybrid cooling needs liquid_heat_fraction (no silent default)")
        if self.cooling == "air" and self.liquid_heat_fraction:
            raise ValueError("an air-cooled server cannot have a liquid_heat_fraction")
        return self

    @model_validator(mode="after")
    def _hosts_carry_the_compute(self) -> Server:
        if self.hosts is None:
            return self
        if self.form != "rack":
            raise ValueError("hosts are for rack-scale systems (form: rack)")
        doubled = sorted({"gpus", "cpus", "memory_gib", "nics"} & self.model_fields_set)
        if doubled:
            raise ValueError(f"a rack with hosts gives {', '.join(doubled)} per host, under `hosts`, not for the rack")
        return self

    @property
    def hosts_per_device(self) -> int:
        """SLURM nodes one device holds: its hosts (18 trays of an NVL72), else 1."""
        return self.hosts.count if self.hosts else 1

    @property
    def node_gpus(self) -> Gpus | None:
        """The GPUs of one SLURM node: a host's for a rack with hosts, else the server's."""
        return self.hosts.gpus if self.hosts else self.gpus

    @property
    def node_nics(self) -> Nics | None:
        return self.hosts.nics if self.hosts else self.nics

    @property
    def node_cpus(self) -> Cpus | None:
        return self.hosts.cpus if self.hosts else self.cpus

    @property
    def node_memory_gib(self) -> float | None:
        return self.hosts.memory_gib if self.hosts else self.memory_gib

    @property
    def gpu_count(self) -> int:
        """GPUs in one device (72 for an NVL72 rack)."""
        gpus = self.node_gpus
        return gpus.count * self.hosts_per_device if gpus else 0


class Switch(_Physical):
    """A fabric switch. `protocol` is required: a fabric of the wrong kind does not link at all (NET-008), so a
    site catalog states it rather than have the check guess."""

    kind: Literal["switch"]
    protocol: LinkProtocol
    ports: Annotated[int, figure("ports", 4_096)]
    port_speed_gbps: Annotated[int, figure("Gb/s", 10_000)]
    split_ports: Annotated[int, figure("ports", 8_192)] | None = None
    split_speed_gbps: Annotated[int, figure("Gb/s", 10_000)] | None = None


class Nic(_Sourced):
    """A network adapter model (kind `nic`): what a server's `nics.model` names. It is no device of its own (no pool
    or fabric takes it), so it has no rack figures: its ports, their speed and what they speak."""

    kind: Literal["nic"]
    vendor: Line
    ports: Annotated[int, figure("ports", 64)]
    port_speed_gbps: Annotated[int, figure("Gb/s", 10_000)]
    protocols: Annotated[tuple[LinkProtocol, ...], Field(min_length=1, max_length=2)]
    host_interface: Line | None = None


TARGET = r"^[a-z][a-z0-9-]{0,31}$"


class Instance(_Sourced):
    """A cloud instance type: no rack figures. Each target that runs on instances declares its own kind of them, a
    subclass with the figures its deployment needs (its network cards and interfaces), whose `provider` is the
    target's name (`CatalogPart.instance`); the catalog file's model is composed with those (catalog/parts.py)."""

    kind: Literal["instance"]
    provider: Annotated[str, StringConstraints(pattern=TARGET)]
    gpus: Gpus | None = None
    accelerators: Gpus | None = None

    @property
    def hosts_per_device(self) -> int:
        """Hosts (SLURM nodes) one device of this entry is: 1 for an instance type; a target's kind may sell several
        instances as one device in one scale-up domain (an UltraServer), and then says how many."""
        return 1

    def launched_as(self, key: str) -> str:
        """The type a cloud launches for each host of this entry: its own key, unless the target's kind says the
        entry is a device of several instances of another type."""
        return key

    @property
    def gpu_count(self) -> int:
        """GPUs in one device (an UltraServer's, where the target's kind sells instances as one)."""
        return self.gpus.count * self.hosts_per_device if self.gpus else 0

    @property
    def network(self) -> str:
        """Its network in a few words, for `catalog list` (a target's kind says more)."""
        return "-"


Entry = Server | Switch | Nic | Instance


class CatalogFile(_Frozen):
    """One catalog YAML file."""

    # the entries and tables every target shares; parts.file_model adds each target's instance kind, software
    # tables and price tables

    apiVersion: Literal["clusterforge/v1"] = "clusterforge/v1"
    kind: Literal["Catalog"] = "Catalog"
    hardware: dict[CatalogKey, Annotated[Server | Switch | Nic, Field(discriminator="kind")]] = {}
    software: SoftwareTables = SoftwareTables()
    prices: PriceTable = PriceTable()  # USD, each with its source and date (catalog/prices.py)
