"""Batches of a rolling change and the record that lets an interrupted update resume (day2/rolling.py)."""

from __future__ import annotations

from pathlib import Path

from clusterforge.day2.rolling import Batch, Progress, digest, partitions, plan

SLURM_CONF = """\
NodeName=gpu-[0001-0008] CPUs=2 Gres=gpu:8
NodeName=cpu-[0001-0002] CPUs=2
PartitionName=train Nodes=gpu-[0001-0008] Default=YES
PartitionName=all Nodes=ALL
PartitionName=small Nodes=gpu-[0001-0002]
"""
GPUS = [f"gpu-000{i}" for i in range(1, 9)]


def test_partitions_are_read_with_hostlists_and_all() -> None:
    parts = partitions(SLURM_CONF)
    assert parts["train"] == set(GPUS)
    assert parts["all"] == {*GPUS, "cpu-0001", "cpu-0002"}
    assert parts["small"] == {"gpu-0001", "gpu-0002"}


def test_racks_are_batches_capped_at_a_fraction_of_the_partition() -> None:
    host_vars = {h: {"rack": "R01" if i < 4 else "R02"} for i, h in enumerate(GPUS)}
    parts = {"train": set(GPUS)}
    batches = plan(GPUS, host_vars, parts, busy=[], unit="rack", max_fraction=0.25)
    assert [b.hosts for b in batches] == [tuple(GPUS[0:2]), tuple(GPUS[2:4]), tuple(GPUS[4:6]), tuple(GPUS[6:8])]
    assert batches[0].label == "rack R01 (1/2)"
    whole = plan(GPUS, host_vars, parts, busy=[], unit="rack", max_fraction=0.5)
    assert [b.label for b in whole] == ["rack R01", "rack R02"]


def test_the_smallest_partition_a_host_is_in_sets_the_cap_and_one_node_is_the_least() -> None:
    host_vars = {h: {"rack": "R01"} for h in GPUS}
    batches = plan(GPUS[:2], host_vars, partitions(SLURM_CONF), busy=[], unit="rack", max_fraction=0.25)
    assert [b.hosts for b in batches] == [("gpu-0001",), ("gpu-0002",)]  # 'small' has two nodes: one at a time


def test_an_nvlink_domain_is_never_split_even_past_the_cap() -> None:
    host_vars = {h: {"rack": "R01", "nvlink_domain": "nvl-1"} for h in GPUS}
    batches = plan(GPUS, host_vars, {"train": set(GPUS)}, busy=[], unit="node", max_fraction=0.1)
    assert batches == [Batch(tuple(GPUS), "NVLink domain nvl-1")]


def test_idle_batches_go_first_so_a_job_is_requeued_once() -> None:
    batches = plan(GPUS[:4], {}, {"train": set(GPUS)}, busy=["gpu-0001", "gpu-0002"], unit="node", max_fraction=0.1)
    assert [b.hosts[0] for b in batches] == ["gpu-0003", "gpu-0004", "gpu-0001", "gpu-0002"]
    assert str(batches[0]) == "node gpu-0003: gpu-0003"


def test_progress_survives_a_restart_and_belongs_to_one_change(tmp_path: Path) -> None:
    key = digest({"a": "1"}, {"a": "2"})
    assert key != digest({"a": "1"}, {"a": "3"}) and key == digest({"a": "1"}, {"a": "2"})
    record = Progress.load(tmp_path / "p.json", key)
    assert not record.resumed
    record.step_done("in place")
    record.hosts_done(["gpu-0001"])
    record.hosts_failed({"gpu-0002": "health check: xid 79"})
    again = Progress.load(tmp_path / "p.json", key)
    assert again.resumed and again.steps == ["in place"] and again.done == ["gpu-0001"]
    assert again.failed == {"gpu-0002": "health check: xid 79"}
    assert not Progress.load(tmp_path / "p.json", "another change").resumed
    (tmp_path / "p.json").write_text("{not json")
    assert not Progress.load(tmp_path / "p.json", key).resumed
