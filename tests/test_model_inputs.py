"""Untrusted input: strings that reach config files take their consumer's form, numbers are finite, work is bounded."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError
from clusterforge.policies.config_file import load_policy_config
from clusterforge.policies.discovery import load_rules
from clusterforge.policies.waivers import load_waivers
from clusterforge.target_kernel import load_catalog
from tests.conftest import EXAMPLES
from tests.hostile.cases_model import SITE_CATALOG

REGISTERED = load_rules()  # the rules whose settings and findings are checked

ONPREM = yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
AWS = yaml.safe_load((EXAMPLES / "aws-p5.yaml").read_text())


def _set(data: dict, path: tuple[Any, ...], value: Any) -> dict:
    out = yaml.safe_load(yaml.safe_dump(data))
    node = out
    for part in path[:-1]:
        node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
    node[path[-1]] = value
    return out


def _problems(data: dict) -> list[str]:
    with pytest.raises(ClusterforgeError) as exc:
        load_text(yaml.safe_dump(data, width=10_000), "bp.yaml")
    return [p.render() for p in exc.value.problems]


LUSTRE = ("storage", "lustre")
FSX = ("storage", "lustre")
PARTITION = ("slurm", "partitions", 0)

# (base, path, value accepted)
GOOD = [
    *[(ONPREM, (*PARTITION, "max_time"), t) for t in
      ["UNLIMITED", "INFINITE", "60", "30:00", "12:00:00", "2-12", "2-12:30", "7-00:00:00"]],
    *[(ONPREM, (*LUSTRE, "mgs_nid"), n) for n in
      ["10.0.0.10@o2ib", "192.168.1.2@tcp0", "10.0.0.10@o2ib1,192.168.1.10@tcp:10.0.0.11@o2ib1,192.168.1.11@tcp",
       "mgs1@tcp"]],
    *[(ONPREM, (*LUSTRE, "mount_options"), o) for o in
      ["defaults,_netdev,flock", "noatime,x-systemd.automount,x-systemd.requires=lnet.service", "ro"]],
    *[(ONPREM, (*LUSTRE, "mount"), m) for m in ["/lustre", "/mnt/scratch-1", "/gpfs/fs_2.a"]],
    *[(ONPREM, ("software", k), v) for k, v in
      [("nvidia_driver", "570.133.20"), ("cuda", "12.8"), ("nccl", "2.26.2-1+cuda12.8"), ("slurm", "24.11.1")]],
    (ONPREM, ("pools", 0, "gres"), "gpu:h100:8"),
    (AWS, ("software", "efa_installer"), "1.42.0"),
    (AWS, ("aws", "data_bucket"), "team-datasets"),
    (AWS, ("aws", "data_bucket"), "s3://team-datasets/imagenet/2024"),
    (AWS, ("pools", 0, "availability_zone"), "use1-az4"),
    (AWS, ("aws", "security", "ingress"), [{"cidr": "10.20.0.0/16", "from_port": 22, "to_port": 22,
                                            "description": "SSH from the VPN (ticket #42) [ops]: a+b=c; {x}!$*"}]),
]

# (base, path, bad value, what the message says)
BAD = [
    (ONPREM, (*PARTITION, "max_time"), "1-00:00:00\nSlurmctldHost=evil", "is not a SLURM time limit"),
    (ONPREM, (*PARTITION, "max_time"), "1 day", "e.g. 2-00:00:00"),
    (ONPREM, (*LUSTRE, "mgs_nid"), "10.0.0.10@o2ib\nlustre_client_fsname: x", "is not an LNet NID"),
    (ONPREM, (*LUSTRE, "mgs_nid"), "10.0.0.10", "is not an LNet NID"),
    (ONPREM, (*LUSTRE, "mount_options"), "defaults\nx: {{ lookup('pipe','id') }}", "is not mount options"),
    (ONPREM, (*LUSTRE, "mount_options"), "defaults, flock", "is not mount options"),
    (ONPREM, (*LUSTRE, "mount"), "/lustre/../etc", "is not an absolute path"),
    (ONPREM, (*LUSTRE, "mount"), "lustre", "is not an absolute path"),
    (ONPREM, (*LUSTRE, "mount"), "/", "is not an absolute path"),
    (ONPREM, ("software", "nccl"), "2.26.2 && curl evil", "is not a version"),
    (ONPREM, ("pools", 0, "gres"), "gpu:8\nPrologSlurmctld=/tmp/x", "is not SLURM GRES"),
    (ONPREM, ("pools", 0, "hardware"), "dgx h100", "is not a catalog key"),
    (AWS, ("pools", 0, "availability_zone"), "use1-az4\nx", "is not an availability zone id"),
    (AWS, ("aws", "data_bucket"), "Bad_Bucket", "is not an S3 bucket name"),
    (AWS, ("aws", "data_bucket"), "s3://ok-bucket/a b", "is not an S3 bucket name"),
    (AWS, (*FSX, "import_path"), "team-datasets", "is not an s3://bucket"),
    (AWS, (*FSX, "mount"), "/fsx\n", "is not an absolute path"),
    (AWS, ("aws", "security", "ingress"), [{"cidr": "10.20.0.0/16", "from_port": 22, "to_port": 22,
                                            "description": "VPN\nx"}], "is not a security group rule description"),
    (AWS, ("aws", "security", "node_policies"), ["arn:aws:iam::aws:policy/x y"], "is not an IAM policy ARN"),
]


@pytest.mark.parametrize(("base", "path", "value"), GOOD, ids=lambda v: str(v)[:40] if isinstance(v, str) else None)
def test_real_values_are_accepted(base: dict, path: tuple[Any, ...], value: Any) -> None:
    load_text(yaml.safe_dump(_set(base, path, value), width=10_000))


@pytest.mark.parametrize(("base", "path", "value", "says"), BAD, ids=[c[3][7:30] + str(i) for i, c in enumerate(BAD)])
def test_values_a_consumer_would_misread_are_refused(base: dict, path: tuple[Any, ...], value: Any, says: str) -> None:
    rendered = _problems(_set(base, path, value))
    assert any(says in r for r in rendered), rendered
    assert all("\n" not in r and len(r) < 400 for r in rendered), rendered


def test_a_wrong_type_is_not_echoed_whole() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "A" * 5000
    rendered = _problems(_set(ONPREM, ("site",), key))
    assert rendered and all(len(r) < 200 and "\n" not in r and "BEGIN" not in r for r in rendered), rendered
    assert any("expected a mapping, got a text of 5,036 characters on 2 lines" in r for r in rendered), rendered
    rendered = _problems(_set(ONPREM, ("site",), ["x" * 5000] * 3))
    assert any("expected a mapping, got a list of 3 items" in r for r in rendered), rendered


def test_a_hostile_key_is_shown_short() -> None:
    data = _set(ONPREM, ("x" * 5000 + "\n",), 1)
    rendered = _problems(data)
    assert rendered and all(len(r) < 400 and "\n" not in r for r in rendered), rendered


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
@pytest.mark.parametrize("path", [("site", "rows", 0, "racks", 0, "max_weight_kg"), ("site", "max_inlet_c"),
                                  ("site", "pue")])
def test_blueprint_numbers_are_finite(path: tuple[Any, ...], value: float) -> None:
    rendered = _problems(_set(ONPREM, path, value))
    assert any("expected a finite number" in r for r in rendered), rendered


SITE_SERVER = SITE_CATALOG  # one site server, shared with the hostile cases


@pytest.mark.parametrize(("old", "new", "says"), [
    ("max_inlet_c: 35", "max_inlet_c: .nan", "expected a finite number"),
    ("max_power_kw: 10.2", "max_power_kw: .inf", "expected a finite number"),
    ("model: H100-SXM5", 'model: "H100\\nPrologSlurmctld=/tmp/x"', "is not a GPU model"),
    ("site-gpu:", '"site gpu\\nx":', "key 'site gpu\\nx' is not a catalog key"),
    ("description: a site server", 'description: "a\\nb"', "is not one line of text"),
])
def test_a_site_catalog_is_untrusted_too(tmp_path: Path, old: str, new: str, says: str) -> None:
    assert old in SITE_SERVER
    path = tmp_path / "site.yaml"
    path.write_text(SITE_SERVER.replace(old, new))
    with pytest.raises(ClusterforgeError) as exc:
        load_catalog([path])
    rendered = [p.render() for p in exc.value.problems]
    assert any(says in r for r in rendered), rendered


def test_the_site_catalog_base_is_valid(tmp_path: Path) -> None:
    path = tmp_path / "site.yaml"
    path.write_text(SITE_SERVER)
    assert "site-gpu" in load_catalog([path])


@pytest.mark.parametrize(("text", "says"), [
    ("electrical: {derate: .nan}\n", "expected a finite number"),
    ("cooling: {air_kw: .inf}\n", "expected a finite number"),
    ("rules:\n  CLG-001: {warn_fraction: .nan}\n", "expected a finite number"),
])
def test_policy_config_numbers_are_finite(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(ClusterforgeError) as exc:
        load_policy_config(path)
    assert any(says in p.render() for p in exc.value.problems), [p.render() for p in exc.value.problems]


WAIVER = {"rule": "PWR-002", "cluster": "t", "target": "site.rows[0].racks[*]",
          "reason": "temporary load test this week",
          "expires": "2999-01-01", "approver": "platform"}


@pytest.mark.parametrize(("key", "value", "says"), [
    ("reason", "long enough reason\n::error::forged annotation", "is not one line of text"),
    ("approver", "ops\nx", "is not one line of text"),
    ("target", "site.rows[0]\n", "is not a finding path"),
    ("rule", "PWR-002\n", "is not a rule id"),
])
def test_waiver_values_are_one_line(tmp_path: Path, key: str, value: str, says: str) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(yaml.safe_dump({"waivers": [{**WAIVER, key: value}]}))
    with pytest.raises(ClusterforgeError) as exc:
        load_waivers(path)
    assert any(says in p.render() for p in exc.value.problems), [p.render() for p in exc.value.problems]
    path.write_text(yaml.safe_dump({"waivers": [WAIVER]}))
    assert load_waivers(path)


def _with_site(rows: list[dict]) -> str:
    return yaml.safe_dump({**ONPREM, "site": {**ONPREM["site"], "rows": rows}}, width=10_000)


def test_row_and_rack_groups_are_counted_before_they_are_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _with_site([{"name": "r[0-999]", "racks": [{"name": "{row}-k[0-999]"}]}])
    start = time.monotonic()
    with pytest.raises(ClusterforgeError) as exc:
        load_text(text, "bp.yaml")
    assert time.monotonic() - start < 2
    rendered = exc.value.problems[0].render()
    assert "1,000,000 racks" in rendered and "CLUSTERFORGE_MAX_RACKS" in rendered, rendered
    monkeypatch.setenv("CLUSTERFORGE_MAX_RACKS", "999")
    with pytest.raises(ClusterforgeError, match="over the limit of 999"):
        load_text(_with_site([{"name": "r[0-9]", "racks": [{"name": "{row}-k[0-99]"}]}]))


def test_nodes_are_bounded_by_the_sum_of_the_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _set(ONPREM, ("pools", 0, "count"), 10_000_000)
    with pytest.raises(ClusterforgeError) as exc:
        load_text(yaml.safe_dump(data), "bp.yaml")
    rendered = exc.value.problems[0].render()
    assert "pools[0].count: 10,00" in rendered and "CLUSTERFORGE_MAX_NODES" in rendered, rendered
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "20")
    pools = [{"name": f"p{i}", "hardware": "dgx-h100", "count": 7} for i in range(3)]
    with pytest.raises(ClusterforgeError, match="21 nodes in the cluster"):
        load_text(yaml.safe_dump({**ONPREM, "pools": pools}))


def test_pools_are_bounded_before_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    pools = [{"name": f"p{i}", "hardware": "dgx-h100", "count": 1} for i in range(1_001)]
    with pytest.raises(ClusterforgeError) as exc:
        load_text(yaml.safe_dump({**ONPREM, "pools": pools}), "bp.yaml")
    rendered = exc.value.problems[0].render()
    assert "1,001 pools in one blueprint" in rendered and "CLUSTERFORGE_MAX_POOLS" in rendered, rendered


@pytest.mark.parametrize(("path", "value", "said"), [
    (("site", "max_inlet_c"), 95, "site.max_inlet_c: 95 °C is over the limit of 80 °C"),
    (("site", "contracted_it_kw"), 4_000_000, "site.contracted_it_kw: 4,000,000 kW is over the limit of 1,000,000 kW"),
    (("site", "rows", 0, "racks", 0, "feeds", 0, "voltage"), 4150, "voltage: 4,150 V is over the limit of 1,000 V"),
    (("site", "pue"), 7, "site.pue: 7 is over the limit of 5"),
    (("site", "rows", 0, "racks", 0, "u_height"), 0, "u_height: 0 U is under the least of 1 U"),
])
def test_a_figure_out_of_range_is_said_in_its_unit(path: tuple[Any, ...], value: Any, said: str) -> None:
    with pytest.raises(ClusterforgeError) as exc:
        load_text(yaml.safe_dump(_set(ONPREM, path, value)), "bp.yaml")
    rendered = exc.value.problems[0].render()
    assert said in rendered, rendered
    assert "Input should be" not in rendered
