"""The day-two selector of a fabric's own hosts ({fabric_of: KIND}, a role's declaration such as the efa role's
installer pin): the hosts whose inventory gives the fabric's interfaces, else every compute node where the fabric
is the cluster's, and none where neither is said. No fabric is named by day-two code: the kind is the role's."""

from __future__ import annotations

from clusterforge.day2.rendered import Host, Rendered
from clusterforge.day2.scope import Scope
from clusterforge.render.change_classes import COMPUTE_GROUP, CONTROLLER_GROUP, FabricHosts
from clusterforge.render.manifest import _effect


def render(hosts: dict[str, dict], group_vars: dict) -> Rendered:
    return Rendered(files={}, group_vars=group_vars, hosts={
        name: Host((CONTROLLER_GROUP,) if name.startswith("ctl") else (COMPUTE_GROUP,), facts)
        for name, facts in hosts.items()})


def test_a_hybrids_fabric_hosts_are_those_with_its_interfaces() -> None:
    new = render({"ctl-0001": {}, "gpu-0001": {}, "burst-0001": {"efa_interfaces": 32},
                  "burst-0002": {"efa_interfaces": 32}}, {"fabric_kind": "infiniband", "efa_enabled": False})
    assert Scope(new).hosts(FabricHosts("efa")) == ("burst-0001", "burst-0002")


def test_a_cluster_on_the_fabric_without_per_host_counts_means_every_compute_node() -> None:
    new = render({"ctl-0001": {}, "gpu-0001": {}, "gpu-0002": {}}, {"fabric_kind": "efa", "efa_enabled": True})
    assert Scope(new).hosts(FabricHosts("efa")) == ("gpu-0001", "gpu-0002")
    assert Scope(new).hosts(FabricHosts("other")) == ()  # a fabric the cluster is not on has no hosts


def test_the_manifest_reads_and_writes_the_selector_as_the_role_declares_it() -> None:
    effect = _effect({"action": "reboot", "hosts": {"fabric_of": "efa"}, "why": "a new kernel module"}, "e", "f")
    assert effect.hosts == FabricHosts("efa")
