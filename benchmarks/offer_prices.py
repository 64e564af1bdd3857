"""How long `clusterforge catalog prices` takes on a region's AmazonEC2 offer file, and how much memory it holds.

`python benchmarks/offer_prices.py [--mb 300] [--small-mb 3] [--keep DIR]` writes two AmazonEC2 offer files in
the CSV form AWS publishes (tests/test_offer_prices.py's header and rows): one of about `--small-mb` MB and one of
about `--mb` MB, each a region's price list in shape — every instance type the catalog knows plus made-up ones, each
priced on demand and reserved (1 and 3 years, three payment options, standard and convertible, an hourly row and
an upfront fee each), on Linux, Windows, RHEL, SUSE and with SQL Server, shared, dedicated and host tenancy,
used and unused capacity, as its ~90 columns — then runs the command on each as a user does (a process of its
own, `-o` a file) and prints a Markdown table: seconds (median of `--repeats`) and the process's peak resident
memory (getrusage of the child, ru_maxrss). Two floors are given beside them: `catalog prices --help` (the
interpreter and clusterforge's imports, no file read), and Python's `csv.reader` alone passing over the large file
in this process (no checks, no filters: the parse every reader of the CSV form pays). The files are removed
unless `--keep`.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.target_kernel import load_catalog  # noqa: E402
from clusterforge.targets.aws.price_lists import instance_types  # noqa: E402
from tests.test_offer_prices import EC2_HEADER, PUBLISHED, REGION, VERSION, ec2  # noqa: E402

PLATFORMS = (("Linux", "NA", "RunInstances"), ("Windows", "NA", "RunInstances:0002"),
             ("RHEL", "NA", "RunInstances:0010"), ("SUSE", "NA", "RunInstances:000g"),
             ("Windows", "SQL Std", "RunInstances:0006"), ("Linux", "SQL Web", "RunInstances:0200"))
TENANCIES = (("Shared", "Used"), ("Shared", "UnusedCapacityReservation"), ("Dedicated", "Used"),
             ("Host", "AllocatedHost"))
RESERVED = [(lease, option, offering) for lease in ("1yr", "3yr")
            for option in ("No Upfront", "Partial Upfront", "All Upfront") for offering in ("standard", "convertible")]


def rows_of(instance: str, n: int) -> list[list[str]]:
    """Every price dimension one instance type has in a region's list (about 150 rows)."""
    out = []
    for p, (system, software, operation) in enumerate(PLATFORMS):
        for t, (tenancy, status) in enumerate(TENANCIES):
            sku = f"S{n:06d}P{p}T{t}XXXXXXX"[:16]
            base = {"Operating_System": system, "Pre_Installed_S/W": software, "operation": operation,
                    "Tenancy": tenancy, "CapacityStatus": status, "vCPU": "192", "Memory": "2048 GiB",
                    "Physical_Processor": "AMD EPYC 7R13 Processor", "Network_Performance": "3200 Gigabit",
                    "Processor_Features": "AMD Turbo; AVX; AVX2", "Instance_Family": "GPU instance"}
            row = ec2(instance, f"{1 + (n * 7 + p * 3 + t) % 97}.{n % 10000:04d}000000", sku, **base)
            out.append([row.get(name.replace(" ", "_"), row.get(name, "")) for name in EC2_HEADER])
            for r, (lease, option, offering) in enumerate(RESERVED):
                term = {"TermType": "Reserved", "OfferTermCode": f"R{r:09d}", "LeaseContractLength": lease,
                        "PurchaseOption": option, "OfferingClass": offering}
                hourly = ec2(instance, "12.3450000000", sku, **base, **term)
                fee = ec2(instance, "98765", sku, **base, **term, Unit="Quantity", PriceDescription="Upfront Fee")
                out += [[row.get(name.replace(" ", "_"), row.get(name, "")) for name in EC2_HEADER]
                        for row in (hourly, fee)]
    return out


def write_offer(path: Path, megabytes: float, known: list[str]) -> int:
    """An AmazonEC2 offer file of about `megabytes` MB; its row count."""
    target, rows, n = megabytes * 1e6, 0, 0
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerows([["FormatVersion", "v1.0"], ["Disclaimer", "This pricing list is for informational "
                          "purposes only."], ["Publication Date", PUBLISHED], ["Version", VERSION],
                          ["OfferCode", "AmazonEC2"], list(EC2_HEADER)])
        while stream.tell() < target:
            instance = known[n] if n < len(known) else f"x{n % 997}z.{n // 997 + 1}xlarge"
            batch = rows_of(instance, n)
            writer.writerows(batch)
            rows, n = rows + len(batch), n + 1
    return rows


def parse_only(path: Path) -> float:
    """Seconds for csv.reader to pass over the file, nothing else done."""
    started = time.perf_counter()
    with path.open(encoding="utf-8", newline="") as stream:
        for _ in csv.reader(stream):
            pass
    return time.perf_counter() - started


def measured(args: list[str]) -> tuple[float, float]:
    """(seconds, peak MiB) of one process running `args`, measured from a process of its own."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
             "s = time.perf_counter() - t; assert r.returncode == 0, r.returncode; "
             "print(s, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True).stdout
    seconds, kib = out.split()
    return float(seconds), int(kib) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--small-mb", type=float, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None)
    options = parser.parse_args()
    command = [str(Path(sys.executable).parent / "clusterforge"), "catalog", "prices"]
    known = instance_types(load_catalog())
    with tempfile.TemporaryDirectory() as scratch:
        where = options.keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        print("| file | rows | MB | seconds (median) | peak RSS (MiB) |")
        print("|---|---:|---:|---:|---:|")
        runs = [measured([*command, "--help"]) for _ in range(options.repeats)]
        print(f"| none (`catalog prices --help`) | - | - | {statistics.median(s for s, _ in runs):.2f} | "
              f"{max(m for _, m in runs):.0f} |")
        for megabytes in (options.small_mb, options.mb):
            path = where / f"ec2-{REGION}-{megabytes:g}mb.csv"
            started = time.perf_counter()
            rows = write_offer(path, megabytes, known)
            made = time.perf_counter() - started
            out = where / f"prices-{megabytes:g}mb.yaml"
            runs = [measured([*command, "--offer", str(path), "--region", REGION, "-o", str(out)])
                    for _ in range(options.repeats)]
            size = path.stat().st_size / 1e6
            print(f"| AmazonEC2, {size:.0f} MB (written in {made:.0f} s) | {rows:,} | {size:.1f} | "
                  f"{statistics.median(s for s, _ in runs):.2f} | {max(m for _, m in runs):.0f} |")
            if megabytes == options.mb:
                print(f"| the same, `csv.reader` alone, in process | {rows:,} | {size:.1f} | "
                      f"{statistics.median(parse_only(path) for _ in range(options.repeats)):.2f} | - |")
            if options.keep is None:
                path.unlink()


if __name__ == "__main__":
    main()
