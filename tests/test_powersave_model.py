"""Power saving in the blueprint: `pools[].max_count`, `pools[].scaling` and `slurm.power_save`, refused at load
with file and line when they do not fit together, and planned for the worst case (every node powered up)."""

from __future__ import annotations

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.model import Slurm
from clusterforge.model.slurm import POWER_UP_TIMEOUT_S, REBOOT_TIMEOUT_S, TREE_WIDTH_MAX
from clusterforge.plan import build_plan
from clusterforge.target_kernel import slurm_launches_nodes
from tests.located import assert_located
from tests.policies.builders import aws, feed, found, messages, onprem, rack

BASE = """\
apiVersion: clusterforge/v1
kind: Cluster
name: t
target: onprem
pools:
  - {name: ctl, hardware: cpu-1u, count: 1, role: controller}
  - {name: gpu, hardware: dgx-h100, count: 2, max_count: 40, partition: train}
slurm:
  partitions: [{name: train, pools: [gpu], default: true}]
  power_save: {suspend_time_s: 900}
"""


def test_the_defaults_suit_gpu_nodes() -> None:
    spec = Slurm().power_save
    assert (spec.suspend_time_s, spec.suspend_timeout_s, spec.resume_rate, spec.suspend_rate) == (600, 300, 0, 0)
    assert spec.resolved_tree_width() == TREE_WIDTH_MAX == 65_533  # nodes not in DNS: slurmctld talks to each
    assert spec.model_copy(update={"cloud_dns": True}).resolved_tree_width() is None  # SLURM's own default
    assert (spec.launch_batch_size, spec.insufficient_capacity_timeout_s) == (500, 600)


def test_one_resume_timeout_whose_default_follows_power_saving() -> None:
    recovery = Slurm().recovery
    assert (recovery.resume_timeout(False), recovery.resume_timeout(True)) == (REBOOT_TIMEOUT_S, POWER_UP_TIMEOUT_S)
    assert (REBOOT_TIMEOUT_S, POWER_UP_TIMEOUT_S) == (900, 1800)
    given = recovery.model_copy(update={"resume_timeout_s": 2400})
    assert (given.resume_timeout(False), given.resume_timeout(True)) == (2400, 2400)


def test_a_pool_with_max_count_is_power_saved_and_planned_for_its_ceiling() -> None:
    loaded = load_text(BASE, "bp.yaml")
    gpu = loaded.cluster.pool("gpu")
    assert (gpu.count, gpu.max_count, gpu.ceiling, gpu.power_saved, gpu.scaling) == (2, 40, 40, True,
                                                                                      "all-or-nothing")
    assert slurm_launches_nodes(loaded.cluster) and not loaded.cluster.pool("ctl").power_saved
    nodes = build_plan(loaded.cluster, loaded.catalog).pool_nodes("gpu")
    assert (nodes.count, nodes.hostlist, nodes.names()[-1]) == (40, "gpu-[0001-0040]", "gpu-0040")


def test_count_zero_and_a_wide_ceiling_name_every_node() -> None:
    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 0, "max_count": 12_500,
                       "partition": "train", "scaling": "best-effort"}])
    loaded = load_text(yaml.safe_dump(data), "bp.yaml")
    nodes = build_plan(loaded.cluster, loaded.catalog).pool_nodes("gpu")
    assert (nodes.count, nodes.hostlist) == (12_500, "gpu-[00001-12500]")
    assert loaded.cluster.pool("gpu").scaling == "best-effort"


def test_no_max_count_is_no_power_saving() -> None:
    loaded = load_text(BASE.replace(", max_count: 40", ""), "bp.yaml")
    assert not slurm_launches_nodes(loaded.cluster) and loaded.cluster.pool("gpu").ceiling == 2


# (old, new, the line's needle, path, message fragment)
INVALID = [
    ("count: 2, max_count: 40", "count: 2, max_count: 1", "max_count: 1", "pools[1].max_count",
     "max_count 1 is below count 2"),
    ("count: 2, max_count: 40", "count: 0", "count: 0", "pools[1].count", "count 0 needs a max_count"),
    ("count: 1, role: controller}", "count: 1, max_count: 2, role: controller}", "role: controller",
     "pools[0].max_count", "only compute nodes are powered up and down"),
    ("max_count: 40,", "max_count: 40, scaling: some,", "scaling: some", "pools[1].scaling", "'all-or-nothing'"),
    ("{suspend_time_s: 900}", "{suspend_time_s: 900, exclude_partitions: [trian]}", "exclude_partitions",
     "slurm.power_save.exclude_partitions[0]", "unknown partition 'trian' (did you mean train?)"),
    ("{suspend_time_s: 900}", "{suspend_time_s: 5}", "suspend_time_s", "slurm.power_save.suspend_time_s",
     "greater than or equal to 30"),
    ("{suspend_time_s: 900}", "{tree_width: 70000}", "tree_width", "slurm.power_save.tree_width",
     "65533"),
    ("{suspend_time_s: 900}", "{suspend_time_s: 900}\n  settings: {TreeWidth: 100}", "TreeWidth",
     "slurm.settings.TreeWidth", "TreeWidth is set by slurm.power_save.tree_width"),
    ("{suspend_time_s: 900}", "{suspend_time_s: 900}\n  settings: {suspendprogram: /bin/true}", "suspendprogram",
     "slurm.settings.suspendprogram", "SuspendProgram is set by pools[].max_count"),
    ("{suspend_time_s: 900}", "{suspend_time_s: 900}\n  settings: {SuspendExcNodes: gpu-0001}", "SuspendExcNodes",
     "slurm.settings.SuspendExcNodes", "SuspendExcNodes is set by pools[].count"),
]


