"""`clusterforge catalog prices`: a region's price catalog from AWS's own offer files, in their CSV form.

The files are written here in the real format (five metadata rows, the header AmazonEC2 publishes, one row per
price dimension), with made-up prices: the right row of each kind, and beside it rows that must never be read as
its price (Windows, RHEL, SQL Server, dedicated tenancy, bring-your-own-licence, an unused reservation, a
Capacity Block, a reserved term and its upfront fee, another region). The figure `cost` then gives a pool is
checked against the row's own hourly price × 730 × the count, the same arithmetic written out here.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path

import pytest
import yaml

# The header of AmazonEC2's CSV offer file, as AWS publishes it (its sixth line), in its order.
EC2_HEADER = (
    "SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription", "EffectiveDate", "StartingRange",
    "EndingRange", "Unit", "PricePerUnit", "Currency", "RelatedTo", "LeaseContractLength", "PurchaseOption",
    "OfferingClass", "Product Family", "serviceCode", "Location", "Location Type", "Instance Type",
    "Current Generation", "Instance Family", "vCPU", "Physical Processor", "Clock Speed", "Memory", "Storage",
    "Network Performance", "Processor Architecture", "Storage Media", "Volume Type", "Max Volume Size",
    "Max IOPS/volume", "Max IOPS Burst Performance", "Max throughput/volume", "Provisioned", "Tenancy",
    "EBS Optimized", "Operating System", "License Model", "Group", "Group Description", "Transfer Type",
    "From Location", "From Location Type", "To Location", "To Location Type", "usageType", "operation",
    "AvailabilityZone", "CapacityStatus", "ClassicNetworkingSupport", "Dedicated EBS Throughput", "ECU",
    "Elastic Graphics Type", "Enhanced Networking Supported", "From Region Code", "GPU", "GPU Memory", "Instance",
    "Instance Capacity - 10xlarge", "Instance Capacity - 12xlarge", "Instance Capacity - 16xlarge",
    "Instance Capacity - 18xlarge", "Instance Capacity - 24xlarge", "Instance Capacity - 2xlarge",
    "Instance Capacity - 32xlarge", "Instance Capacity - 4xlarge", "Instance Capacity - 8xlarge",
    "Instance Capacity - 9xlarge", "Instance Capacity - large", "Instance Capacity - medium",
    "Instance Capacity - metal", "Instance Capacity - xlarge", "instanceSKU", "Intel AVX2 Available",
    "Intel AVX Available", "Intel Turbo Available", "MarketOption", "Normalization Size Factor", "Physical Cores",
    "Pre Installed S/W", "Processor Features", "Product Type", "Region Code", "Resource Type", "serviceName",
    "SnapshotArchiveFeeType", "To Region Code", "Volume API Name", "VPCNetworkingSupport")
# AmazonFSx's columns as its CSV names them (the JSON form's attributes fileSystemType, storageType, deploymentOption,
# throughputCapacity, usagetype, regionCode): the reader finds a column by its name's letters and digits.
FSX_HEADER = (
    "SKU", "OfferTermCode", "RateCode", "TermType", "PriceDescription", "EffectiveDate", "StartingRange",
    "EndingRange", "Unit", "PricePerUnit", "Currency", "Product Family", "serviceCode", "Location", "Location Type",
    "Deployment Option", "File System Type", "Storage Type", "Throughput Capacity", "usageType", "operation",
    "Region Code", "serviceName")
REGION = "eu-central-1"
VERSION, PUBLISHED = "20261012093015", "2026-10-12T09:30:15Z"
P5_HOURLY = "61.2345000000"  # made up: no figure of AWS's
COUNT = 64


def offer_file(path: Path, code: str, header: tuple[str, ...], rows: list[dict[str, str]],
               version: str = VERSION, published: str = PUBLISHED) -> Path:
    """An offer file in AWS's CSV form: the metadata rows, the header, then each row (unnamed columns empty)."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerows([["FormatVersion", "v1.0"],
                      ["Disclaimer", "This pricing list is for informational purposes only."],
                      ["Publication Date", published], ["Version", version], ["OfferCode", code], list(header)])
    for row in rows:
        unknown = set(row) - set(header)
        assert not unknown, unknown
        writer.writerow([row.get(name, "") for name in header])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def ec2(instance: str, usd: str, sku: str, **changed: str) -> dict[str, str]:
    """The on-demand Linux price row of `instance` in eu-central-1, with the columns in `changed` replaced."""
    row = {"SKU": sku, "OfferTermCode": "JRTCKXETXF", "RateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
           "TermType": "OnDemand", "PriceDescription": f"${usd} per On Demand Linux {instance} Instance Hour",
           "EffectiveDate": "2026-10-01", "StartingRange": "0", "EndingRange": "Inf", "Unit": "Hrs",
           "PricePerUnit": usd, "Currency": "USD", "Product Family": "Compute Instance", "serviceCode": "AmazonEC2",
           "Location": "EU (Frankfurt)", "Location Type": "AWS Region", "Instance Type": instance,
           "Tenancy": "Shared", "Operating System": "Linux", "License Model": "No License required",
           "usageType": f"EUC1-BoxUsage:{instance}", "operation": "RunInstances", "CapacityStatus": "Used",
           "MarketOption": "OnDemand", "Pre Installed S/W": "NA", "Region Code": REGION,
           "serviceName": "Amazon Elastic Compute Cloud"}
    return row | {key.replace("_", " "): value for key, value in changed.items()}


