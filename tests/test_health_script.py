"""The health check's GPU branch, run for real against recorded `/proc/driver/nvidia/version` lines and a
stand-in `nvidia-smi` printing what the real one prints. The lab has no GPU, so this is where the parsing is
exercised. The deeper checks (Xids, ECC, fabric, mounts, the drain reason, the textfile) are in
test_health_checks.py; a health.conf without their keys runs none of them, as here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "roles" / "health" / "files" / "clusterforge-health"
# /proc/driver/nvidia/version, first line, as each kind of kernel module writes it
PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.133.20  Fri Feb 28 02:33:34 UTC 2025"
OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Fri Feb 28 02:33:34 UTC 2025")
GRACE = ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.133.20  Release Build  "
         "(dvs-builder@U22-I3-H04-03-1)  Fri Feb 28 02:33:34 UTC 2025")
H100 = "NVIDIA H100 80GB HBM3\n"
NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
             "latest NVIDIA driver is installed and running.\n")


def health(tmp_path: Path, version_line: str | None, smi_output: str, smi_exit: int = 0,
           gpu_count: int = 8, model: str = "H100-SXM5") -> subprocess.CompletedProcess[str]:
    version = tmp_path / "version"
    if version_line is not None:
        version.write_text(version_line + "\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (tmp_path / "smi.out").write_text(smi_output)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat {tmp_path / 'smi.out'}\nexit {smi_exit}\n")
    smi.chmod(0o755)
    conf = tmp_path / "health.conf"
    conf.write_text(f"CHECK_GPUS=1\nGPU_COUNT={gpu_count}\nGPU_MODEL={model}\nDRIVER_VERSION=570.133.20\n"
                    "CHECK_NCCL=0\nNCCL_VERSION=2.26.2\nCHECK_INFINIBAND=0\nIB_PORTS=0\nCHECK_EFA=0\n"
                    f"EFA_INTERFACES=0\nREASON_PREFIX=clusterforge-health:\nNVIDIA_VERSION_FILE={version}\n")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", str(SCRIPT), "--check", "--conf", str(conf)], capture_output=True, text=True,
                          env=env, timeout=30, check=False)


@pytest.mark.parametrize("line", [PROPRIETARY, OPEN, GRACE], ids=["proprietary", "open", "aarch64"])
def test_a_healthy_node_passes_with_every_kind_of_kernel_module(tmp_path: Path, line: str) -> None:
    result = health(tmp_path, line, H100 * 8)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == ["ok   gpu-driver: driver 570.133.20 loaded",
                                          "ok   gpu-missing: 8 GPUs (H100)"]


@pytest.mark.parametrize(("line", "smi", "exit_code", "failure"), [
    (None, H100 * 8, 0, "FAIL gpu-driver (person): nvidia driver not loaded"),
    (OPEN.replace("570.133.20", "570.124.06"), H100 * 8, 0,
     "FAIL gpu-driver (person): driver 570.124.06 loaded, expected 570.133.20"),
    (OPEN, H100 * 7, 0, "FAIL gpu-missing (reboot): 7 GPUs visible, expected 8"),  # a GPU fallen off the bus
    (OPEN, H100 * 7 + "NVIDIA A100-SXM4-80GB\n", 0,
     "FAIL gpu-missing (person): GPU model is not H100: NVIDIA A100-SXM4-80GB;NVIDIA H100"),
    (OPEN, NO_DRIVER, 9,
     "FAIL gpu-missing (reboot): nvidia-smi failed (9): NVIDIA-SMI has failed because it couldn't communicate"),
], ids=["no-driver", "wrong-driver", "gpu-missing", "wrong-model", "smi-fails"])
def test_each_gpu_fault_fails_with_its_reason(tmp_path: Path, line: str | None, smi: str, exit_code: int,
                                              failure: str) -> None:
    result = health(tmp_path, line, smi, exit_code)
    assert result.returncode == 1
    assert any(out.startswith(failure) for out in result.stdout.splitlines()), result.stdout
