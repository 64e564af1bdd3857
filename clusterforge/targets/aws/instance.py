"""Target aws's kind of instance type: an EC2 instance type, with the network cards and EFA limits the launch
template's interface layout is built from (`efa.efa_layout`). The types themselves are data with a source per
figure, in data/aws.yaml beside this file."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from clusterforge.catalog import Cpus, Instance
from clusterforge.core.validation import expected, figure

INSTANCE_TYPE = r"^[a-z0-9][a-z0-9-]{0,30}\.[a-z0-9-]{1,30}$"
InstanceType = Annotated[str, StringConstraints(pattern=INSTANCE_TYPE), Field(description=expected(
    INSTANCE_TYPE, "an EC2 instance type, e.g. p6e-gb200.36xlarge"))]


class UltraServer(BaseModel):
    """An EC2 UltraServer: `instances` instances of `instance_type` joined in one NVLink domain, reserved (a
    Capacity Block each) and placed as one. A pool of UltraServers counts them: each is `instances` SLURM nodes,
    one topology/block block and one IMEX domain, as the trays of an NVL72 rack are."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    instance_type: InstanceType
    instances: Annotated[int, figure("instances", 1_024)]


class Ec2Instance(Instance):
    """A cloud instance type: no rack figures, but network cards and EFA limits matter.

    `primary_card_efa: false` is a type whose network card 0 carries only ENA (p6-b300): its EFA interfaces sit
    on cards 1..n and card 0 keeps just the primary interface. `network_card_interfaces`, where known, is each
    card's MaximumNetworkInterfaces (DescribeInstanceTypes NetworkCards[]): a card that takes one interface holds
    its EFA at device index 0. `architecture` is the CPU's, as EC2 names it (ProcessorInfo.SupportedArchitectures):
    it picks the parent image a pool's node image is baked from.

    An entry with `ultraserver` is an UltraServer: the pool's count is UltraServers, every other figure is one
    instance's (one host's), and the stack launches `ultraserver.instance_type`."""

    provider: Literal["aws"] = "aws"
    architecture: Literal["x86_64", "arm64"] = "x86_64"
    efa_max_interfaces: Annotated[int, figure("EFA interfaces", 64, inclusive=True)]
    network_cards: Annotated[int, figure("network cards", 64)]
    primary_card_efa: bool = True
    network_card_interfaces: Annotated[tuple[Annotated[int, figure("interfaces", 16)], ...],
                                       Field(max_length=64)] | None = None
    efa_bandwidth_gbps: Annotated[int, figure("Gb/s", 100_000, inclusive=True)]
    placement_group: bool = True
    root_volume_gib: Annotated[int, figure("GiB", 65_536)] = 200
    cpus: Cpus | None = None
    memory_gib: Annotated[float, figure("GiB", 65_536)] | None = None
    ultraserver: UltraServer | None = None

    @model_validator(mode="after")
    def _every_card_listed(self) -> Ec2Instance:
        listed = self.network_card_interfaces
        if listed is not None and len(listed) != self.network_cards:
            raise ValueError(f"network_card_interfaces lists {len(listed)} cards; the type has {self.network_cards}")
        return self

    @property
    def hosts_per_device(self) -> int:
        """An UltraServer's instances; 1 for an instance type."""
        return self.ultraserver.instances if self.ultraserver else 1

    def launched_as(self, key: str) -> str:
        """The instance type the stack launches: an UltraServer's, else the entry's own key."""
        return self.ultraserver.instance_type if self.ultraserver else key

    def interfaces_on(self, card: int) -> int | None:
        """How many interfaces network card `card` takes (None where the catalog does not record it)."""
        listed = self.network_card_interfaces
        return listed[card] if listed is not None and 0 <= card < len(listed) else None

    @model_validator(mode="after")
    def _efa_fits_the_cards(self) -> Ec2Instance:
        if self.efa_max_interfaces > len(self.efa_cards):
            raise ValueError(f"{self.efa_max_interfaces} EFA interfaces do not fit on {len(self.efa_cards)} network "
                             "cards that carry EFA (one per card)")
        return self

    @property
    def efa_cards(self) -> range:
        """The network card indexes that can carry an EFA interface, in order."""
        return range(0 if self.primary_card_efa else 1, self.network_cards)

    @property
    def fabric_line_rate(self) -> tuple[int, str]:
        """The instance's compute-fabric bandwidth in Gb/s and what it is, for checks that judge the fabric by a
        figure without knowing which cloud's (`clusterforge health allreduce`'s floor)."""
        return self.efa_bandwidth_gbps, "EFA"

    @property
    def network(self) -> str:
        efa = f"{self.efa_max_interfaces} EFA / {self.network_cards} cards" if self.efa_max_interfaces else "no EFA"
        if self.ultraserver is None:
            return efa
        return f"{self.ultraserver.instances}x {self.ultraserver.instance_type}, one GPU domain; {efa} each"