# Rows that are not the on-demand Linux price of their type, each as AWS lists it, and the filter that drops it.
DECOYS = {
    "windows": {"Operating System": "Windows", "operation": "RunInstances:0002"},
    "rhel": {"Operating System": "RHEL", "operation": "RunInstances:0010"},
    "sql-server": {"Pre Installed S/W": "SQL Web", "operation": "RunInstances:0202"},
    "linux-sql-operation": {"operation": "RunInstances:0200"},
    "dedicated": {"Tenancy": "Dedicated", "usageType": "EUC1-DedicatedUsage:p5.48xlarge"},
    "byol": {"License Model": "Bring your own license"},
    "unused-reservation": {"CapacityStatus": "UnusedCapacityReservation"},
    "allocated-reservation": {"CapacityStatus": "AllocatedCapacityReservation"},
    "capacity-block": {"MarketOption": "CapacityBlock"},
    "reserved": {"TermType": "Reserved", "OfferTermCode": "38NPMPTW36", "LeaseContractLength": "1yr",
                 "PurchaseOption": "No Upfront", "OfferingClass": "standard"},
    "upfront-fee": {"TermType": "Reserved", "Unit": "Quantity", "PriceDescription": "Upfront Fee"},
    "other-region": {"Region Code": "us-west-2", "Location": "US West (Oregon)"},
    "dedicated-host": {"Product Family": "Dedicated Host", "Tenancy": "Host"},
    "other-currency": {"Currency": "CNY"},
    # one column changed alone (AWS changes the operation with it), so each filter is shown to hold by itself
    "os-alone": {"Operating System": "SUSE"},
    "software-alone": {"Pre Installed S/W": "SQL Std"},
    "unit-alone": {"Unit": "Quantity"},
    "family-alone": {"Product Family": "Dedicated Host"},
    "term-alone": {"TermType": "Reserved"},
}


