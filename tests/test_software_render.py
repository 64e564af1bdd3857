"""Each pool's nodes get their own vendor's pins: a cluster of NVIDIA and AMD pools renders all.yml with the
cluster's pins and one group_vars file per pool whose software differs (its vendor, its own override)."""

from __future__ import annotations

import yaml

from clusterforge.render.yamlout import load
from tests.policies.builders import design

ROCM = {"rocm": "7.2.2", "rccl": "2.27.7", "amdgpu_driver": "30.30.3"}
MIXED = [{"name": "h100", "hardware": "dgx-h100", "count": 2, "partition": "train"},
         {"name": "mi-300", "hardware": "mi300x-8gpu", "count": 2, "partition": "train",
          "software": {"rocm": "7.1.1"}}]


def test_each_pool_gets_its_own_vendors_pins(cli, write, tmp_path) -> None:
    blueprint = write(yaml.safe_dump(design(MIXED, software=ROCM)))
    out = tmp_path / "out"
    result = cli("render", blueprint, "-o", out, "--force")
    assert result.exit_code == 0, result.output
    group_vars = out / "inventory" / "group_vars"
    everyone = load((group_vars / "all.yml").read_text())
    assert "gpu_vendor" not in everyone  # NVIDIA, the roles' default, for the h100 pool
    assert everyone["nvidia_driver_version"] == "595.91.07" and everyone["rocm_version"] == "7.2.2"
    amd = load((group_vars / "pool_mi_300.yml").read_text())
    assert amd == {"gpu_vendor": "amd", "rocm_version": "7.1.1"}  # the pool's override over the cluster's 7.2.2
    assert sorted(p.name for p in group_vars.iterdir()) == ["all.yml", "pool_mi_300.yml"]
