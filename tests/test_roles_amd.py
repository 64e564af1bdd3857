"""AMD GPUs in the roles: which roles apply by the rendered gpu_vendor, what the rocm role installs from where, and
the NCCL/RCCL settings the nccl role writes on RoCE. The roles' own Jinja, evaluated with Ansible's templating."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.files.checkout import ansible_environment
from tests.conftest import ROOT, filter_plugins
from tests.test_roles import trusted

missing_packages = filter_plugins().missing_packages

BIN = Path(sys.executable).parent
FACTS = {"ansible_distribution_release": "noble", "ansible_distribution": "Ubuntu",
         "ansible_kernel": "6.8.0-45-generic"}
KEY = "deb [arch=amd64 signed-by=/etc/apt/keyrings/rocm.asc]"


def value(role: str, name: str, **inventory: Any) -> Any:
    """`{{ name }}` as Ansible templates it over the role's defaults and vars, with these inventory variables."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    variables: dict[str, Any] = {}
    for part in ("defaults", "vars"):
        path = ROOT / "roles" / role / part / "main.yml"
        variables |= trusted(yaml.safe_load(path.read_text()) if path.is_file() else {}) or {}
    templar = Templar(loader=DataLoader(), variables=variables | FACTS | inventory)
    return templar.template(trust_as_template("{{ " + name + " }}"))


# --- which roles apply --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("inventory", "nvidia", "rocm", "nccl", "nvidia_tools"), [
    ({"gpu_count": 8}, True, False, True, True),                       # no vendor rendered: NVIDIA
    ({"gpu_count": 8, "gpu_vendor": "nvidia"}, True, False, True, True),
    ({"gpu_count": 8, "gpu_vendor": "amd"}, False, True, True, False),
    ({"gpu_count": 16, "gpu_vendor": "aws"}, False, False, False, False),  # Trainium: Neuron, none of these
    ({"gpu_count": 0, "gpu_vendor": "amd"}, False, False, False, False),   # the controller of an AMD cluster
    ({}, False, False, False, False),
])
def test_the_gpu_vendor_picks_the_hardware_roles(inventory: dict, nvidia: bool, rocm: bool, nccl: bool,
                                                 nvidia_tools: bool) -> None:
    assert value("nvidia_driver", "nvidia_driver_enabled", **inventory) is nvidia
    assert value("rocm", "rocm_enabled", **inventory) is rocm
    assert value("nccl", "nccl_enabled", **inventory) is nccl
    assert value("containers", "containers_gpu", **inventory) is nvidia_tools
    # the health script's GPU and NCCL checks are nvidia-smi and libnccl: NVIDIA hosts only
    health = {"health_gpu_count": inventory.get("gpu_count", 0), **inventory}
    assert value("health", "health_check_gpus", **health) is nvidia_tools
    assert value("health", "health_check_nccl", **health) is nvidia_tools


# --- the rocm role ------------------------------------------------------------------------------------------------

def test_rocm_packages_are_pinned_to_the_blueprints_releases() -> None:
    pins = {"rocm_version": "7.2.2", "rocm_rccl_version": "2.27.7", "rocm_amdgpu_version": "30.30.3"}
    assert value("rocm", "rocm_package_specs", **pins) == ["rocm=7.2.2.*", "rccl=2.27.7.*",
                                                            "amdgpu-dkms=*.30300300-*"]
    assert value("rocm", "rocm_package_names", **pins) == ["rocm", "rccl", "amdgpu-dkms"]
    assert value("rocm", "rocm_rccl_version_code", **pins) == 22707
    assert value("rocm", "rocm_kernel_packages") == ["linux-headers-6.8.0-45-generic",
                                                     "linux-modules-extra-6.8.0-45-generic"]


