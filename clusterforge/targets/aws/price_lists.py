"""Target aws's price lists: a price catalog for one region from AWS's own published offer files, for
`clusterforge catalog prices` (found at run time as a target's `price_lists` module; docs/cost.md, "A price
catalog for your region").

From the AmazonEC2 offer: the on-demand hourly price of every instance type the catalog knows (built-in and the
site's), Linux, shared tenancy, no pre-installed software. From the AmazonFSx offer: FSx for Lustre storage per
GB-month by deployment type, storage type and throughput tier, the `fsx_lustre` keys of prices.py. Each price
names the offer's published URL (its code, version and region), its publication date and the row's rate code; its date
is the publication's day. What the lists price beside these (FSx throughput capacity, metadata IOPS,
Intelligent-Tiering tiers, backups, reserved terms) has no key in the price tables and is not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import yaml

from clusterforge.catalog import Catalog
from clusterforge.catalog.prices import REGION
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.targets.aws.fsx import THROUGHPUT_TIERS
from clusterforge.targets.aws.instance import Ec2Instance
from clusterforge.targets.aws.offer_file import HEADER_LINE, METADATA, Offer, Row, offer_rows
from clusterforge.targets.aws.prices import fsx_key

SUMMARY = "AWS Price List offer files (AmazonEC2 and AmazonFSx), in their CSV form"
HOWTO = """\b
Where the files come from: AWS's Price List Bulk API, one file per service and region, public (no account):
  https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/REGION/index.csv
  https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonFSx/current/REGION/index.csv

\b
  curl -o ec2-eu-central-1.csv \\
    https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/eu-central-1/index.csv
  curl -o fsx-eu-central-1.csv \\
    https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonFSx/current/eu-central-1/index.csv
  clusterforge catalog prices --offer ec2-eu-central-1.csv --offer fsx-eu-central-1.csv \\
    --region eu-central-1 -o prices-eu-central-1.yaml
  clusterforge cost cluster.yaml --catalog prices-eu-central-1.yaml

