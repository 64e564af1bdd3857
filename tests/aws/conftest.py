"""A recorder for Pulumi's unit-test mocks: runs the real program, then tests read what it registered.

Guards against the ways mock tests pass without checking anything (see docs/aws.md, "Testing"):
- fresh mocks per test (set_mocks is process-global; the last call wins), always `preview=False`
  (a preview turns missing values into unknowns and skips every apply);
- `run` returns only after registrations drained (the program runs inside `pulumi.runtime.test`, which
  awaits the Output it returns) and fails when nothing was registered;
- inputs are the camelCase wire names the engine sees, never the Python attribute names;
- the root stack is reset per test, so exports of one test never leak into the next.
"""

from __future__ import annotations

import hashlib
import itertools
import runpy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.settings as pulumi_settings
import pytest
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.rpc import deserialize_properties

from clusterforge.blueprint.load import load_blueprint
from clusterforge.targets.aws.settings import PROJECT, StackSettings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MAIN = ROOT / "stacks" / "aws" / "__main__.py"
DLAMI = "ami-0dlami0000000000a"
DLAMI_ARM64 = "ami-0dlami00000arm64a"  # what the mock's SSM gives for an arm64 parameter
PINNED = "ami-0123456789abcdef0"
ROOT_DEVICE = "/dev/sda1"


def baked_ami(name: str) -> str:
    """The mock's AMI id for the Image Builder image `name`."""
    return "ami-0" + hashlib.sha256(name.encode()).hexdigest()[:16]


@dataclass
class Registered:
    typ: str
    name: str
    inputs: dict[str, Any]
    parent: str
    protect: bool
    ignore_changes: list[str]
    outputs: dict[str, Any]  # the state the mock returned, with the id: what a stack policy reads


@dataclass
class Recorder(pulumi.runtime.Mocks):
    """Echoes inputs back as state, adds the outputs AWS computes, and remembers every registration."""

    resources: list[Registered] = field(default_factory=list)
    states: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ips: Iterator[int] = field(default_factory=lambda: itertools.count(10))

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        state = dict(args.inputs)
        rid = f"{args.name}-id"
        if args.typ == "aws:ec2/instance:Instance":
            n = next(self.ips)
            state |= {"privateIp": f"10.0.{n // 250}.{n % 250 + 4}", "arn": f"arn:aws:ec2:::instance/{rid}"}
            rid = f"i-{n:017x}"
        elif args.typ == "aws:fsx/lustreFileSystem:LustreFileSystem":
            state |= {"dnsName": f"{rid}.fsx.example.amazonaws.com", "mountName": "abcdefgh"}
        elif args.typ == "aws:ec2/launchTemplate:LaunchTemplate":
            state |= {"latestVersion": 1}
            rid = "lt-0" + hashlib.sha256(args.name.encode()).hexdigest()[:16]
        elif args.typ == "aws:s3/bucket:Bucket":
            state |= {"bucket": f"{args.inputs['bucketPrefix']}20261121", "arn": f"arn:aws:s3:::{rid}"}
        elif args.typ == "aws:ec2/placementGroup:PlacementGroup":
            rid = args.inputs["name"]
        elif args.typ == "aws:imagebuilder/image:Image":  # the AMI the build made: one id per image resource
            state |= {"outputResources": [{"amis": [{"image": baked_ami(args.name), "region": "us-east-1"}]}]}
        state.setdefault("arn", f"arn:aws:mock:::{args.typ}/{rid}")
        state.setdefault("name", f"{args.name}-auto")  # the engine auto-names resources that take a name
        self.states[(args.typ, args.name)] = {**state, "id": rid}  # registrations arrive on several threads
        return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        self.calls.append((args.token, dict(args.args)))
        if args.token == "aws:ssm/getParameter:getParameter":
            arm64 = "arm64" in args.args["name"].split("/") or args.args["name"].endswith("-arm64")
            return {"name": args.args["name"], "value": DLAMI_ARM64 if arm64 else DLAMI, "type": "String"}
        if args.token == "aws:ec2/getAmi:getAmi":
            return {"id": args.args["filters"][0]["values"][0], "rootDeviceName": ROOT_DEVICE}
        raise AssertionError(f"unexpected invoke {args.token}")

    def of_type(self, typ: str) -> list[Registered]:
        return [r for r in self.resources if r.typ == typ]

    def one(self, typ: str, name: str | None = None) -> Registered:
        found = [r for r in self.of_type(typ) if name is None or r.name == name]
        assert len(found) == 1, f"expected one {typ} {name or ''}, got {[r.name for r in found]}"
        return found[0]

    def named(self, name: str) -> Registered:
        [found] = [r for r in self.resources if r.name == name]
        return found


