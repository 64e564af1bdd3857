"""The power-save programs against moto's EC2 (in-process, no traffic leaves the machine) and a recording
slurmctld: batched CreateFleet, one instance -> node map per batch (S3, moto's too), addresses set, throttling
retried, insufficient capacity marking
exactly the unlaunched nodes down, resume idempotent, suspend terminating, reconcile replacing what failed.

Throttling is injected as EC2's own 503 `RequestLimitExceeded` before moto answers, so botocore's real retry
runs; insufficient capacity as EC2's instant-fleet answer (fewer instances and an `Errors` entry, none at all
under `MinTargetCapacity`); a failed status check by rewriting DescribeInstanceStatus's parsed answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")

from botocore.awsrequest import AWSResponse  # noqa: E402
from moto.core.botocore_stubber import MockRawResponse  # noqa: E402

from clusterforge.core import hostlist  # noqa: E402
from clusterforge.core.errors import ClusterforgeError  # noqa: E402
from clusterforge.powersave import programs  # noqa: E402
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig, load  # noqa: E402
from clusterforge.powersave.reconcile import reconcile  # noqa: E402
from clusterforge.powersave.resume import job_nodes, resume  # noqa: E402
from clusterforge.powersave.slurm import RESUME_PREFIX, NodeState, Scontrol, parse_sinfo  # noqa: E402
from clusterforge.powersave.suspend import suspend  # noqa: E402
from clusterforge.targets.aws import powersave as aws  # noqa: E402
from clusterforge.targets.aws.powersave import BATCH_TAG, Ec2Provider, NodeMap  # noqa: E402
from tests.powersave_fakes import RecordingSlurm  # noqa: E402

REGION = "us-east-1"
BOOT_BUCKET = "c1-boot-test"
EC2 = "aws"  # the file's provider: the target whose powersave.PROVIDER (Ec2Provider) the programs make


class ShortOfCapacity:
    """EC2 with only `left` more instances of capacity: an instant fleet gets what is left and an error, or none
    at all when `MinTargetCapacity` asks more than is left."""

    def __init__(self, ec2: Any, left: int) -> None:
        self.ec2, self.left = ec2, left

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ec2, name)

    def create_fleet(self, **request: Any) -> dict[str, Any]:
        wanted = request["TargetCapacitySpecification"]["TotalTargetCapacity"]
        minimum = request["OnDemandOptions"].get("MinTargetCapacity", 0)
        error = {"ErrorCode": "InsufficientInstanceCapacity",
                 "ErrorMessage": "There is no Spot capacity available that matches your request."}
        if minimum > self.left or self.left == 0:
            return {"Instances": [], "Errors": [error]}
        given = min(wanted, self.left)
        self.left -= given
        request["TargetCapacitySpecification"]["TotalTargetCapacity"] = given
        answer: dict[str, Any] = self.ec2.create_fleet(**request)
        if given < wanted:
            answer["Errors"] = [error]
        return answer


@pytest.fixture()
def ec2(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("CLUSTERFORGE_BOOT_BUCKET", BOOT_BUCKET)  # the controller's node.env has it
    with moto.mock_aws():
        client = aws.client(REGION)  # the programs' client: their retry policy is what is tested
        aws.client(REGION, "s3").create_bucket(Bucket=BOOT_BUCKET)
        vpc = client.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        subnet = client.create_subnet(VpcId=vpc, CidrBlock="10.0.0.0/18")["Subnet"]["SubnetId"]
        image = client.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        client.create_launch_template(LaunchTemplateName="c1-gpu-use1a", LaunchTemplateData={
            "ImageId": image, "InstanceType": "p5.48xlarge"})
        client.subnet = subnet
        yield client


def config_for(ec2: Any, nodes: str = "gpu-[0001-1200]", static: str = "", **group: Any) -> PowerSaveConfig:
    return PowerSaveConfig(cluster="c1", provider=EC2, region=REGION, groups=(NodeGroup(
        name="gpu-use1a", nodes=nodes, static=static, launch={
            "launch_template": "c1-gpu-use1a", "instance_type": "p5.48xlarge", "subnet": ec2.subnet}, **group),))


def calls_to(ec2: Any, operation: str) -> list[int]:
    seen: list[int] = []
    ec2.meta.events.register(f"before-call.ec2.{operation}", lambda **_: seen.append(1))
    return seen


def tagged(ec2: Any) -> dict[str, dict[str, Any]]:
    """The live instances by the node their batch's map (read afresh from S3) names; an unnamed one by its id."""
    found = {}
    maps = NodeMap(aws.client(REGION, "s3"), BOOT_BUCKET)
    for page in ec2.get_paginator("describe_instances").paginate(
            Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]):
        for reservation in page["Reservations"]:
            for raw in reservation["Instances"]:
                tags = {t["Key"]: t["Value"] for t in raw.get("Tags", [])}
                node = maps.nodes_of(tags[BATCH_TAG]).get(raw["InstanceId"]) if BATCH_TAG in tags else None
                found[node or raw["InstanceId"]] = {"tags": tags, "ip": raw.get("PrivateIpAddress")}
    return found


