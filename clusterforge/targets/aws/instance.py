"""Target aws's kind of instance type: an EC2 instance type, with the network cards and EFA limits the launch
template's interface layout is built from (`efa.efa_layout`). The types themselves are data with a source per
figure, in data/aws.yaml beside this file."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import model_validator

from clusterforge.catalog import Cpus, Instance
from clusterforge.core.validation import figure


class Ec2Instance(Instance):
    """A cloud instance type: no rack figures, but network cards and EFA limits matter.

    `primary_card_efa: false` is a type whose network card 0 carries only ENA (p6-b300): its EFA interfaces sit
    on cards 1..n and card 0 keeps just the primary interface. `architecture` is the CPU's, as EC2 names it
    (ProcessorInfo.SupportedArchitectures): it picks the parent image a pool's node image is baked from."""

    provider: Literal["aws"] = "aws"
    architecture: Literal["x86_64", "arm64"] = "x86_64"
    efa_max_interfaces: Annotated[int, figure("EFA interfaces", 64, inclusive=True)]
    network_cards: Annotated[int, figure("network cards", 64)]
    primary_card_efa: bool = True
    efa_bandwidth_gbps: Annotated[int, figure("Gb/s", 100_000, inclusive=True)]
    placement_group: bool = True
    root_volume_gib: Annotated[int, figure("GiB", 65_536)] = 200
    cpus: Cpus | None = None
    memory_gib: Annotated[float, figure("GiB", 65_536)] | None = None

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
        return f"{self.efa_max_interfaces} EFA / {self.network_cards} cards" if self.efa_max_interfaces else "no EFA"