@pytest.mark.parametrize(("old", "new", "needle", "path", "fragment"), INVALID, ids=[c[3] for c in INVALID])
def test_invalid_power_saving_is_located(old: str, new: str, needle: str, path: str, fragment: str) -> None:
    assert_located(BASE, old, new, needle, path, fragment)


# 415 V 3φ 40 A: 27.6 kVA × 0.8 = 23.0 kW usable per side, room for two DGX H100 (10.2 kW each), not four
SMALL_FEEDS = [feed("{}-a", "A", amps=40), feed("{}-b", "B", amps=40)]


def _racks(count: int, per_rack: int) -> list[dict]:
    return [rack(f"a{i:02d}", count=per_rack, feeds=[{**f, "name": f["name"].format(f"a{i:02d}")}
                                                     for f in SMALL_FEEDS])
            for i in range(1, count + 1)]


def _gpu(**fields: object) -> list[dict]:
    return [{"name": "gpu", "hardware": "dgx-h100", "partition": "train", **fields}]


def test_the_feeds_must_carry_every_node_that_may_be_powered_up() -> None:
    """Racks, feeds and cooling are planned for max_count: the breaker trips at the worst case, not the usual."""
    always_on = onprem(racks=_racks(1, 2), pools=_gpu(count=2))
    assert "PWR-002" not in found(always_on)
    powered = onprem(racks=_racks(10, 4), pools=_gpu(count=2, max_count=40))
    assert "PWR-002" in found(powered)  # four DGX H100 (40.8 kW) on a 23.0 kW side, in every rack


def test_placements_add_up_to_max_count() -> None:
    data = onprem(racks=_racks(1, 2), pools=_gpu(count=2, max_count=40))
    with pytest.raises(ClusterforgeError) as error:
        load_text(yaml.safe_dump(data, sort_keys=False), "bp.yaml")
    assert "has 40 nodes (max_count) but its rack placements add up to 2" in error.value.problems[0].render()


def test_the_site_budget_counts_every_node_that_may_be_powered_up() -> None:
    """PWR-007: 4 DGX H100 (40.8 kW) under a 30 kW contract fail although only 2 (20.4 kW) are always on."""
    always_on = onprem(racks=_racks(1, 2), pools=_gpu(count=2), contracted_it_kw=30)
    assert "PWR-007" not in found(always_on)
    powered = onprem(racks=_racks(2, 2), pools=_gpu(count=2, max_count=4), contracted_it_kw=30)
    assert "PWR-007" in found(powered)


def test_the_planner_places_max_count() -> None:
    """Unplaced pools are packed for max_count: racks whose feeds hold two servers each leave 38 of 40 standing
    nowhere (RCK-008)."""
    data = onprem(racks=_racks(1, 0), pools=_gpu(count=2, max_count=40))
    assert "RCK-008" in found(data)
    assert messages(data, "RCK-008")[0].startswith("38 node(s) of pool gpu fit in no rack (2 of 40 placed)")
    assert "RCK-008" not in found(onprem(racks=_racks(1, 0), pools=_gpu(count=2)))


def test_the_json_schema_takes_the_new_fields() -> None:
    from tests.test_schema_by_kind import errors

    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 0, "max_count": 12_500,
                       "scaling": "best-effort", "partition": "train"}])
    data["slurm"]["power_save"] = {"suspend_time_s": 900, "resume_rate": 0, "tree_width": 65_533, "cloud_dns": False,
                                   "exclude_partitions": ["train"], "launch_batch_size": 1000}
    data["slurm"]["recovery"] = {"resume_timeout_s": 2400}
    assert errors(data) == []
    data["pools"][0]["max_count"] = 0
    data["slurm"]["power_save"]["suspend_rate"] = -1
    found = errors(data)
    assert "pools.0.max_count: 0 is less than the minimum of 1" in found
    assert "slurm.power_save.suspend_rate: -1 is less than the minimum of 0" in found


def test_a_power_saved_pool_costs_its_ceiling_all_month() -> None:
    """The budget holds what SLURM may power up: 12,500 nodes beyond 16 always on are priced, not 16."""
    from clusterforge.cost.cloud import instance_lines
    from clusterforge.cost.estimate import gpu_count
    from clusterforge.target_kernel import load_catalog

    data = aws(pools=[{"name": "gpu", "hardware": "p5.48xlarge", "count": 16, "max_count": 12_500,
                       "partition": "train"}])
    cluster = load_text(yaml.safe_dump(data, sort_keys=False), "bp.yaml").cluster
    catalog = load_catalog()
    [line] = [line for line in instance_lines(cluster, catalog) if "pool gpu" in line.item]
    assert line.quantity == 12_500 * 730 and "all 12,500 powered up (max_count)" in line.item
    assert gpu_count(cluster, catalog) == 12_500 * 8