def test_resume_launches_in_batched_fleets_names_every_instance_by_batch_and_sets_its_address(ec2) -> None:
    config = config_for(ec2)
    fleets, tags = calls_to(ec2, "CreateFleet"), calls_to(ec2, "CreateTags")
    provider = Ec2Provider(config, ec2)
    maps: list[int] = []
    provider.node_map.s3.meta.events.register("before-call.s3.PutObject", lambda **_: maps.append(1))
    slurm = RecordingSlurm()
    nodes = hostlist.expand("gpu-[0001-1200]")
    done = resume(config, provider, slurm, nodes, sleep=lambda _: None)
    assert len(fleets) == 3 and len(maps) == 3 and not tags  # 500 + 500 + 200: a map per batch, no tag per node
    live = tagged(ec2)
    assert sorted(live) == nodes
    assert {v["tags"]["clusterforge:cluster"] for v in live.values()} == {"c1"}
    assert len({v["tags"][BATCH_TAG] for v in live.values()}) == 3
    assert {n: v["ip"] for n, v in live.items()} == slurm.addresses
    assert not slurm.down and not done.failed and len(done.launched) == 1200


def test_resuming_a_node_twice_launches_it_once(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0008]")
    slurm = RecordingSlurm()
    resume(config, Ec2Provider(config, ec2), slurm, ["gpu-0001", "gpu-0002"], sleep=lambda _: None)
    fleets = calls_to(ec2, "CreateFleet")
    again = resume(config, Ec2Provider(config, ec2), slurm, ["gpu-0001", "gpu-0002", "gpu-0003"],
                   sleep=lambda _: None)
    assert again.already == 2 and list(again.launched) == ["gpu-0003"] and len(fleets) == 1
    assert sorted(tagged(ec2)) == ["gpu-0001", "gpu-0002", "gpu-0003"]


def test_throttling_is_retried_not_taken_for_a_lack_of_capacity(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0004]")
    refused: list[int] = []

    def throttle(request: Any, **_: Any) -> AWSResponse | None:
        if len(refused) >= 3:
            return None
        refused.append(1)
        body = (b"<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded."
                b"</Message></Error></Errors><RequestID>throttled</RequestID></Response>")
        return AWSResponse(request.url, 503, {}, MockRawResponse(body))

    ec2.meta.events.register_first("before-send.ec2.CreateFleet", throttle)
    slurm = RecordingSlurm()
    done = resume(config, Ec2Provider(config, ec2), slurm, hostlist.expand("gpu-[0001-0004]"), sleep=lambda _: None)
    assert len(refused) == 3  # more than botocore's default 3 attempts: the programs' own retry policy
    assert len(done.launched) == 4 and not slurm.down


