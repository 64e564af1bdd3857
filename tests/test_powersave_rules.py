"""The fleet rules of target aws (FLT-001 to FLT-003): launch time at the account's RunInstances rate, Capacity
Block sizes and the EC2 Fleet request size, each with a failing and a passing blueprint."""

from __future__ import annotations

import pytest
import yaml

from clusterforge.targets.aws.rules.fleet import launch_seconds
from tests.conftest import ROOT
from tests.policies.builders import aws, config, evaluate_data, found, messages


def fleet(count: int, max_count: int | None = None, capacity: str = "on-demand", **power_save: object) -> dict:
    pool: dict = {"name": "gpu", "hardware": "p5.48xlarge", "count": count, "partition": "train"}
    if max_count is not None:
        pool["max_count"] = max_count
    data = aws(pools=[pool])
    data["aws"]["capacity"] = ({"type": "on-demand"} if capacity == "on-demand"
                               else {"type": capacity, "reservation_id": "cr-0123456789abcdef0"})
    if power_save:
        data["slurm"]["power_save"] = power_save
    return data


def test_the_launch_arithmetic() -> None:
    assert launch_seconds(12_500, 1000, 2) == 5750  # ~96 min (reference/scale.md)
    assert launch_seconds(12_500, 3000, 6) == 9500 / 6  # after a 3x increase: ~26 min
    assert launch_seconds(999, 1000, 2) == 0


def test_12500_nodes_warn_with_the_arithmetic_and_the_resume_timeout() -> None:
    data = fleet(0, 12_500)
    [message] = messages(data, "FLT-001")
    assert message.startswith("12,500 instances take (N − 1,000) / 2/s = 5,750 s (~96 min) to launch"), message
    assert "within ResumeTimeout (1,800 s) only 4,600 can launch, and SLURM marks the rest DOWN" in message
    [finding] = [f for f in evaluate_data(data).findings if f.id == "FLT-001"]
    text = yaml.safe_dump(data, sort_keys=False)
    assert (finding.level, finding.path, finding.line) == (
        "warning", "pools[0].max_count", text.splitlines().index("  max_count: 12500") + 1)


def test_raised_limits_in_the_policy_config_shorten_the_launch() -> None:
    raised = config(**{"FLT-001": {"bucket": 3000, "refill_per_s": 6}})
    [finding] = [f for f in evaluate_data(fleet(0, 12_500), raised).findings if f.id == "FLT-001"]
    assert "= 1,583 s (~26 min)" in finding.message and "ResumeTimeout" not in finding.message
    quick = config(**{"FLT-001": {"bucket": 3000, "refill_per_s": 6, "max_wait_s": 1800}})
    assert "FLT-001" not in [f.id for f in evaluate_data(fleet(0, 12_500), quick).findings]


def test_what_the_bucket_holds_launches_at_once() -> None:
    assert "FLT-001" not in found(fleet(1000), level="warning")
    assert "FLT-001" in found(fleet(1001), level="warning")
    assert "FLT-001" in found(fleet(2, 1001), level="warning")  # max_count counts


def test_a_capacity_block_holds_64_instances() -> None:
    assert "FLT-002" not in found(fleet(64, capacity="capacity-block"))
    assert "FLT-002" in found(fleet(65, capacity="capacity-block"))
    assert "FLT-002" in found(fleet(8, 80, capacity="capacity-block"))  # SLURM may power up all 80
    assert "FLT-002" not in found(fleet(65, capacity="odcr"))
    [message] = messages(fleet(65, capacity="capacity-block"), "FLT-002")
    assert message == "65 instances launch into Capacity Block cr-0123456789abcdef0, which holds at most 64"


def test_at_most_256_instances_across_capacity_blocks() -> None:
    wide = config(**{"FLT-002": {"per_block": 1000}})
    over = [f for f in evaluate_data(fleet(257, capacity="capacity-block"), wide).findings if f.id == "FLT-002"]
    assert [f.path for f in over] == ["aws.capacity"] and "at most 256 across" in over[0].message
    assert not [f for f in evaluate_data(fleet(256, capacity="capacity-block"), wide).findings if f.id == "FLT-002"]


def test_a_fleet_request_above_10000_is_refused() -> None:
    assert "FLT-003" in found(fleet(0, 100, launch_batch_size=10_001))
    assert "FLT-003" not in found(fleet(0, 100, launch_batch_size=10_000))
    # static AWS nodes are launched by the same program, in the same batches; on a pinned AMI the stack runs them
    assert "FLT-003" in found(fleet(100, launch_batch_size=20_000))
    pinned = fleet(100, launch_batch_size=20_000)
    pinned["aws"]["ami"] = "ami-0123456789abcdef0"
    assert "FLT-003" not in found(pinned)


