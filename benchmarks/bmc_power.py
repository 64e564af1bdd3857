"""How fast `clusterforge power` drives many BMCs: OpenStack's sushy-tools emulator (fake driver) on loopback with
N systems, the fleet runner at several concurrencies, `status` (requests only) and `on` (requests and the wait
for the state to settle; the emulator applies a power change 1-11 s after it is asked, as hardware takes time).

`python benchmarks/bmc_power.py [--emulators 2] [--systems 128] [--concurrency 16 64]` prints a Markdown table:
seconds, nodes per second, and what that rate means for 12,500 nodes. Each emulator process (Flask, one Python)
serves `--systems` systems; its fake driver's cost per request grows with the systems it holds (at 1,024 in one
process, requests took tens of seconds), so more systems means more emulators, as more servers means more BMCs.
The rate is the emulators' on this machine; 12,500 real BMCs each answer their own requests, and the bound is
`--concurrency` over a BMC's time per request (the arithmetic in benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.bmc import fleet  # noqa: E402
from clusterforge.bmc.credentials import Credentials, Logins  # noqa: E402
from clusterforge.bmc.interface import NodeBmc  # noqa: E402
from tests.bmc_emulator import PASSWORD, USER, emulator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emulators", type=int, default=2)
    parser.add_argument("--systems", type=int, default=128, help="systems per emulator")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[16, 64])
    args = parser.parse_args()
    print("| systems | action | concurrency | seconds | nodes/s | 12,500 nodes at this rate (min) | failed |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        targets = []
        for index in range(args.emulators):
            (Path(folder) / str(index)).mkdir()
            running = stack.enter_context(emulator(Path(folder) / str(index), args.systems))
            targets += [NodeBmc(f"{node}-e{index}", running.url, ident, False) for node, ident in running.ids.items()]
        login = Logins(Credentials(USER, PASSWORD))
        for concurrency in args.concurrency:
            for action in ("status", "on", "off"):
                started = time.perf_counter()
                result = fleet.run(targets, login, action, concurrency=concurrency, settle_s=120)
                seconds = time.perf_counter() - started
                rate = len(targets) / seconds
                print(f"| {len(targets)} | {action} | {concurrency} | {seconds:.1f} | {rate:.1f} | "
                      f"{12_500 / rate / 60:.1f} | {len(result.failed)} |")


if __name__ == "__main__":
    main()