def test_insufficient_capacity_marks_exactly_the_unlaunched_nodes_down_with_the_reason(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0016]", scaling="best-effort")
    slurm = RecordingSlurm()
    done = resume(config, Ec2Provider(config, ShortOfCapacity(ec2, 5)), slurm,
                  hostlist.expand("gpu-[0001-0008]"), sleep=lambda _: None)
    assert sorted(done.launched) == hostlist.expand("gpu-[0001-0005]")
    assert sorted(slurm.down) == hostlist.expand("gpu-[0006-0008]")
    assert all(r.startswith(f"{RESUME_PREFIX} InsufficientInstanceCapacity") for r in slurm.down.values())
    assert sorted(tagged(ec2)) == hostlist.expand("gpu-[0001-0005]")


def test_an_all_or_nothing_job_gets_every_node_or_none(ec2, tmp_path) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0016]")  # all-or-nothing by default
    resume_file = tmp_path / "resume.json"
    resume_file.write_text(json.dumps({"all_nodes_resume": "gpu-[0001-0006]", "jobs": [
        {"job_id": 7, "nodes_resume": "gpu-[0001-0002]"}, {"job_id": 8, "nodes_resume": "gpu-[0003-0006]"}]}))
    slurm = RecordingSlurm()
    done = resume(config, Ec2Provider(config, ShortOfCapacity(ec2, 3)), slurm,
                  hostlist.expand("gpu-[0001-0006]"), job_nodes(resume_file), sleep=lambda _: None)
    assert sorted(done.launched) == ["gpu-0001", "gpu-0002"]  # job 7 fits; job 8 needs 4 of the 1 left
    assert sorted(slurm.down) == hostlist.expand("gpu-[0003-0006]")
    assert sorted(tagged(ec2)) == ["gpu-0001", "gpu-0002"]


def test_suspend_terminates_the_nodes_instances(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0004]")
    provider = Ec2Provider(config, ec2)
    resume(config, provider, RecordingSlurm(), hostlist.expand("gpu-[0001-0004]"), sleep=lambda _: None)
    gone = suspend(provider, ["gpu-0002", "gpu-0003", "gpu-0099"])
    assert sorted(i.node for i in gone) == ["gpu-0002", "gpu-0003"]
    assert sorted(tagged(ec2)) == ["gpu-0001", "gpu-0004"]


def test_reconcile_replaces_a_failed_instance_ends_orphans_and_asks_capacity_again(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0006]", static="gpu-0006")
    assert config.insufficient_capacity_timeout_s == 600
    provider = Ec2Provider(config, ec2)
    resume(config, provider, RecordingSlurm(), hostlist.expand("gpu-[0001-0003]"), sleep=lambda _: None)
    sick = provider.find(["gpu-0001"])["gpu-0001"].id

    def fail_status_check(parsed: dict[str, Any], **_: Any) -> None:
        for status in parsed.get("InstanceStatuses", []):
            if status["InstanceId"] == sick:
                status["InstanceStatus"]["Status"] = "impaired"

    ec2.meta.events.register("after-call.ec2.DescribeInstanceStatus", fail_status_check)
    now = datetime(2026, 11, 24, 12, 0, 0)
    slurm = RecordingSlurm({
        "gpu-0001": NodeState("alloc"), "gpu-0002": NodeState("idle~"), "gpu-0003": NodeState("alloc#"),
        "gpu-0004": NodeState("down~", f"{RESUME_PREFIX} InsufficientInstanceCapacity: none", now - timedelta(
            seconds=601)),
        "gpu-0005": NodeState("down~", f"{RESUME_PREFIX} InsufficientInstanceCapacity: none", now - timedelta(
            seconds=30)),
        "gpu-0006": NodeState("idle~")})
    done = reconcile(config, provider, slurm, now)
    assert list(done.replaced) == ["gpu-0001"] and "status check" in slurm.powered_down["gpu-0001"]
    assert [i.node for i in done.orphans] == ["gpu-0002"]  # powered down yet running; 0003 is powering up
    assert done.retried == ["gpu-0004"] and "gpu-0005" not in slurm.powered_down
    assert slurm.powered_up == ["gpu-0006"]
    assert sorted(tagged(ec2)) == ["gpu-0003"]


