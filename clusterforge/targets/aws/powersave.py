"""EC2 as a power-save provider: CreateFleet `instant` against the group's launch template, one tag per node.

What ParallelCluster's node plugin learned at thousands of nodes, kept here (scale.md):
- `CreateFleet Type=instant` with `MinTargetCapacity` makes all-or-nothing EC2's job, not ours; instances come
  back in the response, so no polling to learn their ids.
- Throttling (`RequestLimitExceeded`) is retried by botocore's standard retry mode with backoff; it is never
  taken for a lack of capacity (PR #734: 2,000 of 3,000 nodes unusable for 600 s).
- `DescribeInstances` is eventually consistent: an instance just launched may have no private address or may not
  be found at all; that is "not known yet", never a failed node (aws-parallelcluster #7265).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import INSUFFICIENT_CAPACITY, Instance, Launch

CLUSTER_TAG = "clusterforge:cluster"
GROUP_TAG = "clusterforge:group"
NODE_TAG = "clusterforge:node"
LIVE = ("pending", "running")
FILTER_VALUES = 200  # EC2's limit on values in one filter
DESCRIBE_IDS = 1000
TERMINATE_BATCH = 1000  # ParallelCluster's terminate_max_batch_size
RETRIES = {"mode": "standard", "max_attempts": 10}


def client(region: str) -> Any:
    """An EC2 client that retries throttling with backoff (botocore's standard mode covers RequestLimitExceeded)."""
    import boto3
    from botocore.config import Config

    return boto3.client("ec2", region_name=region or None, config=Config(retries=RETRIES))


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _tags(raw: dict[str, Any]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in raw.get("Tags", [])}


class Ec2Provider:
    def __init__(self, config: PowerSaveConfig, ec2: Any | None = None) -> None:
        self.config = config
        self.ec2 = ec2 if ec2 is not None else client(config.region)

    def _describe(self, filters: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        pages = self.ec2.get_paginator("describe_instances").paginate(Filters=[
            {"Name": f"tag:{CLUSTER_TAG}", "Values": [self.config.cluster]},
            {"Name": "instance-state-name", "Values": list(LIVE)}, *filters])
        for page in pages:
            for reservation in page.get("Reservations", []):
                yield from reservation.get("Instances", [])

    @staticmethod
    def _instance(raw: dict[str, Any]) -> Instance | None:
        node = _tags(raw).get(NODE_TAG)
        if node is None:
            return None  # launched, not yet named: reconcile names or removes it
        return Instance(raw["InstanceId"], node, raw.get("PrivateIpAddress"), raw.get("State", {}).get("Name", ""))

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        found: dict[str, Instance] = {}
        for chunk in _chunks(list(nodes), FILTER_VALUES):
            for raw in self._describe([{"Name": f"tag:{NODE_TAG}", "Values": list(chunk)}]):
                instance = self._instance(raw)
                if instance is not None:
                    found.setdefault(instance.node, instance)
        return found

    def everything(self) -> list[Instance]:
        return [i for raw in self._describe([]) if (i := self._instance(raw)) is not None]

    def _request(self, group: NodeGroup, count: int, minimum: int) -> dict[str, Any]:
        override: dict[str, Any] = {"InstanceType": group.instance_type}
        if group.subnet:
            override["SubnetId"] = group.subnet
        on_demand: dict[str, Any] = {"SingleInstanceType": True, "SingleAvailabilityZone": True}
        if minimum:
            on_demand["MinTargetCapacity"] = minimum
        if group.capacity == "capacity-reservation":
            on_demand["CapacityReservationOptions"] = {"UsageStrategy": "use-capacity-reservations-first"}
        return {
            "Type": "instant",
            "LaunchTemplateConfigs": [{
                "LaunchTemplateSpecification": {"LaunchTemplateName": group.launch_template,
                                                "Version": group.version},
                "Overrides": [override]}],
            "TargetCapacitySpecification": {
                "TotalTargetCapacity": count,
                "DefaultTargetCapacityType": "capacity-block" if group.capacity == "capacity-block" else "on-demand"},
            "OnDemandOptions": on_demand,
            "TagSpecifications": [{"ResourceType": "instance", "Tags": [
                {"Key": CLUSTER_TAG, "Value": self.config.cluster}, {"Key": GROUP_TAG, "Value": group.name}]}],
        }

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        from botocore.exceptions import ClientError

        result = Launch()
        try:
            answer = self.ec2.create_fleet(**self._request(group, len(nodes), minimum))
        except ClientError as exc:
            error = exc.response.get("Error", {})
            reason = f"{error.get('Code', 'Unknown')}: {error.get('Message', '')}".strip()
            result.failed = dict.fromkeys(nodes, reason)
            return result
        ids = [i for batch in answer.get("Instances", []) for i in batch.get("InstanceIds", [])]
        errors = answer.get("Errors", [])
        reason = (f"{errors[0].get('ErrorCode', INSUFFICIENT_CAPACITY)}: {errors[0].get('ErrorMessage', '')}"
                  if errors else f"{INSUFFICIENT_CAPACITY}: EC2 launched {len(ids)} of {len(nodes)}")
        if len(ids) < minimum:  # EC2 honours MinTargetCapacity; this holds the promise where it did not
            if ids:
                self.ec2.terminate_instances(InstanceIds=ids)
            result.failed = dict.fromkeys(nodes, reason)
            return result
        for node, instance_id in zip(nodes, ids, strict=False):
            self.ec2.create_tags(Resources=[instance_id], Tags=[{"Key": NODE_TAG, "Value": node},
                                                                {"Key": "Name", "Value": node}])
            result.instances[node] = Instance(instance_id, node, None, "pending")
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


PROVIDER = Ec2Provider  # what the programs make for this target (clusterforge.powersave.programs.provider_for)
