"""Network as the engine sees it: VPC and subnets by AZ id, endpoints, NAT opt-in, security group rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.aws.blueprints import example, write
from tests.aws.conftest import Recorder, Run, build_blueprint, build_example

INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
SG = "aws:ec2/securityGroup:SecurityGroup"
Stack = Callable[..., Run]

CLUSTER, LUSTRE, ENDPOINTS = "network-cluster-sg-id", "network-lustre-sg-id", "network-endpoints-sg-id"


def rules(rec: Recorder, typ: str, group: str) -> list[dict[str, Any]]:
    return [r.inputs for r in rec.of_type(typ) if r.inputs["securityGroupId"] == group]




def test_vpc_and_private_subnet_by_az_id(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    vpc = rec.one("aws:ec2/vpc:Vpc").inputs
    assert vpc["cidrBlock"] == "10.0.0.0/16" and vpc["enableDnsHostnames"] and vpc["enableDnsSupport"]
    [subnet] = rec.of_type("aws:ec2/subnet:Subnet")
    assert subnet.inputs["availabilityZoneId"] == "use1-az4" and "availabilityZone" not in subnet.inputs
    assert subnet.inputs["mapPublicIpOnLaunch"] is False and subnet.inputs["cidrBlock"] == "10.0.0.0/17"
    assert not rec.of_type("aws:ec2/natGateway:NatGateway")
    assert not rec.of_type("aws:ec2/internetGateway:InternetGateway")


def test_efa_group_allows_all_traffic_to_and_from_itself(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    self_in = [r for r in rules(rec, INGRESS, CLUSTER) if r.get("referencedSecurityGroupId") == CLUSTER]
    self_out = [r for r in rules(rec, EGRESS, CLUSTER) if r.get("referencedSecurityGroupId") == CLUSTER]
    for found in (self_in, self_out):
        assert len(found) == 1
        assert found[0]["ipProtocol"] == "-1" and "fromPort" not in found[0] and "toPort" not in found[0]


def test_lustre_ports_from_the_cluster_and_between_servers(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    lustre_in = {(r["referencedSecurityGroupId"], r["ipProtocol"], r["fromPort"], r["toPort"])
                 for r in rules(rec, INGRESS, LUSTRE)}
    assert lustre_in == {(CLUSTER, "tcp", 988, 988), (CLUSTER, "tcp", 1018, 1023),
                         (LUSTRE, "tcp", 988, 988), (LUSTRE, "tcp", 1018, 1023)}
    back = {(r["referencedSecurityGroupId"], r["fromPort"], r["toPort"]) for r in rules(rec, INGRESS, CLUSTER)
            if r.get("referencedSecurityGroupId") == LUSTRE}
    assert back == {(LUSTRE, 988, 988), (LUSTRE, 1018, 1023)}
    fsx = rec.one("aws:fsx/lustreFileSystem:LustreFileSystem").inputs
    assert fsx["securityGroupIds"] == [LUSTRE]


def test_no_ingress_from_anywhere(stack: Stack) -> None:
    rec = stack(build_example("aws-p5", nat_gateway=True)).recorder
    ingress = rec.of_type(INGRESS)
    assert len(ingress) == 8
    for rule in ingress:
        assert "cidrIpv4" not in rule.inputs and "cidrIpv6" not in rule.inputs and "prefixListId" not in rule.inputs
        assert rule.inputs["referencedSecurityGroupId"] in (CLUSTER, LUSTRE)
    assert all("ingress" not in g.inputs for g in rec.of_type(SG))  # no inline rules either
    endpoints_in = rules(rec, INGRESS, ENDPOINTS)
    assert [(r["fromPort"], r["toPort"], r["referencedSecurityGroupId"]) for r in endpoints_in] == [
        (443, 443, CLUSTER)]


def test_endpoints_for_s3_and_session_manager(stack: Stack) -> None:
    rec = stack(build_example("aws-p5")).recorder
    endpoints = {e.inputs["serviceName"]: e.inputs for e in rec.of_type("aws:ec2/vpcEndpoint:VpcEndpoint")}
    assert set(endpoints) == {f"com.amazonaws.us-east-1.{s}" for s in ("s3", "ssm", "ssmmessages", "ec2messages")}
    s3 = endpoints.pop("com.amazonaws.us-east-1.s3")
    assert s3["vpcEndpointType"] == "Gateway" and s3["routeTableIds"] == ["network-private-rt-id"]
    for interface in endpoints.values():
        assert interface["vpcEndpointType"] == "Interface" and interface["privateDnsEnabled"] is True
        assert interface["subnetIds"] == ["network-private-use1-az4-id"]
        assert interface["securityGroupIds"] == [ENDPOINTS]


def test_nat_gateway_is_opt_in(stack: Stack) -> None:
    rec = stack(build_example("aws-p5", nat_gateway=True)).recorder
    nat = rec.one("aws:ec2/natGateway:NatGateway").inputs
    assert nat["subnetId"] == "network-public-subnet-id"
    routes = {r.inputs["routeTableId"]: r.inputs for r in rec.of_type("aws:ec2/route:Route")}
    assert routes["network-private-rt-id"]["natGatewayId"] == "network-nat-id"
    assert routes["network-public-rt-id"]["gatewayId"] == "network-igw-id"
    public = rec.named("network-public-subnet").inputs
    assert public["mapPublicIpOnLaunch"] is False and public["cidrBlock"] == "10.0.128.0/24"


def test_a_subnet_per_az_the_pools_use(stack: Stack, tmp_path: Path) -> None:
    data = example("aws-p5en")
    data["aws"]["availability_zones"] = ["usw2-az2", "usw2-az3"]
    data["pools"][0]["availability_zone"] = "usw2-az2"
    data["pools"][1]["availability_zone"] = "usw2-az3"
    rec = stack(build_blueprint(write(tmp_path, data))).recorder
    subnets = {s.inputs["availabilityZoneId"]: s.inputs["cidrBlock"] for s in rec.of_type("aws:ec2/subnet:Subnet")}
    assert subnets == {"usw2-az2": "10.0.0.0/18", "usw2-az3": "10.0.64.0/18"}
    head = rec.named("compute-head-lt").inputs["networkInterfaces"][0]["subnetId"]
    gpu = rec.named("compute-gpu-lt").inputs["networkInterfaces"][0]["subnetId"]
    assert (gpu, head) == ("network-private-usw2-az2-id", "network-private-usw2-az3-id")
    fsx = rec.one("aws:fsx/lustreFileSystem:LustreFileSystem").inputs
    assert fsx["subnetIds"] == gpu  # the file system sits with the GPUs, not the controller