def test_reconcile_with_nothing_wrong_does_nothing(ec2) -> None:
    config = config_for(ec2, nodes="gpu-[0001-0002]")
    provider = Ec2Provider(config, ec2)
    resume(config, provider, RecordingSlurm(), ["gpu-0001", "gpu-0002"], sleep=lambda _: None)
    slurm = RecordingSlurm({"gpu-0001": NodeState("alloc"), "gpu-0002": NodeState("idle")})
    done = reconcile(config, provider, slurm, datetime(2026, 11, 24))
    assert done.summary() == ["reconcile: nothing to do"]
    assert sorted(tagged(ec2)) == ["gpu-0001", "gpu-0002"]


def test_an_instance_whose_batch_was_never_named_is_an_orphan_after_the_grace(ec2) -> None:
    """The program died between CreateFleet and writing the map: after UNNAMED_GRACE_S reconcile ends it; before,
    it may be a launch a moment old and is left alone."""
    config = config_for(ec2, nodes="gpu-[0001-0002]")
    provider = Ec2Provider(config, ec2)
    request = provider._request(config.groups[0], 1, 0, "00000000000000ff")
    [stray] = [i for f in ec2.create_fleet(**request)["Instances"] for i in f["InstanceIds"]]
    slurm = RecordingSlurm({"gpu-0001": NodeState("idle~"), "gpu-0002": NodeState("idle~")})
    assert reconcile(config, provider, slurm, datetime(2026, 11, 24)).orphans == []
    later = datetime.now(UTC) + timedelta(seconds=aws.UNNAMED_GRACE_S + 1)
    provider = Ec2Provider(config, ec2)
    provider.now = lambda: later  # type: ignore[method-assign]
    assert [i.id for i in reconcile(config, provider, slurm, datetime(2026, 11, 24)).orphans] == [stray]
    assert tagged(ec2) == {}


def test_a_map_that_cannot_be_written_gives_the_batch_back(ec2) -> None:
    """Instances nobody can name would idle at full price: the batch is terminated and its nodes go down with
    the reason."""
    config = config_for(ec2, nodes="gpu-[0001-0004]")
    provider = Ec2Provider(config, ec2, NodeMap(aws.client(REGION, "s3"), "no-such-bucket"))
    slurm = RecordingSlurm()
    done = resume(config, provider, slurm, hostlist.expand("gpu-[0001-0004]"), sleep=lambda _: None)
    assert not done.launched and sorted(slurm.down) == hostlist.expand("gpu-[0001-0004]")
    assert all("NoSuchBucket: the batch's node map was not written" in r for r in slurm.down.values())
    assert tagged(ec2) == {}


def test_scontrol_gets_hostlists_in_chunks_and_one_line_reasons() -> None:
    ran: list[list[str]] = []
    slurm = Scontrol(lambda argv: ran.append(argv) or "")
    slurm.mark_down(hostlist.expand("gpu-[0001-1200]"), "clusterforge-resume: no capacity\nState=IDLE")
    assert len(ran) == 3
    assert ran[0][2] == "NodeName=gpu-[0001-0500]" and ran[0][3] == "State=DOWN"
    assert ran[0][4] == "Reason=clusterforge-resume: no capacity State=IDLE" and len(ran[0]) == 5
    slurm.set_addresses({"gpu-0002": "10.0.0.5", "gpu-0001": "10.0.0.4"})
    assert ran[-1][2:] == ["NodeName=gpu-0001,gpu-0002", "NodeAddr=10.0.0.4,10.0.0.5",
                           "NodeHostname=gpu-0001,gpu-0002"]