class Monitor(pulumi_mocks.MockMonitor):
    """Also records parent, protect and ignore_changes, which MockResourceArgs leaves out."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__(recorder)
        self.recorder = recorder

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.recorder.resources.append(Registered(
                request.type, request.name, deserialize_properties(request.object), request.parent,
                request.protect, list(request.ignoreChanges),
                self.recorder.states.get((request.type, request.name), {})))
        return response


@dataclass
class Run:
    recorder: Recorder
    exports: dict[str, Any]  # the stack outputs (`pulumi.export`), resolved
    value: Any = None  # what the program returned, resolved
    error: BaseException | None = None


@pytest.fixture
def stack() -> Iterator[Callable[..., Run]]:
    """`stack(program)` runs `program()` (which returns an Output or a value) under fresh mocks."""

    def run(program: Callable[[], Any], expect_error: bool = False) -> Run:
        recorder = Recorder()
        pulumi_settings.ROOT.set(None)
        pulumi.runtime.set_mocks(recorder, project=PROJECT, stack="test", preview=False, monitor=Monitor(recorder))
        result = Run(recorder, {})

        def keep(value: Any, exports: dict[str, Any]) -> None:
            result.value = value
            result.exports.update(exports)

        def body() -> Any:
            try:
                value = program()
            except Exception as error:
                if not expect_error:
                    raise
                result.error = error
                return None
            root = pulumi_settings.get_root_resource()
            outputs = dict(getattr(root, "outputs", {}))
            return pulumi.Output.all(value, pulumi.Output.from_input(outputs)).apply(lambda pair: keep(*pair))

        pulumi.runtime.test(body)()
        if not expect_error:
            assert recorder.resources, "the program registered nothing: the mocks did not see it run"
        return result

    yield run
    pulumi.runtime.set_all_config({})


def settings_for(blueprint: Path, **overrides: Any) -> StackSettings:
    """The stack's settings, with a route to package repositories unless a test says otherwise (the bake is
    refused without one: test_bake_route)."""
    return StackSettings(blueprint=blueprint, **({"package_mirror": True} | overrides))


def build_example(name: str, **overrides: Any) -> Callable[[], Any]:
    """The program through the component code: design, components, outputs (as __main__ does)."""
    return build_blueprint(EXAMPLES / f"{name}.yaml", **overrides)


def build_blueprint(path: Path, **overrides: Any) -> Callable[[], Any]:
    from clusterforge.targets.aws.program import build

    def program() -> Any:
        built = build(load_blueprint(path), settings_for(path, **overrides))
        return pulumi.Output.from_input(built.outputs)

    return program


def run_main(config: dict[str, str], main: Path = MAIN) -> Callable[[], Any]:
    """The real `stacks/aws/__main__.py` (or a project's own, `main`: `clusterforge stack new aws`), with its stack
    config (`packageMirror: true` unless it says)."""

    def program() -> None:
        given = {"packageMirror": "true"} | config  # a route for the bake unless the test says otherwise
        pulumi.runtime.set_all_config({f"{PROJECT}:{k}": v for k, v in given.items()})
        runpy.run_path(str(main), run_name="__main__")

    return program