def fsx(usage: str, usd: str, sku: str, **changed: str) -> dict[str, str]:
    """An FSx for Lustre storage row of eu-central-1 (per GB-month, on demand)."""
    row = {"SKU": sku, "OfferTermCode": "JRTCKXETXF", "RateCode": f"{sku}.JRTCKXETXF.Q7UJUT2CE6",
           "TermType": "OnDemand", "PriceDescription": f"${usd} per GB-month of {usage}", "EffectiveDate":
           "2026-10-01", "StartingRange": "0", "EndingRange": "Inf", "Unit": "GB-Mo", "PricePerUnit": usd,
           "Currency": "USD", "Product Family": "Storage", "serviceCode": "AmazonFSx", "Location": "EU (Frankfurt)",
           "Location Type": "AWS Region", "Deployment Option": "Single-AZ", "File System Type": "Lustre",
           "Storage Type": "SSD", "Throughput Capacity": usage.rpartition(".")[2] if "." in usage else "N/A",
           "usageType": f"EUC1-{usage}", "operation": "CreateFileSystem:Lustre", "Region Code": REGION,
           "serviceName": "Amazon FSx"}
    return row | {key.replace("_", " "): value for key, value in changed.items()}


def ec2_offer(tmp_path: Path, *extra: dict[str, str]) -> Path:
    """eu-central-1's AmazonEC2 offer: p5.48xlarge's price, each decoy at a price of its own, and `extra`."""
    rows = [ec2("p5.48xlarge", P5_HOURLY, "P5LINUXSHARED01"), ec2("m7i.4xlarge", "0.9576000000", "M7ILINUXSHARED1")]
    rows += [ec2("p5.48xlarge", f"{70 + n}.5000000000", f"P5DECOY{n:02d}", **{k.replace(" ", "_"): v for k, v in
             decoy.items()}) for n, decoy in enumerate(DECOYS.values())]
    return offer_file(tmp_path / "ec2-eu-central-1.csv", "AmazonEC2", EC2_HEADER, [*rows, *extra])


def fsx_offer(tmp_path: Path, *extra: dict[str, str]) -> Path:
    rows = [fsx("Storage", "0.1660000000", "FSXSCRATCH00001"), fsx("Storage.SSD.125", "0.1710000000", "FSXP2125000001"),
            fsx("Storage.SSD.250", "0.2470000000", "FSXP2250000001"), fsx("Storage.SSD.50", "0.1670000000", "FSXP150"),
            fsx("Storage.HDD.12", "0.0290000000", "FSXHDD12", Storage_Type="HDD"),
            fsx("BackupUsage", "0.0600000000", "FSXBACKUP"),
            fsx("Storage.SSD.250", "0.9990000000", "FSXWINDOWS", File_System_Type="Windows"),
            fsx("Storage.SSD.250", "0.8880000000", "FSXUSW2", Region_Code="us-west-2")]
    return offer_file(tmp_path / "fsx-eu-central-1.csv", "AmazonFSx", FSX_HEADER, [*rows, *extra])


def in_frankfurt(tmp_path: Path, aws_data: dict, lustre: dict | None = None) -> Path:
    """The aws-p5 example in eu-central-1, its 64 p5.48xlarge bought on demand (no Capacity Block)."""
    data = copy.deepcopy(aws_data)
    data["aws"]["region"], data["aws"]["availability_zones"] = REGION, ["euc1-az2"]
    data["aws"].pop("capacity")
    data["pools"][0]["purchase"] = "on-demand"
    if lustre is not None:
        data["storage"]["lustre"] = lustre
    path = tmp_path / "frankfurt.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def made(cli, tmp_path: Path, *offers: Path) -> Path:
    out = tmp_path / "prices-eu-central-1.yaml"
    args = [a for offer in offers for a in ("--offer", offer)]
    result = cli("catalog", "prices", *args, "--region", REGION, "-o", out)
    assert result.exit_code == 0, result.output
    return out


def cost_json(cli, blueprint: Path, *catalogs: Path) -> dict:
    result = cli("cost", blueprint, "-f", "json", *(a for c in catalogs for a in ("--catalog", c)))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def pool_line(found: dict, starts: str) -> dict:
    [line] = [x for x in found["lines"] if x["item"].startswith(starts)]
    return line


