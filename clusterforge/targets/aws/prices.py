"""Target aws's own price table: FSx for Lustre per GB-month, by deployment type, storage type and throughput tier
(`fsx_lustre:` under `prices:`, beside the instance types' hourly prices). The figures are data with a source each
(data/prices.yaml beside this file); a site restates one with `--catalog` as any price."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from clusterforge.catalog.prices import Price

FSX_KEY = r"^[A-Z0-9_]{1,20}(/[A-Z0-9]{1,8})*$"


class AwsPrices(BaseModel):
    """The price tables only AWS has."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fsx_lustre: dict[Annotated[str, StringConstraints(pattern=FSX_KEY)], Price] = {}
    """USD per GB-month of FSx for Lustre: `DEPLOYMENT_TYPE[/HDD]/THROUGHPUT` (`PERSISTENT_2/250`, `SCRATCH_2`)."""


def fsx_key(deployment_type: str, storage_type: str, throughput: int | None) -> str:
    """The `fsx_lustre` key of a file system: `PERSISTENT_2/250`, `PERSISTENT_1/HDD/12`, `SCRATCH_2`."""
    parts = [deployment_type] + (["HDD"] if storage_type == "HDD" else []) + ([str(throughput)] if throughput else [])
    return "/".join(parts)
