"""What AMD adds to the catalog (`CATALOG`): its software table (software.py), filled from data/software.yaml."""

from __future__ import annotations

from pathlib import Path

from clusterforge.accelerators.amd.software import TABLES
from clusterforge.catalog import CatalogPart

CATALOG = CatalogPart(files=(Path(__file__).parent / "data" / "software.yaml",), software=TABLES)