def test_sinfo_states_are_read_once_per_node() -> None:
    states = parse_sinfo("gpu-0001|idle~|Unknown|none\ngpu-0001|idle~|Unknown|none\n"
                         "gpu-0002|down~|2026-11-24T01:02:03|clusterforge-resume: ICE: x|y\n"
                         "gpu-0003|alloc#|Unknown|none\n")
    assert states["gpu-0001"].powered_down and not states["gpu-0001"].down
    assert states["gpu-0002"].down and states["gpu-0002"].reason == "clusterforge-resume: ICE: x|y"
    assert states["gpu-0002"].reason_at == datetime(2026, 11, 24, 1, 2, 3)
    assert states["gpu-0003"].powering


def test_a_broken_power_save_file_is_exit_2_with_its_location(tmp_path, caplog) -> None:
    path = tmp_path / "powersave.json"
    path.write_text(json.dumps({"cluster": "c1", "provider": EC2, "groups": [{"name": "g", "nodes": "gpu-[0001-",
                                                                              "launch": {"launch_template": "lt"}}]}))
    assert programs.resume_main(["gpu-0001", "--config", str(path)]) == 2
    assert f"{path}: groups.0.nodes: hostlist 'gpu-[0001-'" in caplog.text
    path.write_text(json.dumps({"cluster": "c1", "provider": EC2, "groups": [{"name": "g", "nodes": "x",
                                                                              "launch": {"instance_type": "p5"},
                                                                              "extra": 1}]}))
    with pytest.raises(Exception, match="extra"):
        load(path)


@pytest.mark.parametrize("provider", ["os:system", "clusterforge.powersave.programs:resume_main",
                                      "clusterforge.targets.aws.powersave:Ec2Provider", "builtins:eval", "../aws",
                                      "aws.powersave", "AWS", "aws\nx", ""])
def test_the_provider_is_a_target_name_or_the_file_is_refused(tmp_path, provider: str) -> None:
    """The file names the target whose provider the controller runs, never a module or a class (exit 2 else)."""
    path = tmp_path / "powersave.json"
    path.write_text(json.dumps({"cluster": "c1", "provider": provider, "groups": []}))
    with pytest.raises(ClusterforgeError, match="provider"):
        load(path)


def test_a_provider_this_copy_lacks_is_exit_2(tmp_path, caplog) -> None:
    path = tmp_path / "powersave.json"
    path.write_text(json.dumps({"cluster": "c1", "provider": "nowhere",
                                "groups": [{"name": "g", "nodes": "gpu-0001"}]}))
    assert programs.resume_main(["gpu-0001", "--config", str(path)]) == 2
    assert "provider 'nowhere' is not available here" in caplog.text


def test_the_maps_bucket_comes_from_the_controllers_node_env(tmp_path) -> None:
    """slurmctld starts the programs with its own environment: the bucket is read from node.env, else exit 2."""
    env = tmp_path / "node.env"
    env.write_text("CLUSTERFORGE_REGION=us-east-1\nCLUSTERFORGE_BOOT_BUCKET=c1-boot-x\n")
    assert aws.bucket_from_env({}, env) == "c1-boot-x"
    assert aws.bucket_from_env({"CLUSTERFORGE_BOOT_BUCKET": "other"}, env) == "other"
    with pytest.raises(ClusterforgeError, match="CLUSTERFORGE_BOOT_BUCKET is neither set nor in"):
        aws.bucket_from_env({}, tmp_path / "missing.env")


def test_the_ec2_provider_checks_each_groups_launch_data_and_names_the_place() -> None:
    """The file's `launch` is the provider's to read: a group without a launch template (a file written for
    another provider, or edited by hand) is exit 2 at that group's key, before anything is launched."""
    from clusterforge.targets.aws.powersave import Ec2Provider

    config = PowerSaveConfig(cluster="c1", provider=EC2, region=REGION, groups=(
        NodeGroup(name="a", nodes="a-0001", launch={"launch_template": "c1-a", "instance_type": "p5.48xlarge"}),
        NodeGroup(name="b", nodes="b-0001", launch={"instance_type": "p5.48xlarge"})))
    with pytest.raises(ClusterforgeError) as caught:
        Ec2Provider(config, ec2=object())
    [problem] = caught.value.problems
    assert problem.path == "groups.1.launch.launch_template" and "required" in problem.message.lower()