A region's AmazonEC2 file is several hundred MB: it is read row by row, in a few MB of memory. Read the CSV form
(index.csv); the JSON form (index.json) is refused. Each price's source is the offer's published URL with its
version, so the catalog says which list it came from; make a new one when AWS publishes a new version."""

EC2, FSX = "AmazonEC2", "AmazonFSx"
# The one price of an instance type a cluster's nodes run at on demand, as the tools that read these lists select
# it: Infracost (internal/resources/aws/instance.go: productFamily Compute Instance, tenancy Shared, operatingSystem
# Linux, preInstalledSw NA, licenseModel No License required, capacitystatus Used), ec2instances.info (ec2.py: the
# same, and a marketoption of CapacityBlock skipped), opencost (pkg/cloud/aws: marketoption OnDemand, so a Capacity
# Block row never stands for on-demand), and Linux's `operation` RunInstances (RHEL, SUSE, Windows and SQL Server
# have RunInstances:NNNN). TermType OnDemand leaves out the Reserved rows; CapacityStatus Used leaves out an
# unused reservation's and an allocated host's rows; Unit Hrs and Currency USD the upfront fees and other currencies.
EC2_ROW = (("termtype", "OnDemand"), ("operatingsystem", "Linux"), ("tenancy", "Shared"), ("preinstalledsw", "NA"),
           ("licensemodel", "No License required"), ("capacitystatus", "Used"), ("operation", "RunInstances"),
           ("unit", "Hrs"), ("currency", "USD"))
EC2_FAMILIES = frozenset({"Compute Instance", "Compute Instance (bare metal)"})
EC2_COLUMNS = ("ratecode", "priceperunit", "instancetype", "regioncode", "productfamily",
               *(key for key, _ in EC2_ROW))
# FSx for Lustre storage, per GB-month on demand: the usage type names the storage (`EUC1-` is the region's prefix;
# us-east-1 may have none): `Storage` a scratch file system's, `Storage.SSD.<tier>` and `Storage.HDD.<tier>` a
# persistent one's at that throughput tier. The SSD forms are AWS's as public readers of the list quote them (a cost
# comparison reading .../AmazonFSx/current/us-west-2/index.json: USW2-Storage for SCRATCH_2, USW2-Storage.SSD.50, 100
# and 200 for PERSISTENT_1; cloud-carbon-footprint's usage types: Storage.SSD.125); the HDD form follows them and is
# not confirmed. The tiers of PERSISTENT_1 and PERSISTENT_2 do not overlap (fsx.THROUGHPUT_TIERS), so a tier names
# its deployment type. Any other usage type (backups, throughput capacity, metadata IOPS, Intelligent-Tiering, the
# HDD read cache) has no key here: a list whose storage rows are named otherwise prices fewer keys, and says so.
FSX_STORAGE = re.compile(r"(?:[A-Z]{2,5}[0-9]?-)?Storage(?:\.(SSD|HDD)\.([0-9]{1,5}))?")
FSX_ROW = (("termtype", "OnDemand"), ("filesystemtype", "Lustre"), ("productfamily", "Storage"), ("unit", "GB-Mo"),
           ("currency", "USD"))
FSX_COLUMNS = ("ratecode", "priceperunit", "usagetype", "regioncode", *(key for key, _ in FSX_ROW))
TIER_DEPLOYMENT = {(storage, tier): deployment for (deployment, storage), tiers in THROUGHPUT_TIERS.items()
                   for tier in tiers}
SCRATCH = ("SCRATCH_1", "SCRATCH_2")
_REGION = re.compile(REGION)


@dataclass(frozen=True)
class Found:
    """One price an offer file states, and the row that states it."""

    usd: Decimal
    line: int
    rate_code: str  # SKU.OfferTermCode.RateCode: the row
    what: str  # the row, for people: "p5.48xlarge Linux ...", "usage type EUC1-Storage.SSD.125"


@dataclass(frozen=True)
class PriceCatalog:
    """What `catalog prices` writes (`text`, a catalog file) and says (`notes`, one line each)."""

    text: str
    notes: tuple[str, ...]


def instance_types(catalog: Catalog) -> list[str]:
    """The catalog's EC2 instance types (an UltraServer entry is not one: the list prices its instances' type)."""
    return [key for key, entry in catalog.items()
            if isinstance(entry, Ec2Instance) and getattr(entry, "ultraserver", None) is None]


def price_catalog(offers: Sequence[Path], region: str, catalog: Catalog) -> PriceCatalog:
    """The price catalog of `region` from these offer files (one AmazonEC2, one AmazonFSx, either or both)."""
    if not _REGION.fullmatch(region):
        raise ClusterforgeError(Problem(f"--region {shown(region)} is not an AWS region", hint="e.g. eu-central-1"))
    wanted = instance_types(catalog)
    read: dict[str, tuple[Offer, dict[str, Found]]] = {}
    for path in offers:
        with offer_rows(path) as (offer, rows):
            if offer.offer_code not in (EC2, FSX):
                raise offer.problem(METADATA.index("OfferCode") + 1, f"an {offer.offer_code} offer",
                                    f"clusterforge reads the {EC2} and {FSX} offers")
            if offer.offer_code in read:
                raise offer.problem(METADATA.index("OfferCode") + 1, f"a second {offer.offer_code} offer",
                                    f"the first is {read[offer.offer_code][0].path}: give one file per offer")
            if offer.offer_code == EC2:
                offer.require(*EC2_COLUMNS)
                found = _picked(offer, region, _instance_rows(rows, region, frozenset(wanted)))
            else:
                offer.require(*FSX_COLUMNS)
                found = _picked(offer, region, _fsx_rows(rows, region))
            read[offer.offer_code] = (offer, found)
    nothing: tuple[Offer | None, dict[str, Found]] = (None, {})
    instances: tuple[Offer | None, dict[str, Found]] = read.get(EC2, nothing)
    storage: tuple[Offer | None, dict[str, Found]] = read.get(FSX, nothing)
    notes = [*_instance_notes(instances[0], instances[1], wanted, region),
             *_fsx_notes(storage[0], storage[1], region)]
    return PriceCatalog(_text(region, instances, storage), tuple(notes))


def _instance_rows(rows: Iterator[Row], region: str, wanted: frozenset[str]) -> Iterator[tuple[str, Row]]:
    """Each row that is the on-demand Linux price of a wanted instance type in `region`, with that type."""
    for row in rows:
        instance = row.get("instancetype")
        if instance not in wanted or row.get("regioncode") != region:
            continue
        if row.get("productfamily") not in EC2_FAMILIES or any(row.get(key) != value for key, value in EC2_ROW):
            continue
        # files from before Capacity Blocks were listed have no MarketOption column: every row was on demand
        if "marketoption" in row.offer.columns and row.get("marketoption") != "OnDemand":
            continue
        yield instance, row


def _fsx_rows(rows: Iterator[Row], region: str) -> Iterator[tuple[str, Row]]:
    """Each row that is an FSx for Lustre storage price in `region`, once per `fsx_lustre` key it prices."""
    for row in rows:
        if row.get("regioncode") != region or any(row.get(key) != value for key, value in FSX_ROW):
            continue
        match = FSX_STORAGE.fullmatch(row.get("usagetype"))
        if match is None:
            continue
        storage, tier = match.group(1), match.group(2)
        if storage is None:
            for key in SCRATCH:
                yield key, row
            continue
        deployment = TIER_DEPLOYMENT.get((storage, int(tier)))
        if deployment is not None:
            yield fsx_key(deployment, storage, int(tier)), row


def _picked(offer: Offer, region: str, selected: Iterator[tuple[str, Row]]) -> dict[str, Found]:
    """One price per key from the selected rows: a second row for a key at another price is refused, never chosen
    between (the filters would not name one price); a file with no row at all for `region` is refused too."""
    found: dict[str, Found] = {}
    for key, row in selected:
        usd = row.usd()
        what = (f"usage type {row.get('usagetype')}" if offer.offer_code == FSX
                else f"{key} Linux, shared tenancy, no pre-installed software, on demand")
        first = found.get(key)
        if first is None:
            found[key] = Found(usd, row.line, row.code("ratecode"), what)
        elif first.usd != usd:
            code = shown(row.get("ratecode"))
            raise offer.problem(row.line, f"{key}: a second price, ${usd} (rate code {code}), beside ${first.usd} "
                                f"at line {first.line}", "the rows do not name one price: report the two rows")
    if not found:
        raise offer.problem(HEADER_LINE, f"no price for {region} in this {offer.offer_code} offer", (
            f"download the offer for {region}: .../{offer.offer_code}/current/{region}/index.csv"))
    return found


def _price(offer: Offer, region: str, found: Found) -> dict[str, object]:
    source = (f"AWS Price List {offer.url(region)} (published {offer.published}): {found.what}; rate code "
              f"{found.rate_code}")
    return {"usd": float(found.usd), "source": source, "date": offer.day}


def _text(region: str, instances: tuple[Offer | None, dict[str, Found]],
          storage: tuple[Offer | None, dict[str, Found]]) -> str:
    """The catalog file: this region's instance prices (on demand) and FSx for Lustre prices, each with its source."""
    regional: dict[str, object] = {}
    offer, found = instances
    if offer is not None:
        regional["instances"] = {key: {"on-demand": _price(offer, region, found[key])} for key in sorted(found)}
    offer, found = storage
    if offer is not None:
        prices: dict[str, object] = {}
        for key in sorted(found):
            price = _price(offer, region, found[key])
            prices[key] = price
            if key in SCRATCH:
                price["notes"] = ("SCRATCH_1 and SCRATCH_2 alike: the offer's scratch storage rate (usage type "
                                  "Storage) names no deployment type")
        regional["fsx_lustre"] = prices
    read = [f"#   {o.offer_code} version {o.version}, published {o.published}" for o, _ in (instances, storage)
            if o is not None]
    head = "\n".join([
        f"# {region} list prices, written by `clusterforge catalog prices` from AWS's own price lists:", *read,
        "# Instances: Linux, shared tenancy, no pre-installed software, on demand (per instance-hour); FSx for",
        "# Lustre: storage per GB-month. Pass this file to `cost` and `check` with --catalog; its prices replace the",
        f"# built-in ones in {region} only (docs/cost.md, \"A price catalog for your region\")."])
    body = {"apiVersion": "clusterforge/v1", "kind": "Catalog", "prices": {"regions": {region: regional}}}
    return head + "\n" + yaml.safe_dump(body, sort_keys=False, width=4096, allow_unicode=False)


def _instance_notes(offer: Offer | None, found: dict[str, Found], wanted: list[str], region: str) -> list[str]:
    if offer is None:
        return [f"no {EC2} offer given: no instance prices (--offer with its index.csv for {region})"]
    missing = [key for key in wanted if key not in found]
    lacking = f"; not in its on-demand list for {region}: {', '.join(missing)}" if missing else ""
    return [f"{offer.offer_code} version {offer.version} ({offer.day}): {len(found)} of {len(wanted)} instance "
            f"types the catalog knows priced on demand{lacking}"]


def _fsx_notes(offer: Offer | None, found: dict[str, Found], region: str) -> list[str]:
    if offer is None:
        return [f"no {FSX} offer given: no FSx for Lustre prices (--offer with its index.csv for {region})"]
    keys = [*SCRATCH, *(fsx_key(d, s, t) for (d, s), tiers in THROUGHPUT_TIERS.items() for t in tiers)]
    missing = [key for key in keys if key not in found]
    lacking = f"; none for {', '.join(missing)}" if missing else ""
    return [f"{offer.offer_code} version {offer.version} ({offer.day}): FSx for Lustre storage priced for "
            f"{len(found)} of {len(keys)} deployment types and tiers{lacking}"]