def test_a_catalog_from_the_offer_prices_a_p5_pool_in_frankfurt_at_the_offers_figure(cli, tmp_path: Path,
                                                                                      aws_data: dict) -> None:
    prices = made(cli, tmp_path, ec2_offer(tmp_path))
    found = cost_json(cli, in_frankfurt(tmp_path, aws_data), prices)
    gpu = pool_line(found, "p5.48xlarge on-demand, pool gpu")
    assert gpu["priced"] and gpu["region"] == REGION
    assert gpu["unit_usd"] == 61.2345
    assert gpu["total_usd"] == COUNT * 730 * 61.2345  # the offer's hourly figure x 730 x the count, exactly
    assert gpu["date"] == "2026-10-12"  # the offer's publication day
    assert gpu["source"] == (
        f"{prices}: AWS Price List https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/20261012093015/"
        "eu-central-1/index.csv (published 2026-10-12T09:30:15Z): p5.48xlarge Linux, shared tenancy, no pre-installed "
        "software, on demand; rate code P5LINUXSHARED01.JRTCKXETXF.6YS6EN2CT7")
    assert pool_line(found, "m7i.4xlarge")["unit_usd"] == 0.9576


def test_without_the_catalog_the_shipped_table_leaves_frankfurt_unpriced(cli, tmp_path: Path, aws_data: dict) -> None:
    found = cost_json(cli, in_frankfurt(tmp_path, aws_data))
    gpu = pool_line(found, "p5.48xlarge on-demand, pool gpu")
    assert not gpu["priced"] and gpu["total_usd"] is None
    assert "p5.48xlarge on-demand in eu-central-1 x 64 (pool gpu)" in found["unpriced"]


@pytest.mark.parametrize("decoy", list(DECOYS))
def test_a_row_that_is_not_the_linux_on_demand_price_is_never_read_as_one(cli, tmp_path: Path, decoy: str) -> None:
    """c5.xlarge has only this row: a leaky filter would give it a price."""
    row = ec2("c5.xlarge", "0.2220000000", "C5DECOY", **{k.replace(" ", "_"): v for k, v in DECOYS[decoy].items()})
    written = yaml.safe_load(made(cli, tmp_path, ec2_offer(tmp_path, row)).read_text())
    instances = written["prices"]["regions"][REGION]["instances"]
    assert "c5.xlarge" not in instances
    assert instances["p5.48xlarge"]["on-demand"]["usd"] == 61.2345


def test_fsx_for_lustre_is_priced_per_gb_month_by_deployment_type_and_tier(cli, tmp_path: Path,
                                                                            aws_data: dict) -> None:
    prices = made(cli, tmp_path, ec2_offer(tmp_path), fsx_offer(tmp_path))
    table = yaml.safe_load(prices.read_text())["prices"]["regions"][REGION]["fsx_lustre"]
    assert {key: entry["usd"] for key, entry in table.items()} == {
        "PERSISTENT_1/50": 0.167, "PERSISTENT_1/HDD/12": 0.029, "PERSISTENT_2/125": 0.171, "PERSISTENT_2/250": 0.247,
        "SCRATCH_1": 0.166, "SCRATCH_2": 0.166}
    assert "/AmazonFSx/20261012093015/eu-central-1/index.csv (published 2026-10-12T09:30:15Z): usage type " \
           "EUC1-Storage.SSD.250; rate code FSXP2250000001.JRTCKXETXF.Q7UJUT2CE6" in table["PERSISTENT_2/250"]["source"]
    found = cost_json(cli, in_frankfurt(tmp_path, aws_data), prices)
    storage = pool_line(found, "FSx for Lustre PERSISTENT_2 SSD 250")
    assert storage["priced"] and storage["total_usd"] == 50400 * 0.247
    assert found["monthly_usd"] == COUNT * 730 * 61.2345 + 730 * 0.9576 + 50400 * 0.247
    assert found["unpriced"] == []