@pytest.mark.parametrize(("inventory", "specs"), [
    ({"rocm_amdgpu_version": ""}, ["rocm=7.2.2.*", "rccl=2.27.7.*"]),           # the driver is not managed
    ({"clusterforge_container": True}, ["rocm=7.2.2.*", "rccl=2.27.7.*"]),     # no DKMS build in a container
    ({"rocm_amdgpu_version": "30.20"}, ["rocm=7.2.2.*", "rccl=2.27.7.*", "amdgpu-dkms=*.30200000-*"]),
])
def test_the_driver_package_only_where_the_host_builds_its_own(inventory: dict, specs: list[str]) -> None:
    assert value("rocm", "rocm_package_specs", **inventory) == specs


@pytest.mark.parametrize(("spec", "installed", "missing"), [
    ("amdgpu-dkms=*.30300300-*", "amdgpu-dkms 1:6.16.13.30300300-2278356.24.04 installed", False),
    ("amdgpu-dkms=*.30300300-*", "amdgpu-dkms 1:6.16.6.30200000-2238411.24.04 installed", True),  # 30.20
    ("rocm=7.2.2.*", "rocm 7.2.2.70202-52~24.04 installed", False),
    ("rocm=7.2.2.*", "rocm 7.2.1.70201-81~24.04 installed", True),
    ("rccl=2.27.7.*", "rccl 2.27.7.70202-52~24.04 installed", False),
    ("rccl=2.27.7.*", "rccl 2.26.6.70002-56~24.04 installed", True),
])
def test_pins_match_amds_package_versions(spec: str, installed: str, missing: bool) -> None:
    """AMD's versions: the release, then its ROCm build (`7.2.2.70202-...`), or the driver release coded as two
    digits per part after the kernel base (`1:6.16.6.30200000-...` is amdgpu 30.20)."""
    assert bool(missing_packages([spec], [installed])) is missing


@pytest.mark.parametrize(("inventory", "lines"), [
    ({}, [f"{KEY} https://repo.radeon.com/rocm/apt/7.2.2 noble main",
          f"{KEY} https://repo.radeon.com/graphics/7.2.2/ubuntu noble main"]),
    ({"rocm_version": "6.4.0", "ansible_distribution_release": "bookworm"},  # Debian 12 takes jammy's packages
     [f"{KEY} https://repo.radeon.com/rocm/apt/6.4.0 jammy main"]),
    ({"rocm_apt_url": "http://mirror.example/radeon", "rocm_apt_key_url": ""},
     ["deb [arch=amd64] http://mirror.example/radeon/rocm/apt/7.2.2 noble main",
      "deb [arch=amd64] http://mirror.example/radeon/graphics/7.2.2/ubuntu noble main"]),
])
def test_rocm_repositories_are_the_pinned_releases(inventory: dict, lines: list[str]) -> None:
    assert value("rocm", "rocm_apt_repositories", **inventory) == lines


def test_the_driver_repository_is_the_pinned_driver_release() -> None:
    assert value("rocm", "rocm_amdgpu_apt_repository", rocm_amdgpu_version="30.30.3", ansible_distribution_release=
                 "trixie") == f"{KEY} https://repo.radeon.com/amdgpu/30.30.3/ubuntu noble main"


