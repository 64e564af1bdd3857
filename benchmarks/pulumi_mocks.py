"""How long the AWS stack program takes under Pulumi's unit-test mocks at 8, 128 and 1,024 nodes.

`python benchmarks/pulumi_mocks.py [--repeat 3] [sizes ...]` prints a Markdown table. Phases:
- check: load the blueprint and run every policy rule (what refuses a bad design);
- design: planner, node names, EFA layouts, subnets (pure Python, no Pulumi);
- build: constructing the components and resources (the program's own code, synchronously);
- drained: until every registration reached the mock engine (the Pulumi runtime's share included).
Each phase is the median of the repeats; the blueprint is examples/aws-p5.yaml with the GPU count changed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.settings as pulumi_settings
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.targets.aws.design import design  # noqa: E402
from clusterforge.targets.aws.guard import check  # noqa: E402
from clusterforge.targets.aws.program import build  # noqa: E402
from clusterforge.targets.aws.settings import PROJECT, StackSettings  # noqa: E402


class Mocks(pulumi.runtime.Mocks):
    """Counts registrations and returns what the program reads back (addresses, names, versions)."""

    def __init__(self) -> None:
        self.count = 0

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.count += 1
        state = dict(args.inputs) | {"privateIp": f"10.0.{self.count // 250}.{self.count % 250 + 4}",
                                     "latestVersion": 1, "bucket": "bench-bucket", "name": args.name,
                                     "arn": f"arn:aws:mock:::{args.name}", "dnsName": "fs.example",
                                     "mountName": "abc",
                                     "outputResources": [{"amis": [{"image": "ami-0bake0000000000b"}]}]}
        return f"{args.name}-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {"value": "ami-0123456789abcdef0", "rootDeviceName": "/dev/sda1"}


def blueprint(nodes: int, directory: Path) -> Path:
    data = yaml.safe_load((ROOT / "examples" / "aws-p5.yaml").read_text())
    data["pools"][0]["count"] = nodes
    path = directory / f"p5-{nodes}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def once(path: Path) -> dict[str, float]:
    settings = StackSettings(blueprint=path)
    checked, t_check = timed(lambda: check(settings))
    _, t_design = timed(lambda: design(checked.loaded, settings))
    mocks = Mocks()
    pulumi_settings.ROOT.set(None)
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack="bench", preview=False)
    phases: dict[str, float] = {}

    def program() -> Any:
        built, phases["build"] = timed(lambda: build(checked.loaded, settings))
        return pulumi.Output.from_input(built.outputs)

    _, drained = timed(lambda: pulumi.runtime.test(program)())
    return {"check": t_check, "design": t_design, "build": phases["build"], "drained": drained,
            "resources": float(mocks.count)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[8, 128, 1024])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| GPU nodes | resources | check s | design s | build s | drained s | drained ms/resource |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.sizes:
            path = blueprint(nodes, Path(tmp))
            runs = [once(path) for _ in range(args.repeat)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(f"| {nodes:,} | {int(med['resources']):,} | {med['check']:.3f} | {med['design']:.3f} | "
                  f"{med['build']:.2f} | {med['drained']:.2f} | {1000 * med['drained'] / med['resources']:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
