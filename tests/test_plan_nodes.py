"""Node names, the SLURM model (NodeName sets, GRES, partitions, controller) and AWS EFA per pool."""

from __future__ import annotations

import pytest

from clusterforge.plan.nodes import name_width
from clusterforge.plan.slurm import gres_type
from tests.plan_builders import plan_of
from tests.policies.builders import aws, design


@pytest.mark.parametrize(("count", "first", "last", "hostlist"), [
    (1, "gpu-0001", "gpu-0001", "gpu-0001"),
    (16, "gpu-0001", "gpu-0016", "gpu-[0001-0016]"),
    (9999, "gpu-0001", "gpu-9999", "gpu-[0001-9999]"),
    (12_500, "gpu-00001", "gpu-12500", "gpu-[00001-12500]"),  # the width grows with the count
])
def test_names_are_zero_padded_and_stable(count: int, first: str, last: str, hostlist: str) -> None:
    pool = plan_of(design([{"name": "gpu", "hardware": "dgx-h100", "count": count, "partition": "train"}],
                          fabric=None)).pool_nodes("gpu")
    assert (pool.name(1), pool.name(count), pool.hostlist) == (first, last, hostlist)
    assert name_width(count) == len(last) - len("gpu-")


def pools(*specs: tuple[str, str, int, str]) -> list[dict]:
    return [{"name": n, "hardware": h, "count": c, "role": r, **({"partition": "train"} if r == "compute" else {})}
            for n, h, c, r in specs]


def test_gres_per_node_from_the_catalog() -> None:
    plan = plan_of(design(pools(("gpu", "dgx-b200", 4, "compute"), ("cpu", "cpu-1u", 2, "compute"))))
    assert plan.slurm is not None
    gres = {n.pool: n.gres for n in plan.slurm.nodes}
    assert gres == {"gpu": "gpu:b200:8", "cpu": None}
    assert gres_type("H100-SXM5") == "h100" and gres_type("B200-GB200") == "b200"


def test_partitions_with_hostlists_and_one_default() -> None:
    data = design(pools(("gpu", "dgx-h100", 16, "compute"), ("big", "dgx-b200", 4, "compute"),
                        ("login", "cpu-1u", 2, "login")))
    data["slurm"] = {"partitions": [{"name": "train", "pools": ["gpu", "big"], "default": True},
                                    {"name": "b200", "pools": ["big"], "max_time": "2-00:00:00"}]}
    plan = plan_of(data)
    assert plan.slurm is not None
    parts = {p.name: (p.nodes, p.default, p.max_time) for p in plan.slurm.partitions}
    assert parts == {"train": ("gpu-[0001-0016],big-[0001-0004]", True, "UNLIMITED"),
                     "b200": ("big-[0001-0004]", False, "2-00:00:00")}
    assert [n.pool for n in plan.slurm.nodes] == ["gpu", "big"]  # login nodes run no slurmd


def test_partitions_from_pool_fields_when_none_are_listed() -> None:
    data = design(pools(("gpu", "dgx-h100", 2, "compute")))
    data["pools"].append({"name": "dev", "hardware": "dgx-h100", "count": 1, "partition": "debug"})
    del data["slurm"]
    plan = plan_of(data)
    assert plan.slurm is not None
    assert [(p.name, p.nodes, p.default) for p in plan.slurm.partitions] == [
        ("train", "gpu-[0001-0002]", True), ("debug", "dev-0001", False)]


@pytest.mark.parametrize(("specs", "controller", "reason"), [
    ((("gpu", "dgx-h100", 2, "compute"), ("ctl", "cpu-1u", 2, "controller"), ("login", "cpu-1u", 1, "login")),
     "ctl-0001", "controller pool"),
    ((("gpu", "dgx-h100", 2, "compute"), ("login", "cpu-1u", 2, "login")), "login-0001", "login"),
    ((("gpu", "dgx-h100", 2, "compute"),), "gpu-0001", "first compute node"),
])
def test_controller_choice(specs: tuple[tuple[str, str, int, str], ...], controller: str, reason: str) -> None:
    slurm = plan_of(design(pools(*specs))).slurm
    assert slurm is not None and slurm.controller == controller and reason in slurm.controller_reason


@pytest.mark.parametrize(("hardware", "asked", "interfaces"), [
    ("p5.48xlarge", None, 32), ("p5.48xlarge", 16, 16), ("p5en.48xlarge", None, 16), ("p6-b200.48xlarge", None, 8)])
def test_efa_interfaces_per_node(hardware: str, asked: int | None, interfaces: int) -> None:
    data = aws()
    data["pools"][0].update({"hardware": hardware, **({"efa_interfaces": asked} if asked else {})})
    facts = dict(plan_of(data).pool_nodes("gpu").target_vars)
    assert facts["efa_interfaces"] == interfaces
    assert facts["placement_group"] == "t-gpu" and facts["availability_zone"] == "use1-az4"


def test_service_instances_get_no_placement_group() -> None:
    data = aws()
    data["pools"].append({"name": "ctl", "hardware": "m7i.4xlarge", "count": 1, "role": "controller"})
    plan = plan_of(data)
    ctl = dict(plan.pool_nodes("ctl").target_vars)
    assert (ctl["efa_interfaces"], ctl["placement_group"]) == (0, None)
    assert plan.fabric is None and plan.topology is None and plan.racks == ()
    assert plan.slurm is not None and plan.slurm.controller == "ctl-0001"


def test_pool_placement_none_opts_out_of_the_placement_group() -> None:
    data = aws()
    data["pools"][0]["placement"] = "none"
    assert dict(plan_of(data).pool_nodes("gpu").target_vars)["placement_group"] is None