def _play(tmp_path: Path, extra: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The rocm role alone against this machine, in check mode, as a container: nothing is changed here."""
    playbook = tmp_path / "rocm.yml"
    playbook.write_text(yaml.safe_dump([{"name": "rocm", "hosts": "localhost", "gather_facts": True,
                                         "gather_subset": ["min"], "roles": ["rocm"]}]))
    home = tmp_path / "ansible-home"
    env = {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
           "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(ROOT / "roles"),
           **ansible_environment(ROOT), "ANSIBLE_NOCOLOR": "1"}
    variables = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "ansible_become": False, **extra}
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(playbook), "--check",
                           "-e", json.dumps(variables)], capture_output=True, text=True, check=False, env=env,
                          cwd=tmp_path)


def _outcomes(stdout: str) -> dict[str, str]:
    """Each task of the run and its first outcome line (`ok: [localhost]`, `skipping: ...`, `changed: ...`)."""
    out: dict[str, str] = {}
    for chunk in stdout.split("TASK [")[1:]:
        name, _, rest = chunk.partition("]")
        lines = [line for line in rest.splitlines() if line.strip() and not set(line.strip()) <= {"*"}]
        out[name] = lines[0] if lines else ""
    return out


AMD_STEPS = ("The repository signing key is present", "The ROCm repositories of the pinned release are configured",
             "The amdgpu driver repository of the pinned release is configured",
             "Apt prefers AMD's repositories over the distribution's packages of the same names",
             "Headers of the running kernel are installed for the DKMS driver",
             "ROCm, RCCL and the amdgpu driver are installed at the pinned versions")


def test_in_a_container_the_rocm_role_installs_nothing_from_amd_and_says_so(tmp_path: Path) -> None:
    result = _play(tmp_path, {"gpu_count": 8, "gpu_vendor": "amd", "clusterforge_container": True,
                              "rocm_adduser_groups": False})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    out = result.stdout
    said = " ".join(out.split())  # messages come back wrapped
    assert "repositories (repo.radeon.com) and the packages rocm=7.2.2.*, rccl=2.27.7.*: this host installs nothing" \
        " from AMD" in said
    assert "skipped loading amdgpu and counting the GPUs the ROCm runtime sees: this host is a container" in said
    outcomes = _outcomes(out)
    for step in AMD_STEPS:
        assert outcomes[f"rocm : {step}"].startswith("skipping:"), (step, outcomes[f"rocm : {step}"])
    assert outcomes["rocm : The GPU device groups exist"].startswith(("ok:", "changed:"))  # what needs no AMD


def test_the_rocm_role_ends_on_hosts_without_amd_gpus(tmp_path: Path) -> None:
    result = _play(tmp_path, {"gpu_count": 8, "gpu_vendor": "nvidia", "clusterforge_container": True})
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "skipped AMD's repositories" not in result.stdout
    assert "TASK [rocm : The GPU device groups exist]" not in result.stdout


# --- NCCL and RCCL settings ---------------------------------------------------------------------------------------

def test_roce_settings_for_nccl_and_rccl() -> None:
    settings = value("nccl", "nccl_settings", fabric_kind="roce")
    assert {k: str(v) for k, v in settings.items()} == {
        "NCCL_IB_DISABLE": "0", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "^lo,docker,virbr"}
    # 106 = DSCP 26 with ECN capable; DSCP 26 is priority 3 (NVIDIA doRoCE: DSCP = TOS >> 2, PRIO = DSCP >> 3)
    assert (106 >> 2, 106 >> 5, 106 & 3) == (26, 3, 2)
    assert value("nccl", "nccl_conf_files", gpu_vendor="amd") == ["/etc/nccl.conf", "/etc/rccl.conf"]
    assert value("nccl", "nccl_conf_files") == ["/etc/nccl.conf"]
    assert value("nccl", "nccl_library", gpu_vendor="amd") == "rccl"


@pytest.mark.parametrize(("fabric", "inventory", "expected"), [
    ("roce", {"nccl_ib_hca": "=mlx5_0:1,mlx5_1:1"}, "=mlx5_0:1,mlx5_1:1"),
    ("infiniband", {"nccl_ib_hca": "^=mlx5_8"}, "^=mlx5_8"),
    ("ethernet", {"nccl_ib_hca": "mlx5"}, None),                      # no RDMA devices to name on plain Ethernet
    ("roce", {}, None),                                                # unset: NCCL uses every RDMA device
    ("roce", {"nccl_roce_gid_index": 1, "nccl_roce_traffic_class": 104}, None),
])
def test_rdma_devices_and_roce_values_are_the_sites(fabric: str, inventory: dict, expected: str | None) -> None:
    settings = value("nccl", "nccl_settings", fabric_kind=fabric, **inventory)
    assert settings.get("NCCL_IB_HCA") == expected
    if "nccl_roce_gid_index" in inventory:
        assert (str(settings["NCCL_IB_GID_INDEX"]), str(settings["NCCL_IB_TC"])) == ("1", "104")