def test_a_power_saved_pool_on_a_pinned_ami_is_refused() -> None:
    """Its nodes would wait for a push that no power-up runs (FLT-004); without max_count the stack runs them."""
    data = fleet(2, 8)
    assert "FLT-004" not in found(data)
    data["aws"]["ami"] = "ami-0123456789abcdef0"
    [message] = messages(data, "FLT-004")
    assert message == ("pool gpu is powered up by slurmctld, but the blueprint pins aws.ami ami-0123456789abcdef0, "
                       "whose nodes join only when the roles are pushed")
    static = fleet(2)
    static["aws"]["ami"] = "ami-0123456789abcdef0"
    assert "FLT-004" not in found(static)
    [message] = messages(fleet(0, 100, launch_batch_size=20_000), "FLT-003")
    assert message == "launch_batch_size 20,000 is above EC2 Fleet's target capacity of 10,000 per fleet"


def test_power_saving_needs_a_target_that_can_start_nodes() -> None:
    """SLM-008: on-prem nodes with max_count and no BMC would be State=CLOUD with no program that can start them;
    the hint names the BMC. With `bmc: redfish` the Redfish provider powers them, and the pool passes."""
    from tests.policies.builders import onprem, rack

    pool = {"name": "gpu", "hardware": "dgx-h100", "count": 2, "max_count": 4, "partition": "train"}
    bare = onprem(pools=[pool], racks=[rack("a01", count=0)])
    [finding] = [f for f in evaluate_data(bare).findings if f.id == "SLM-008"]
    assert finding.message.startswith("pool gpu has max_count 4 on target onprem, but nothing can power its "
                                      "servers on and off: it has no BMC"), finding.message
    assert "bmc: redfish" in (finding.hint or "") and "BMC document" in (finding.hint or ""), finding.hint
    assert "SLM-008" not in found(onprem(pools=[{**pool, "bmc": "redfish"}], racks=[rack("a01", count=0)]))
    assert "SLM-008" not in found(onprem(pools=[{**pool, "bmc": "ipmi"}], racks=[rack("a01", count=0)]))
    assert "SLM-008" not in found(fleet(0, 64))
    assert "SLM-008" not in found(onprem(pools=[{"name": "gpu", "hardware": "dgx-h100", "count": 2,
                                                 "partition": "train"}]))


def test_a_target_without_a_provider_still_names_the_ones_that_have_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """SLM-008 for a target that powers nothing at all (no `power.py`) lists the targets that do."""
    from clusterforge.policies.domains import bursting
    from clusterforge.target_kernel import Target, node_power
    from tests.policies.builders import onprem, rack

    bare = onprem(pools=[{"name": "gpu", "hardware": "dgx-h100", "count": 2, "max_count": 4, "partition": "train"}],
                  racks=[rack("a01", count=0)])

    def without_onprem(target: Target) -> object:
        return None if target.name == "onprem" else node_power(target)

    monkeypatch.setattr(bursting, "node_power", without_onprem)
    [message] = messages(bare, "SLM-008")
    wanted = "pool gpu has max_count 4 on target onprem, but clusterforge powers nodes up and down only on aws, lab"
    assert message.startswith(wanted), message


def test_every_target_that_powers_nodes_has_a_provider_in_its_folder() -> None:
    """A target's `power.py` (its NodePower's provider) lets a pool have max_count (SLM-008) and render write the
    power-save file; the resume program makes the `PROVIDER` of the target's own `powersave.py`, which must be
    that class and be shipped to controllers (clusterforge.powersave.payload), or every resume would fail with
    'not available here'."""
    import importlib

    from clusterforge.powersave.config import PowerSaveConfig
    from clusterforge.powersave.payload import controller_modules
    from clusterforge.target_kernel import node_power, registered

    powered = {t.name: power.provider for t in registered().values() if (power := node_power(t)) is not None}
    assert set(powered) == {"aws", "lab", "onprem"}
    for name, provider in powered.items():
        assert provider is not None
        assert f"clusterforge/targets/{name}/powersave.py" in controller_modules(ROOT)
        PowerSaveConfig(cluster="c1", provider=name, groups=())  # the file's pattern takes its name
        assert importlib.import_module(f"clusterforge.targets.{name}.powersave").PROVIDER is provider
