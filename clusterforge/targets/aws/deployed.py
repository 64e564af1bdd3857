"""The stack's outputs as the rest of clusterforge sees deployed facts (`target_kernel.protocol.Outputs`): render
overlays them on its inventory, `inventory` builds one from them alone. The form is checked where they are read
(`inventory.parse_outputs`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from clusterforge.target_kernel.protocol import OutputsReader
from clusterforge.targets.aws.inventory import inventory, overlay, read_outputs, read_stream
from clusterforge.targets.aws.outputs import StackOutputs


@dataclass(frozen=True)
class Deployed:
    """One stack's outputs behind the target-neutral face."""

    outputs: StackOutputs

    @property
    def cluster(self) -> str:
        return self.outputs.cluster

    @property
    def controller_type(self) -> str | None:
        return self.outputs.controller_type

    @property
    def host_count(self) -> int:
        return len(self.outputs.nodes)

    def overlay(self, rendered: dict[str, Any]) -> dict[str, Any]:
        return overlay(rendered, self.outputs)

    def inventory(self, connection: str) -> dict[str, Any]:
        return inventory(self.outputs, connection)


def _file(path: Path) -> Deployed:
    return Deployed(read_outputs(path))


def _stream(stream: BinaryIO, file: str) -> Deployed:
    return Deployed(read_stream(stream, file))


READER = OutputsReader(_file, _stream)
