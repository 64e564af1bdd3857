"""EC2 as a power-save provider: CreateFleet `instant` against the group's launch template, one map per batch.

What ParallelCluster's node plugin learned at thousands of nodes, kept here (scale.md):
- `CreateFleet Type=instant` with `MinTargetCapacity` makes all-or-nothing EC2's job, not ours; instances come
  back in the response, so no polling to learn their ids.
- Throttling (`RequestLimitExceeded`) is retried by botocore's standard retry mode with backoff; it is never
  taken for a lack of capacity (PR #734: 2,000 of 3,000 nodes unusable for 600 s).
- `DescribeInstances` is eventually consistent: an instance just launched may have no private address or may not
  be found at all; that is "not known yet", never a failed node (aws-parallelcluster #7265).
- Names cost no request per node. Naming each instance with a tag of its own is a CreateTags request per instance
  (the names differ, so a batch cannot share one), 12,500 on a launch day at EC2's mutating-request rate: the
  slowest part of that day. As the node plugin writes its instance -> node table in batches, a batch is named once
  (NodeMap): what is the same for the batch is tagged inside the CreateFleet request (cluster, group, batch id);
  right after CreateFleet answers the program writes the batch's instance -> node map as one object,
  `node-map/<batch>.json` in the cluster's boot bucket, before any instance has booted far enough to need it; a
  booting node reads its batch id from its own tags (the metadata service) and its name from that object
  (userdata_identify); the programs read the maps of the batches they see (resume's look-up before launching,
  suspend, reconcile), one GetObject per batch. Only the controller's role may write the maps (boot_access).

The map lives in this module because this module is what a controller gets of this target
(clusterforge.powersave.payload).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import INSUFFICIENT_CAPACITY, Instance, Launch

CLUSTER_TAG = "clusterforge:cluster"
GROUP_TAG = "clusterforge:group"
LIVE = ("pending", "running")
FILTER_VALUES = 200  # EC2's limit on values in one filter
DESCRIBE_IDS = 1000
TERMINATE_BATCH = 1000  # ParallelCluster's terminate_max_batch_size
RETRIES = {"mode": "standard", "max_attempts": 10}
UNNAMED_GRACE_S = 600  # a batch's map is written seconds after CreateFleet answers; 10 minutes means never


def client(region: str, service: str = "ec2") -> Any:
    """A client that retries throttling with backoff (botocore's standard mode covers RequestLimitExceeded and
    S3's SlowDown)."""
    import boto3
    from botocore.config import Config

    return boto3.client(service, region_name=region or None, config=Config(retries=RETRIES))


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _tags(raw: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in raw.get("Tags", [])}


BATCH_TAG = "clusterforge:batch"
PREFIX = "node-map/"
BATCH_ID = re.compile(r"[a-z0-9]{16}")  # what new_batch_id makes; anything else names no object
BUCKET_VARIABLE = "CLUSTERFORGE_BOOT_BUCKET"  # in the controller's node.env (userdata_boot.boot_env)
NODE_ENV = Path("/etc/clusterforge/node.env")  # userdata.ENV_FILE, where the stack's user data writes it


def new_batch_id() -> str:
    """A batch id no other launch of this cluster has: 64 random bits, lower-case hex."""
    return secrets.token_hex(8)


def key(batch: str) -> str:
    if not BATCH_ID.fullmatch(batch):
        raise ValueError(f"not a batch id: {batch!r}")
    return f"{PREFIX}{batch}.json"


def bucket_from_env(environ: Mapping[str, str] = os.environ, node_env: Path = NODE_ENV) -> str:
    """The boot bucket the maps live in: `CLUSTERFORGE_BOOT_BUCKET` from the environment, else from the
    controller's node.env (slurmctld starts the programs with its own environment, which does not have it)."""
    bucket = environ.get(BUCKET_VARIABLE, "")
    if not bucket:
        try:
            lines = node_env.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        bucket = next((line.partition("=")[2].strip() for line in lines
                       if line.startswith(f"{BUCKET_VARIABLE}=")), "")
    if not bucket:
        raise ClusterforgeError(Problem(f"no bucket for the instance -> node maps: {BUCKET_VARIABLE} is neither "
                                        f"set nor in {node_env}", str(node_env),
                                        hint="the stack's user data writes it on a controller it launches; an "
                                             "on-prem controller sets it (docs/hybrid.md)"))
    return bucket


class NodeMap:
    """The maps of one cluster's batches in its boot bucket, each read at most once per program run."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3, self.bucket = s3, bucket
        self._read: dict[str, dict[str, str]] = {}

    def publish(self, batch: str, group: str, nodes: Mapping[str, str]) -> None:
        """Write the batch's instance id -> node map (one PutObject), before its instances need it."""
        body = json.dumps({"batch": batch, "group": group, "nodes": dict(nodes)}, sort_keys=True)
        self.s3.put_object(Bucket=self.bucket, Key=key(batch), Body=body.encode(), ContentType="application/json")
        self._read[batch] = dict(nodes)

    def nodes_of(self, batch: str) -> dict[str, str]:
        """The batch's instance id -> node map; empty when it is not written (yet): an instance launched a moment
        ago is nobody's node until its batch's map is there (as one was until its name tag, before)."""
        if batch in self._read:
            return self._read[batch]
        try:
            answer = self.s3.get_object(Bucket=self.bucket, Key=key(batch))
        except ValueError:
            return {}
        except Exception as exc:  # botocore's ClientError, without importing botocore for the lab's programs
            if getattr(exc, "response", {}).get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return {}
            raise
        nodes = json.loads(answer["Body"].read()).get("nodes", {})
        self._read[batch] = {str(k): str(v) for k, v in nodes.items()}
        return self._read[batch]


Capacity = Literal["on-demand", "capacity-reservation", "capacity-block"]


class Ec2Launch(BaseModel):
    """A group's launch data as this provider reads it (`NodeGroup.launch`, written by render through
    powersave_launch.py): CreateFleet's launch template, override and capacity options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    launch_template: str = Field(min_length=1, max_length=128, description="launch template name")
    version: str = "$Latest"
    instance_type: str = Field(min_length=1, max_length=64)
    subnet: str = ""
    capacity: Capacity = "on-demand"
    reservation: str = ""


def launches(config: PowerSaveConfig) -> dict[str, Ec2Launch]:
    """Each group's launch data, checked: exit 2 at the first group whose data is not EC2's."""
    out = {}
    for index, group in enumerate(config.groups):
        try:
            out[group.name] = Ec2Launch.model_validate(group.launch)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in ("groups", index, "launch", *first["loc"]))
            raise ClusterforgeError(Problem(first["msg"], "the power-save file", path=where)) from exc
    return out


class Ec2Provider:
    OS_PACKAGES = ("python3-boto3",)  # an on-prem controller bursting into EC2; a baked AWS controller has its venv
    CONTROLLER_FILES: tuple[str, ...] = ()

    def __init__(self, config: PowerSaveConfig, ec2: Any | None = None, node_map: NodeMap | None = None) -> None:
        self.config = config
        self.launches = launches(config)
        self.ec2 = ec2 if ec2 is not None else client(config.region)
        self._node_map = node_map

    @property
    def node_map(self) -> NodeMap:
        """The boot bucket's maps, found when first needed: a controller without the bucket fails the call that
        needs a name (exit 2, saying where the bucket comes from), not one that needs none."""
        if self._node_map is None:
            self._node_map = NodeMap(client(self.config.region, "s3"), bucket_from_env())
        return self._node_map

    def _describe(self, filters: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        pages = self.ec2.get_paginator("describe_instances").paginate(Filters=[
            {"Name": f"tag:{CLUSTER_TAG}", "Values": [self.config.cluster]},
            {"Name": "instance-state-name", "Values": list(LIVE)}, *filters])
        for page in pages:
            for reservation in page.get("Reservations", []):
                yield from reservation.get("Instances", [])

    @staticmethod
    def now() -> datetime:
        return datetime.now(UTC)

    def _instance(self, raw: dict[str, Any]) -> Instance | None:
        batch = _tags(raw).get(BATCH_TAG, "")
        node = self.node_map.nodes_of(batch).get(raw["InstanceId"]) if batch else None
        if node is None:
            return None  # launched a moment ago (its batch's map is written right after) or not by these programs
        return Instance(raw["InstanceId"], node, raw.get("PrivateIpAddress"), raw.get("State", {}).get("Name", ""))

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """The live instances of these nodes: the live instances of their groups, named by their batches' maps
        (a page of DescribeInstances per 1,000 instances and a GetObject per batch, never a request per node)."""
        wanted = set(nodes)
        groups = sorted({g.name for n in wanted if (g := self.config.group_of(n)) is not None})
        found: dict[str, Instance] = {}
        for chunk in _chunks(groups, FILTER_VALUES):
            for raw in self._describe([{"Name": f"tag:{GROUP_TAG}", "Values": list(chunk)}]):
                instance = self._instance(raw)
                if instance is not None and instance.node in wanted:
                    found.setdefault(instance.node, instance)
        return found

    def everything(self) -> list[Instance]:
        """This cluster's live instances. One whose batch has no map UNNAMED_GRACE_S after its launch (the program
        that launched it died before writing it) is returned as nobody's node, an orphan for reconcile to end."""
        now = self.now()
        found = []
        for raw in self._describe([]):
            instance = self._instance(raw)
            launched = raw.get("LaunchTime")
            if instance is None and isinstance(launched, datetime) and (
                    now - launched).total_seconds() > UNNAMED_GRACE_S:
                instance = Instance(raw["InstanceId"], "", raw.get("PrivateIpAddress"),
                                    raw.get("State", {}).get("Name", ""))
            if instance is not None:
                found.append(instance)
        return found

    def _request(self, group: NodeGroup, count: int, minimum: int, batch: str) -> dict[str, Any]:
        spec = self.launches[group.name]
        override: dict[str, Any] = {"InstanceType": spec.instance_type}
        if spec.subnet:
            override["SubnetId"] = spec.subnet
        on_demand: dict[str, Any] = {"SingleInstanceType": True, "SingleAvailabilityZone": True}
        if minimum:
            on_demand["MinTargetCapacity"] = minimum
        if spec.capacity == "capacity-reservation":
            on_demand["CapacityReservationOptions"] = {"UsageStrategy": "use-capacity-reservations-first"}
        return {
            "Type": "instant",
            "LaunchTemplateConfigs": [{
                "LaunchTemplateSpecification": {"LaunchTemplateName": spec.launch_template,
                                                "Version": spec.version},
                "Overrides": [override]}],
            "TargetCapacitySpecification": {
                "TotalTargetCapacity": count,
                "DefaultTargetCapacityType": "capacity-block" if spec.capacity == "capacity-block" else "on-demand"},
            "OnDemandOptions": on_demand,
            "TagSpecifications": [{"ResourceType": "instance", "Tags": [
                {"Key": CLUSTER_TAG, "Value": self.config.cluster}, {"Key": GROUP_TAG, "Value": group.name},
                {"Key": BATCH_TAG, "Value": batch}]}],
        }

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        from botocore.exceptions import ClientError

        result = Launch()
        batch = new_batch_id()
        try:
            answer = self.ec2.create_fleet(**self._request(group, len(nodes), minimum, batch))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            reason = f"{error.get('Code', 'Unknown')}: {error.get('Message', '')}".strip()
            result.failed = dict.fromkeys(nodes, reason)
            return result
        ids = [i for fleet in answer.get("Instances", []) for i in fleet.get("InstanceIds", [])]
        errors = answer.get("Errors", [])
        reason = (f"{errors[0].get('ErrorCode', INSUFFICIENT_CAPACITY)}: {errors[0].get('ErrorMessage', '')}"
                  if errors else f"{INSUFFICIENT_CAPACITY}: EC2 launched {len(ids)} of {len(nodes)}")
        if len(ids) < minimum:  # EC2 honours MinTargetCapacity; this holds the promise where it did not
            if ids:
                self.ec2.terminate_instances(InstanceIds=ids)
            result.failed = dict.fromkeys(nodes, reason)
            return result
        named = dict(zip(ids, nodes, strict=False))
        try:
            self.node_map.publish(batch, group.name, named)  # one object for the batch, before any of it boots
        except ClientError as exc:  # instances nobody can name would idle at full price: give them back
            self.ec2.terminate_instances(InstanceIds=ids)
            error = exc.response.get("Error", {})
            result.failed = dict.fromkeys(nodes, f"{error.get('Code', 'Unknown')}: the batch's node map was not "
                                                 f"written: {error.get('Message', '')}".strip())
            return result
        result.instances.update({node: Instance(instance_id, node, None, "pending")
                                 for instance_id, node in named.items()})
        for node in nodes[len(ids):]:
            result.failed[node] = reason
        for surplus in ids[len(nodes):]:  # never expected; an unnamed instance would be an orphan
            self.ec2.terminate_instances(InstanceIds=[surplus])
        return result

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        from botocore.exceptions import ClientError

        by_id = {i.id: i.node for i in instances}
        known: dict[str, str] = {}
        for chunk in _chunks(list(by_id), DESCRIBE_IDS):
            try:
                pages = self.ec2.get_paginator("describe_instances").paginate(InstanceIds=list(chunk))
                for page in pages:
                    for reservation in page.get("Reservations", []):
                        for raw in reservation.get("Instances", []):
                            if raw.get("PrivateIpAddress"):
                                known[by_id[raw["InstanceId"]]] = raw["PrivateIpAddress"]
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "InvalidInstanceID.NotFound":
                    raise
        return known

    def terminate(self, instances: Sequence[Instance]) -> None:
        for chunk in _chunks([i.id for i in instances], TERMINATE_BATCH):
            self.ec2.terminate_instances(InstanceIds=list(chunk))

    def impaired(self) -> list[Instance]:
        ids: set[str] = set()
        for check in ("instance-status.status", "system-status.status"):
            pages = self.ec2.get_paginator("describe_instance_status").paginate(
                Filters=[{"Name": check, "Values": ["impaired"]}])
            for page in pages:  # the filter saves pages; the status is read, not trusted to the filter
                ids.update(s["InstanceId"] for s in page.get("InstanceStatuses", [])
                           if "impaired" in (s.get("InstanceStatus", {}).get("Status"),
                                             s.get("SystemStatus", {}).get("Status")))
        return [i for i in self.everything() if i.id in ids]

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """None: a launch makes a new instance, so resume looks a node up with `find` first."""
        return {}


PROVIDER = Ec2Provider  # what the programs make for this target (clusterforge.powersave.programs.provider_for)
