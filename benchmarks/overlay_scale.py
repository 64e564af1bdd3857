"""What the provisioning side writes for N servers' overlays, and how it grows: the metal lab's
`boot_service.write_overlays` (the system overlay once, each server's own), given a real render of a large cluster
as the boot folder's render.

    python benchmarks/generate.py --gpus 100000 -o /tmp/hall-100k.yaml
    clusterforge render /tmp/hall-100k.yaml -o /tmp/r100k
    python benchmarks/overlay_scale.py --render /tmp/r100k --servers 100 1000 12500

Prints, for each N, the seconds to write every overlay, the system overlay's bytes, one server's own bytes and
the total. A server's own overlay carries only what differs per server (its name, its secrets), so the total grows
with N by a few KB per server; what grows with the cluster (the render: every node's address and inventory) is
written once, in the system overlay.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.lab.metal import boot_service  # noqa: E402
from clusterforge.lab.nodes import NodeSpec  # noqa: E402
from clusterforge.lab.selfboot import BOOT, SECRETS, Given  # noqa: E402


def tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def measure(render: Path, servers: int, work: Path) -> dict[str, float]:
    boot = work / "boot"
    boot.mkdir()
    (boot / "node.env").write_text("CLUSTERFORGE_CLUSTER=hall\nCLUSTERFORGE_NODE=$(hostname)\n")
    (boot / "vars.yml").write_text("slurm_self_boot: true\n")
    key = work / "munge.key"
    key.write_bytes(b"k" * 1024)
    given = Given(("--volume", f"{boot}:{BOOT}:ro", "--volume", f"{render}:{BOOT}/render:ro",
                   "--volume", f"{key}:{SECRETS}/munge.key:ro"), ())
    folder = boot_service.BootFolder(work / "overlays", None)  # type: ignore[arg-type]
    specs = [NodeSpec(f"node-{i:05d}", ("slurm_compute",), "10.0.0.1") for i in range(1, servers + 1)]
    started = time.perf_counter()
    sizes = boot_service.write_overlays(folder, given, specs, b"ssh-ed25519 AAAA bench\n", lambda _: None)
    seconds = time.perf_counter() - started
    own = [v for k, v in sizes.items() if k != "system"]
    return {"seconds": seconds, "system": sizes["system"], "own": max(own), "total": sum(sizes.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--render", type=Path, required=True, help="a render folder (`clusterforge render`)")
    parser.add_argument("--servers", type=int, nargs="+", default=[100, 1000, 12500])
    args = parser.parse_args()
    print(f"render {args.render}: {tree_bytes(args.render) / 1e6:.1f} MB")
    for servers in args.servers:
        with tempfile.TemporaryDirectory(prefix="overlay-scale-") as work:
            got = measure(args.render, servers, Path(work))
        print(f"{servers:>6} servers: {got['seconds']:6.2f} s ({got['seconds'] / servers * 1e3:.2f} ms each), "
              f"system {got['system'] / 1e6:.1f} MB, own {got['own'] / 1e3:.1f} KB each, "
              f"total {got['total'] / 1e6:,.1f} MB")


if __name__ == "__main__":
    main()
