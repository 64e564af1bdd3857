"""What target aws adds to the catalog (`CATALOG`): its kind of instance type (`instance`), its software tables
(`software`) and price tables (`prices`), filled from `data/` (instance types, prices, software rows, each with its
source)."""

from __future__ import annotations

from pathlib import Path

from clusterforge.catalog import CatalogPart
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.prices import AwsPrices
from clusterforge.targets.aws.software import TABLES

DATA = Path(__file__).parent / "data"
CATALOG = CatalogPart(files=(DATA / "aws.yaml", DATA / "software.yaml", DATA / "prices.yaml"), instance=Ec2Instance,
                      software=TABLES, prices=AwsPrices)
