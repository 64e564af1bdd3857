"""NVIDIA's stand-ins in the lab's apt repository (clusterforge/lab/repo.py), at the blueprint's pins.

NCCL is real: `libnccl2` carries the `libnccl.so.2` from PyPI's nvidia-nccl-cu<CUDA major> wheel of the pinned
version, so the nccl role's ncclGetVersion check tests the real library. The driver metapackage, Fabric Manager and
IMEX are stand-ins with the real names and versions and no payload: they let the roles' install paths (repository,
pin, packages) run on machines without NVIDIA's repositories or GPUs. Its lab variables run the driver, IMEX and
NCCL roles on the lab's compute nodes, which skip only their device steps.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab.paths import shared_cache
from clusterforge.lab.repo import LIBDIR, ON_COMPUTE, Build, Pins, StandIns, apt_source, build_deb, control, standin

NCCL, CUDA, DRIVER = "nccl_version", "nvidia_driver_cuda_version", "nvidia_driver_version"  # all.yml's pins


def driver_branch(pins: Pins) -> str:
    """The driver's branch (its major version), which names the metapackages: cuda-drivers-<branch>."""
    return pins.pin(DRIVER).split(".")[0]


def nccl_version(pins: Pins) -> str:
    """libnccl2's Debian version as NVIDIA's repositories spell it: <nccl>-1+cuda<cuda>."""
    return f"{pins.pin(NCCL)}-1+cuda{pins.pin(CUDA)}"


def packages(pins: Pins) -> list[tuple[str, str, Build]]:
    nccl, branch, driver = nccl_version(pins), driver_branch(pins), f"{pins.pin(DRIVER)}-1"
    return [
        ("libnccl2", nccl, lambda deb: _nccl(deb, pins, dev=False)),
        ("libnccl-dev", nccl, lambda deb: _nccl(deb, pins, dev=True)),
        (f"cuda-drivers-{branch}", driver,
         lambda deb: standin(deb, f"cuda-drivers-{branch}", driver, "NVIDIA driver metapackage")),
        (f"nvidia-fabricmanager-{branch}", driver,
         lambda deb: standin(deb, f"nvidia-fabricmanager-{branch}", driver, "NVIDIA Fabric Manager")),
        (f"nvidia-imex-{branch}", driver,
         lambda deb: standin(deb, f"nvidia-imex-{branch}", driver, "NVIDIA IMEX (multi-node NVLink)")),
    ]


def files(pins: Pins) -> dict[str, tuple[str, Build]]:
    return {}


def variables(located: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """The driver and NCCL roles' packages from the lab's repository. The lab's nodes have no GPUs; the driver and
    NCCL roles install and configure on compute nodes anyway and skip only the device steps, and the health check
    checks NCCL but not GPUs. The lab's compute nodes stand in for the trays of one NVLink domain: the imex role
    installs the stand-in package and writes their node list; the daemon needs the driver and is skipped."""
    return {**apt_source("nvidia_driver"), **apt_source("nccl"), "nvidia_driver_enabled": ON_COMPUTE,
            "imex_enabled": ON_COMPUTE, "imex_domain_hosts": "{{ groups['slurm_compute'] | default([]) }}",
            "nccl_enabled": ON_COMPUTE, "health_check_nccl": True}


# NVIDIA publishes NCCL on PyPI per CUDA major (nvidia-nccl-cu12, nvidia-nccl-cu13), newer releases under newer
# manylinux tags (2.30.7 for CUDA 13 is manylinux_2_18 only): every tag a glibc-2.28 x86_64 host accepts.
NCCL_PLATFORMS = ("manylinux1_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_18_x86_64",
                  "manylinux_2_24_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64")


def nccl_wheel_name(pins: Pins) -> str:
    """The PyPI distribution that carries NCCL for the pinned CUDA's major version."""
    return f"nvidia-nccl-cu{pins.pin(CUDA).split('.')[0]}"


def _nccl_wheel(pins: Pins) -> Path:
    wheels = shared_cache() / "wheels"
    name, release = nccl_wheel_name(pins), pins.pin(NCCL)
    pattern = f"{name.replace('-', '_')}-{release}-*.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    platforms = [arg for platform in NCCL_PLATFORMS for arg in ("--platform", platform)]
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                           *platforms, "--python-version", "3.11", "--dest", str(wheels), f"{name}=={release}"],
                          capture_output=True, text=True, check=False)
    found = sorted(wheels.glob(pattern))
    if proc.returncode != 0 or not found:
        raise ClusterforgeError(Problem(
            f"cannot download {name}=={release} from PyPI: {proc.stderr.strip()[-300:]}",
            "software.nccl", hint=f"pin an NCCL version that PyPI's {name} has (CUDA {pins.pin(CUDA)}), or check the "
            "network"))
    return found[0]


def _nccl(deb: Path, pins: Pins, dev: bool) -> None:
    wheel = _nccl_wheel(pins)
    version, release = nccl_version(pins), pins.pin(NCCL)
    with tempfile.TemporaryDirectory(dir=deb.parent) as tmp, zipfile.ZipFile(wheel) as zf:
        tree = Path(tmp)
        (tree / "DEBIAN").mkdir()
        lib = tree / LIBDIR
        lib.mkdir(parents=True)
        if dev:
            include = tree / "usr/include"
            include.mkdir(parents=True)
            (include / "nccl.h").write_bytes(zf.read("nvidia/nccl/include/nccl.h"))
            (lib / "libnccl.so").symlink_to("libnccl.so.2")
            stanza = control("libnccl-dev", version, "NVIDIA NCCL development files (nccl.h)",
                             f"Depends: libnccl2 (= {version})\n")
        else:
            with zf.open("nvidia/nccl/lib/libnccl.so.2") as src, open(lib / f"libnccl.so.{release}", "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            (lib / "libnccl.so.2").symlink_to(f"libnccl.so.{release}")
            stanza = control("libnccl2", version, f"NVIDIA NCCL {release} (libnccl.so.2 from PyPI's {wheel.name})",
                             "Depends: libc6, libstdc++6\n")
        (tree / "DEBIAN/control").write_text(stanza)
        build_deb(tree, deb, compress="none" if not dev else "gzip")


# DCGM and its exporter have no stand-in: a lab image leaves them out
STANDINS = StandIns(pins=(NCCL, CUDA, DRIVER), packages=packages, files=files, variables=variables,
                    gaps={"telemetry_dcgm_enabled": False})
