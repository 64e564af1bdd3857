"""`lab up --metal`'s face: the metal lab brought up (clusterforge/lab/metal) and its first job's report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from clusterforge.lab.paths import LabPaths

if TYPE_CHECKING:
    from rich.console import Console


def up_metal(paths: LabPaths, blueprint: Path, catalogs: tuple[Path, ...], view: Console, started: float) -> None:
    """`lab up --metal` (lab/metal): up to the provisioning service, then the first job, which makes SLURM power
    the servers on through their BMCs, with each server's boot shown from its console."""
    from clusterforge.lab.metal import up as metal
    from clusterforge.lab.render import DEFAULT_CATALOG, data_file

    lab_catalog = data_file(DEFAULT_CATALOG)
    made = metal.up(paths, blueprint, [lab_catalog, *[c for c in catalogs if c.resolve() != lab_catalog.resolve()]],
                    view.print, None)
    view.print(metal.first_job(paths, made, view.print).rstrip())
    steps = ", ".join(f"{step} {seconds:.1f}s" for step, seconds in made.timings.steps)
    view.print(f"metal lab {paths.name} is up in {time.monotonic() - started:.1f}s ({steps})")
    view.print(f"servers: {', '.join(f'{s.node} ({s.domain})' for s in made.servers)}; BMCs {made.bmc_url}; "
               f"consoles {made.servers[0].console.parent}")
    view.print("next: clusterforge lab exec ctl-0001 -- sinfo   |   clusterforge lab down")
