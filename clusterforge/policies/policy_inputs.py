"""What a verdict is reached under: the inputs a command names, and the policy read from them once.

Below the pipeline that uses them (`analysis`) and the checks that take a policy (`compose`), so both name the
type without importing each other. Nothing of the engine is imported here at run time: the CLI builds
`PolicyInputs` from its options and must stay quick for `--help`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clusterforge.catalog import Catalog
    from clusterforge.policies.config import PolicyConfig
    from clusterforge.policies.waivers import Waiver


@dataclass(frozen=True)
class PolicyInputs:
    """The files and choices that decide a verdict, as a command's options or the stack config name them."""

    catalogs: tuple[Path, ...] = ()
    policy_config: Path | None = None
    waivers: Path | None = None
    skip: tuple[str, ...] = ()
    fail_level: str = "error"
    today: dt.date | None = None

    def files(self) -> tuple[Path, ...]:
        """Every file these inputs read, so an output can be refused when it would overwrite one."""
        return (*self.catalogs, *(p for p in (self.policy_config, self.waivers) if p is not None))


@dataclass(frozen=True)
class Policy:
    """`PolicyInputs` read and checked once: the catalog, the thresholds and the waivers."""

    inputs: PolicyInputs
    catalog: Catalog
    config: PolicyConfig
    waivers: tuple[Waiver, ...]