def test_two_rows_at_two_prices_for_one_type_are_refused_at_the_second(cli, tmp_path: Path) -> None:
    offer = ec2_offer(tmp_path, ec2("p5.48xlarge", "59.0000000000", "P5SECOND"))
    result = cli("catalog", "prices", "--offer", offer, "--region", REGION)
    assert result.exit_code == 2
    last = len(offer.read_text().splitlines())
    assert f"{offer}:{last}: p5.48xlarge: a second price, $59.0000000000 (rate code 'P5SECOND.JRTCKXETXF." \
           "6YS6EN2CT7'), beside " \
           f"${P5_HOURLY} at line 7" in result.output


def test_the_same_price_twice_is_one_price(cli, tmp_path: Path) -> None:
    offer = ec2_offer(tmp_path, ec2("p5.48xlarge", P5_HOURLY, "P5AGAIN"))
    written = yaml.safe_load(made(cli, tmp_path, offer).read_text())
    assert "rate code P5LINUXSHARED01." in written["prices"]["regions"][REGION]["instances"]["p5.48xlarge"][
        "on-demand"]["source"]


def test_another_regions_offer_is_refused_with_the_region_to_download(cli, tmp_path: Path) -> None:
    offer = ec2_offer(tmp_path)
    result = cli("catalog", "prices", "--offer", offer, "--region", "eu-west-3")
    assert result.exit_code == 2
    assert f"{offer}:6: no price for eu-west-3 in this AmazonEC2 offer" in result.output
    assert "AmazonEC2/current/eu-west-3/index.csv" in result.output


def text_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "offer.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "line", "says"), [
    ("", 1, "empty: not a price list offer file"),
    ('{"formatVersion" : "v1.0", "offerCode" : "AmazonEC2"}\n', 1, "this is the JSON form of a price list"),
    ("apiVersion: clusterforge/v1\nkind: Catalog\n", 1, "line 1 should be 'FormatVersion' and its value"),
    ('"FormatVersion","v1.0"\n"Disclaimer","x"\n"Publication Date","yesterday"\n"Version","1"\n"OfferCode","X"\n',
     3, "Publication Date 'yesterday' is not an offer's"),
    ('"FormatVersion","v1.0"\n"Disclaimer","x"\n"Publication Date","2026-10-12T09:30:15Z"\n"Version",'
     '"20261012093015"\n"OfferCode","AmazonS3"\n"SKU","PricePerUnit"\n', 5, "an AmazonS3 offer"),
    ('"FormatVersion","v1.0"\n"Disclaimer","x"\n"Publication Date","2026-10-12T09:30:15Z"\n"Version",'
     '"20261012093015"\n"OfferCode","AmazonEC2"\n"SKU","PricePerUnit"\n', 6, "the header has no column"),
    ("x" * (1 << 20 | 1), 1, "a line longer than 1,048,576 characters"),
])
def test_a_file_that_is_not_an_offer_file_is_exit_2_at_its_line(cli, tmp_path: Path, text: str, line: int,
                                                                 says: str) -> None:
    path = text_file(tmp_path, text)
    result = cli("catalog", "prices", "--offer", path, "--region", REGION)
    assert result.exit_code == 2
    assert f"{path}:{line}: " in result.output and says in result.output, result.output


@pytest.mark.parametrize(("changed", "says"), [
    ({"PricePerUnit": "1e3"}, "PricePerUnit '1e3' is not a price"),
    ({"PricePerUnit": "0.0000000000"}, "PricePerUnit '0.0000000000' is not a price"),
    ({"RateCode": "P5.\u202eEVIL"}, "ratecode 'P5.\\u202eEVIL' is not a price list code"),
])
def test_a_hostile_row_is_refused_before_it_reaches_the_catalog(cli, tmp_path: Path, changed: dict[str, str],
                                                                says: str) -> None:
    offer = offer_file(tmp_path / "ec2.csv", "AmazonEC2", EC2_HEADER, [ec2("p5.48xlarge", P5_HOURLY, "P5") | changed])
    result = cli("catalog", "prices", "--offer", offer, "--region", REGION)
    assert result.exit_code == 2 and f"{offer}:7: " in result.output and says in result.output, result.output


