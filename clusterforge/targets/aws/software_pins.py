"""The EFA software every node of an AWS cluster installs beside its GPU stack, pinned in the blueprint's
`software:` (the blueprint model gets these fields through `blueprint.py`), and the role variables they are rendered
to (`render.py`). The defaults are the x86_64 DLAMI set of 2026-10 (EFA installer 1.50.0, which bundles
aws-ofi-nccl 1.21.1); SW-001 checks them against the software tables (`software_checks.py`)."""

from __future__ import annotations

from pydantic import BaseModel

from clusterforge.core.text import VersionPin
from clusterforge.model.base import Strict


class EfaPins(Strict):
    """`software.efa_installer` and `software.aws_ofi_nccl`."""

    efa_installer: VersionPin = "1.50.0"
    aws_ofi_nccl: VersionPin = "1.21.1"


PIN_VARS = (("efa_installer", "efa_installer_version"), ("aws_ofi_nccl", "efa_aws_ofi_nccl_version"))


def efa_pins(software: BaseModel) -> EfaPins:
    """The EFA pins of a blueprint's `software:` (the composed model has them as fields)."""
    return EfaPins(**{name: getattr(software, name) for name in EfaPins.model_fields})
