"""Blueprint variants for the stack tests: the examples with one thing changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.aws.conftest import EXAMPLES


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return data


def write(tmp: Path, data: dict[str, Any], name: str = "bp.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def p4d(count: int = 4) -> dict[str, Any]:
    """p4d.24xlarge on demand: 4 EFA cards, no example file of its own."""
    data = example("aws-p6-b200")
    data["name"] = "small-p4d"
    data["pools"][0] |= {"hardware": "p4d.24xlarge", "count": count}
    data.pop("software")
    return data


def lowered_p5(interfaces: int = 16) -> dict[str, Any]:
    data = example("aws-p5")
    data["pools"][0]["efa_interfaces"] = interfaces
    return data


def with_errors() -> dict[str, Any]:
    """Three error findings: NET-005 (41 EFA on a 32-card type), STO-001 (capacity), STO-002 (tier)."""
    data = example("aws-p5")
    data["pools"][0]["efa_interfaces"] = 41
    data["storage"]["lustre"] |= {"capacity_gib": 50000, "throughput_mb_s_per_tib": 200}
    return data


def from_template(tmp: Path, name: str, **params: str) -> Path:
    """The blueprint `clusterforge new <name> --set k=v ...` writes (the template's defaults otherwise)."""
    from clusterforge.blueprint.templating import get

    path = tmp / f"{name}.yaml"
    path.write_text(get(name).render(dict(params)))
    return path


def p6_b300(interfaces: int | None = None) -> dict[str, Any]:
    """The aws-p6-b200 example on p6-b300.48xlarge: 17 cards, card 0 ENA only, 16 EFA."""
    data = example("aws-p6-b200")
    data["name"] = "research-b300"
    data["pools"][0]["hardware"] = "p6-b300.48xlarge"
    if interfaces is not None:
        data["pools"][0]["efa_interfaces"] = interfaces
    return data