def test_a_cut_row_and_an_unclosed_quote_are_refused(cli, tmp_path: Path) -> None:
    offer = ec2_offer(tmp_path)
    lines = offer.read_text().splitlines(keepends=True)
    cut = text_file(tmp_path, "".join(lines[:7]) + lines[7][: len(lines[7]) // 2] + "\n")
    result = cli("catalog", "prices", "--offer", cut, "--region", REGION)
    assert result.exit_code == 2 and f"{cut}:8: " in result.output
    assert f"where the header has {len(EC2_HEADER)}" in result.output
    open_quote = text_file(tmp_path, "".join(lines[:7]) + '"P5,unclosed\n' + "more,\n" * 40)
    result = cli("catalog", "prices", "--offer", open_quote, "--region", REGION)
    assert result.exit_code == 2 and "a row spans more than 16 lines" in result.output, result.output


def test_the_written_file_is_a_catalog_with_only_this_regions_prices_and_never_an_input(cli, tmp_path: Path) -> None:
    offer = ec2_offer(tmp_path)
    result = cli("catalog", "prices", "--offer", offer, "--region", REGION, "-o", offer)
    assert result.exit_code == 2 and offer.read_text().startswith('"FormatVersion"')
    written = yaml.safe_load(made(cli, tmp_path, offer).read_text())
    assert (written["apiVersion"], written["kind"], list(written["prices"])) == ("clusterforge/v1", "Catalog",
                                                                                ["regions"])
    assert list(written["prices"]["regions"]) == [REGION]
    assert list(written["prices"]["regions"][REGION]["instances"]["p5.48xlarge"]) == ["on-demand"]


def test_it_says_what_each_list_priced_and_lacked(cli, tmp_path: Path) -> None:
    result = cli("catalog", "prices", "--offer", ec2_offer(tmp_path), "--region", REGION)
    assert result.exit_code == 0
    assert "AmazonEC2 version 20261012093015 (2026-10-12): 2 of " in result.stderr
    assert "not in its on-demand list for eu-central-1: " in result.stderr and "p6-b200.48xlarge" in result.stderr
    assert "no AmazonFSx offer given" in result.stderr
    assert result.stdout.startswith("# eu-central-1 list prices, written by `clusterforge catalog prices`")


def test_help_says_where_to_download_the_files(cli) -> None:
    result = cli("catalog", "prices", "--help")
    assert result.exit_code == 0
    assert "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/REGION/index.csv" in \
        result.output
    assert "curl -o ec2-eu-central-1.csv" in result.output


def test_the_fsx_offer_alone_writes_only_fsx_prices_and_a_bad_region_is_exit_2(cli, tmp_path: Path) -> None:
    written = yaml.safe_load(made(cli, tmp_path, fsx_offer(tmp_path)).read_text())
    assert list(written["prices"]["regions"][REGION]) == ["fsx_lustre"]
    result = cli("catalog", "prices", "--offer", fsx_offer(tmp_path), "--region", "Frankfurt")
    assert result.exit_code == 2 and "--region 'Frankfurt' is not an AWS region" in result.output


def test_one_offer_twice_is_refused(cli, tmp_path: Path) -> None:
    first = ec2_offer(tmp_path)
    second = offer_file(tmp_path / "again.csv", "AmazonEC2", EC2_HEADER, [ec2("p5.48xlarge", P5_HOURLY, "P5")])
    result = cli("catalog", "prices", "--offer", first, "--offer", second, "--region", REGION)
    assert result.exit_code == 2 and f"{second}:5: a second AmazonEC2 offer" in result.output
