"""The deep health checks of roles/health, run for real: the bash script against stand-ins for nvidia-smi,
journalctl, sinfo, scontrol, findmnt, stat and dcgmi on PATH. nvidia-smi answers with what a real H100 printed
(tests/fixtures/nvidia-smi/h100-pcie-vm-580, one command per file); a fault is an edited copy of those files.
The stand-ins record their arguments, so the tests see the exact drain reason handed to scontrol."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "roles" / "health" / "files" / "clusterforge-health"
REBOOT = ROOT / "roles" / "health" / "files" / "clusterforge-reboot"
H100 = ROOT / "tests" / "fixtures" / "nvidia-smi" / "h100-pcie-vm-580"
NODE = "gpu-0001"
SEP = "\x1f"
# The nvidia-smi commands the script may run (the fixture README's), and the file that holds each one's output.
SMI = {
    "--query-gpu=name --format=csv,noheader": "names.txt",
    "--query-gpu=index,ecc.errors.uncorrected.volatile.total,ecc.errors.uncorrected.aggregate.total,"
    "ecc.errors.corrected.volatile.total --format=csv,noheader": "ecc.txt",
    "--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,"
    "remapped_rows.failure --format=csv,noheader": "remap.txt",
    "--query-gpu=index,fabric.state,fabric.status --format=csv,noheader": "fabric.txt",
    "--query-gpu=index,gpu_recovery_action --format=csv,noheader": "recovery.txt",
    "nvlink -s": "nvlink-s.txt",
    "--query-gpu=index,clocks_event_reasons.active,clocks_event_reasons.gpu_idle,clocks_event_reasons.hw_slowdown,"
    "clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,"
    "clocks_event_reasons.sw_thermal_slowdown,pcie.link.gen.gpucurrent,pcie.link.gen.max,pcie.link.width.current,"
    "pcie.link.width.max --format=csv,noheader": "speed.txt",
}
# What the lab's drill writes to /run/clusterforge-lab/kmsg
XID_79 = "NVRM: Xid (PCI:0000:9a:00): 79, pid=1234, name=python3, GPU has fallen off the bus."
HEALTHY = ["ok   gpu-driver: driver 580.159.04 loaded",
           "ok   gpu-xid: no Xid that needs a reset or reboot this boot",
           "ok   gpu-missing: 1 GPUs (H100)",
           "ok   gpu-ecc: no uncorrected ECC errors",
           "ok   gpu-remap: no pending or failed row remapping"]

# one write per call (the script runs nvidia-smi queries in parallel)
RECORD = (f'line=""; for a in "$@"; do line="$line$a{SEP}"; done\n'
          'printf \'%s\\n\' "$line" >>"$CF_FAKE/calls.${0##*/}"\n')


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


class Node:
    """A compute node as the script sees it: health.conf, the stand-ins' answers, and what they were asked."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.smi = tmp / "smi"
        self.prom = tmp / "prom"
        self.kmsg = tmp / "kmsg"
        for folder in (self.bin, self.prom):
            folder.mkdir()
        shutil.copytree(H100, self.smi)
        cases = "".join(f'  "{args}") f={name} ;;\n' for args, name in SMI.items())
        _script(self.bin / "nvidia-smi", RECORD + f'case "$*" in\n{cases}'
                '  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 99 ;;\nesac\n'
                '[ -f "$CF_FAKE/smi-sleep" ] && exec sleep "$(cat "$CF_FAKE/smi-sleep")"\n'
                'cat "$CF_FAKE/smi/$f"\nexit "$(cat "$CF_FAKE/smi/$f.rc" 2>/dev/null || echo 0)"\n')
        _script(self.bin / "journalctl", RECORD + 'cat "$CF_FAKE/journal" 2>/dev/null\n')
        _script(self.bin / "hostname", f"echo {NODE}\n")
        # sinfo prints this node's "state|reason" (a file the test writes); scontrol answers 0
        _script(self.bin / "sinfo", RECORD + 'cat "$CF_FAKE/sinfo.out" 2>/dev/null || echo "idle|none"\n')
        _script(self.bin / "scontrol", RECORD + "exit 0\n")
        # findmnt [-n] [-t TYPE] --mountpoint DIR: mounted when "DIR TYPE" (or "DIR any") is a line of mounts
        _script(self.bin / "findmnt", RECORD + 'type=any; dir=""\nwhile [ $# -gt 0 ]; do case "$1" in\n'
                '  -t) type=$2; shift ;;\n  --mountpoint) dir=$2; shift ;;\n esac; shift; done\n'
                'grep -qx "$dir $type" "$CF_FAKE/mounts" 2>/dev/null || '
                '{ [ "$type" = any ] && grep -q "^$dir " "$CF_FAKE/mounts" 2>/dev/null; }\n')
        # stat -f DIR: hangs when DIR is a line of hung
        _script(self.bin / "stat", RECORD + 'grep -qx "$2" "$CF_FAKE/hung" 2>/dev/null && exec sleep 30\nexit 0\n')
        self.conf: dict[str, Any] = {
            "CHECK_GPUS": 1, "GPU_COUNT": 1, "GPU_MODEL": "H100", "DRIVER_VERSION": "580.159.04",
            "NVIDIA_VERSION_FILE": self.smi / "version.txt", "CHECK_XID": 1, "KERNEL_LOG_FILE": self.kmsg,
            "CHECK_ECC": 1, "CHECK_REMAP": 1, "CHECK_FABRIC": 0, "CHECK_NVLINK": 0, "CHECK_NCCL": 0,
            "NCCL_VERSION": "2.26.2", "CHECK_INFINIBAND": 0, "IB_PORTS": 0, "IB_RATE_GBPS": 0,
            "IB_LINK_LAYER": "InfiniBand", "IB_DEVICES": "", "IB_LEAVES": "", "IB_SYSFS": tmp / "sys-infiniband",
            "CHECK_EFA": 0, "EFA_INTERFACES": 0, "CHECK_LUSTRE": 0, "LUSTRE_MOUNT": "/lustre", "CHECK_SHARED": 0,
            "SHARED_MOUNT": "/shared", "CHECK_DISK": 0, "DISK_PATHS": str(tmp), "DISK_MIN_FREE_PCT": 1,
            "DCGM_DIAG_LEVEL": 0, "REASON_PREFIX": "clusterforge-health:", "TEXTFILE_DIR": self.prom}

    def set(self, **values: Any) -> Node:
        self.conf.update(values)
        return self

    def smi_file(self, name: str, text: str, rc: int = 0) -> Node:
        (self.smi / name).write_text(text)
        (self.smi / f"{name}.rc").write_text(str(rc))
        return self

    def slurm_has(self, state: str, reason: str = "none") -> Node:
        (self.tmp / "sinfo.out").write_text(f"{state}|{reason}\n")
        return self

    def run(self, *args: str, extra_path: Path | None = None, timeout: float = 60,
            **environment: str) -> subprocess.CompletedProcess[str]:
        conf = self.tmp / "health.conf"
        conf.write_text("".join(f"{key}={_shell(value)}\n" for key, value in self.conf.items()))
        path = os.pathsep.join(str(p) for p in (extra_path, self.bin) if p) + os.pathsep + os.environ["PATH"]
        env = {k: v for k, v in os.environ.items() if k != "SLURMD_NODENAME"}
        env |= {"PATH": path, "CF_FAKE": str(self.tmp), **environment}
        return subprocess.run(["bash", str(SCRIPT), *args, "--conf", str(conf)], capture_output=True, text=True,
                              env=env, timeout=timeout, check=False)

    def calls(self, command: str) -> list[list[str]]:
        path = self.tmp / f"calls.{command}"
        if not path.exists():
            return []
        return [line.split(SEP)[:-1] for line in path.read_text().splitlines()]

    def drains(self) -> list[str]:
        """The reasons scontrol was asked to drain this node with."""
        out = []
        for argv in self.calls("scontrol"):
            assert argv[:3] == ["update", f"NodeName={NODE}", "State=DRAIN"], argv
            assert argv[3].startswith("Reason=") and len(argv) == 4, argv
            out.append(argv[3].removeprefix("Reason="))
        return out

    def prom_file(self) -> str:
        return (self.prom / "clusterforge_health.prom").read_text()


def _shell(value: Any) -> str:
    return "'" + str(value).replace("'", "'\\''") + "'"


@pytest.fixture
def node(tmp_path: Path) -> Node:
    return Node(tmp_path)


def lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stdout.splitlines() if line[:5] in ("ok   ", "FAIL ", "skip ")]


def check_cut_off(node: Node) -> list[str]:
    """`--check` with a probe that hangs: the script's own timeout ends it well within 10 s; its result lines."""
    start = time.monotonic()
    result = node.run("--check", timeout=20)
    assert time.monotonic() - start < 10
    return lines(result)


def reason(code: str, action: str, detail: str) -> str:
    return f"clusterforge-health: {code} ({action}): {detail}"


# --- the recorded H100 passes -------------------------------------------------------------------------------------

def test_the_recorded_h100_passes_every_gpu_check(node: Node) -> None:
    result = node.run("--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines(result) == HEALTHY
    # the exact recorded commands, each once (the fake refuses any other)
    asked = sorted(" ".join(argv) for argv in node.calls("nvidia-smi"))
    assert asked == sorted(args for args, name in SMI.items()
                           if name not in ("fabric.txt", "nvlink-s.txt", "speed.txt"))
    assert node.calls("scontrol") == []


def test_the_recorded_na_fabric_and_empty_nvlink_fail_only_where_nvswitches_are_expected(node: Node) -> None:
    assert node.set(CHECK_FABRIC=0, CHECK_NVLINK=0).run("--check").returncode == 0
    result = node.set(CHECK_FABRIC=1, CHECK_NVLINK=1).run("--check")
    assert result.returncode == 1
    assert "FAIL gpu-fabric (reboot): NVSwitch fabric not registered: GPU 0 N/A/N/A" in lines(result)
    assert "FAIL nvlink (reboot): no NVLink links reported" in lines(result)


def test_a_healthy_prolog_is_fast_and_touches_nothing(node: Node) -> None:
    node.set(CHECK_SHARED=1, CHECK_DISK=1, CHECK_NVLINK=1, CHECK_NCCL=1, DCGM_DIAG_LEVEL=1)
    (node.tmp / "mounts").write_text("/shared any\n")
    start = time.monotonic()
    result = node.run("--prolog")
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stdout
    assert node.calls("scontrol") == [] and node.calls("sinfo") == []
    # the fast tier: no NVLink, NCCL or DCGM before a job
    assert "nvlink -s" not in [" ".join(argv) for argv in node.calls("nvidia-smi")]
    assert not [line for line in lines(result) if line.split()[1].rstrip(":") in ("nvlink", "nccl", "dcgm-diag")]
    assert 'clusterforge_health_duration_seconds{mode="prolog"}' in node.prom_file()
    assert elapsed < 2, f"a healthy prolog took {elapsed:.2f} s"


# --- Xids -----------------------------------------------------------------------------------------------------

def test_the_labs_xid_79_drains_for_a_reboot_without_gpus(node: Node) -> None:
    """The lab: no GPU, the Xid scan on, the drill's line in the kernel log file."""
    node.set(CHECK_GPUS=0, CHECK_ECC=0, CHECK_REMAP=0)
    node.kmsg.write_text("[ 12.3] something else\n" + XID_79 + "\n")
    result = node.run()
    assert result.returncode == 1
    expected = reason("gpu-xid", "reboot", "Xid 79 on 0000:9a:00: GPU has fallen off the bus")
    assert node.drains() == [expected]
    assert node.calls("nvidia-smi") == []
    assert "clusterforge_health_ok 0" in node.prom_file()
    assert 'clusterforge_health_failure{code="gpu-xid",action="reboot"} 1' in node.prom_file()


@pytest.mark.parametrize("xid", [13, 31, 43, 45, 63, 92, 94])
def test_application_and_informational_xids_never_fail(node: Node, xid: int) -> None:
    node.kmsg.write_text(f"NVRM: Xid (PCI:0000:00:06): {xid}, pid=99, name=python3, Ch 00000008\n")
    result = node.run("--check")
    assert result.returncode == 0, result.stdout
    assert f"ok   gpu-xid: no Xid that needs a reset or reboot this boot (seen: {xid})" in lines(result)


@pytest.mark.parametrize(("line", "detail"), [
    ("NVRM: Xid (PCI:0000:18:00): 48, pid=7, name=python3, An uncorrectable double bit error",
     "Xid 48 on 0000:18:00: double-bit ECC error"),
    ("[  88.1] NVRM: Xid (PCI:0000:9a:00): 74, pid=7, name=python3, NVLink: fatal error detected on link 3",
     "Xid 74 on 0000:9a:00: NVLink error"),
    ("NVRM: Xid (0000:03:00): 95, pid=7, name=python3, Uncontained: FBHUB",  # older drivers: no "PCI:"
     "Xid 95 on 0000:03:00: uncontained ECC error"),
    ("NVRM: Xid (PCI:0000:9a:00): 119, pid=7, name=python3, Timeout after 6s of waiting for RPC response",
     "Xid 119 on 0000:9a:00: GSP RPC timeout"),
    ("NVRM: Xid (PCI:0000:9a:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
     "Xid 154 on 0000:9a:00: recovery action 0x2 (Node Reboot Required) (Xid 154)"),
], ids=["48", "74", "95-old-format", "119", "154-reboot"])
def test_reset_and_reboot_xids_fail_with_their_meaning(node: Node, line: str, detail: str) -> None:
    node.kmsg.write_text(line + "\n")
    result = node.run("--check")
    assert result.returncode == 1
    assert f"FAIL gpu-xid (reboot): {detail}" in lines(result)


def test_xid_154_to_none_passes(node: Node) -> None:
    node.kmsg.write_text("NVRM: Xid (PCI:0000:9a:00): 154, GPU recovery action changed from 0x2 (Node Reboot "
                         "Required) to 0x0 (None)\n")
    assert node.run("--check").returncode == 0


def test_several_xids_name_the_first_and_the_others(node: Node) -> None:
    node.kmsg.write_text("\n".join([XID_79, XID_79, "NVRM: Xid (PCI:0000:1b:00): 13, Graphics Exception",
                                    "NVRM: Xid (PCI:0000:1b:00): 48, DBE"]) + "\n")
    result = node.run("--check")
    assert "FAIL gpu-xid (reboot): Xid 79 on 0000:9a:00: GPU has fallen off the bus (also Xid 48)" in lines(result)


def test_the_driver_recovery_action_fails_the_node(node: Node) -> None:
    node.smi_file("recovery.txt", "0, Reboot\n")
    result = node.run("--check")
    assert "FAIL gpu-xid (reboot): recovery action: GPU 0 Reboot" in lines(result)


def test_without_a_log_file_the_kernel_log_of_this_boot_is_read(node: Node) -> None:
    node.set(KERNEL_LOG_FILE="")
    (node.tmp / "journal").write_text(f"Nov 22 21:00:01 gpu-0001 kernel: {XID_79}\n")
    result = node.run("--check")
    assert node.calls("journalctl") == [["-k", "-b", "-q", "--no-pager"]]
    assert "FAIL gpu-xid (reboot): Xid 79 on 0000:9a:00: GPU has fallen off the bus" in lines(result)


def test_a_missing_kernel_log_file_is_a_clean_boot(node: Node) -> None:
    """/run/clusterforge-lab/kmsg does not exist until a drill writes it, and a reboot clears /run."""
    node.set(KERNEL_LOG_FILE=node.tmp / "no-such-file")
    assert node.run("--check").returncode == 0


# --- ECC, row remapping, fabric, NVLink -------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "text", "code", "action", "detail"), [
    ("ecc.txt", "0, 1, 1, 0\n", "gpu-ecc", "reboot", "uncorrected ECC errors since the driver loaded (GPU 0: 1)"),
    ("remap.txt", "00000000:00:06.0, 0, 1, Yes, No\n", "gpu-remap", "reboot",
     "row remapping pending on 00000000:00:06.0 (needs a GPU reset)"),
    ("remap.txt", "00000000:00:06.0, 0, 512, No, Yes\n", "gpu-remap", "person",
     "row remapping failed on 00000000:00:06.0 (spare rows exhausted: RMA)"),
    ("remap.txt", "00000000:00:06.0, 0, 512, Yes, Yes\n", "gpu-remap", "person",
     "row remapping failed on 00000000:00:06.0 (spare rows exhausted: RMA)"),
], ids=["ecc", "remap-pending", "remap-failure", "remap-both"])
def test_memory_faults_drain_with_their_code(node: Node, name: str, text: str, code: str, action: str,
                                             detail: str) -> None:
    node.smi_file(name, text)
    result = node.run()
    assert result.returncode == 1
    assert node.drains() == [reason(code, action, detail)]


def test_ecc_na_on_a_card_without_ecc_passes(node: Node) -> None:
    node.smi_file("ecc.txt", "0, [N/A], [N/A], [N/A]\n")
    assert node.run("--check").returncode == 0


def test_a_fabric_still_in_progress_on_an_nvswitch_system_fails(node: Node) -> None:
    node.set(GPU_COUNT=8, GPU_MODEL="H100-SXM5", CHECK_FABRIC=1)
    node.smi_file("names.txt", "NVIDIA H100 80GB HBM3\n" * 8)
    node.smi_file("fabric.txt", "".join(f"{i}, Completed, Success\n" for i in range(7)) + "7, In Progress, N/A\n")
    result = node.run()
    assert node.drains() == [reason("gpu-fabric", "reboot", "NVSwitch fabric not registered: GPU 7 In Progress/N/A")]
    node.smi_file("fabric.txt", "".join(f"{i}, Completed, Success\n" for i in range(8)))
    result = node.run("--check")
    assert result.returncode == 0 and "ok   gpu-fabric: NVSwitch fabric Completed/Success on every GPU" in lines(result)


NVLINK = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a2b4be5b-ab0e-acde-bf78-e25a85484906)\n"
          "\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n"
          "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-b2b4be5b-ab0e-acde-bf78-e25a85484906)\n"
          "\t Link 0: 26.562 GB/s\n\t Link 1: {link}\n")


def test_an_inactive_nvlink_fails_the_periodic_check_only(node: Node) -> None:
    node.set(CHECK_NVLINK=1, GPU_COUNT=2).smi_file("names.txt", "NVIDIA H100 80GB HBM3\n" * 2)
    node.smi_file("nvlink-s.txt", NVLINK.format(link="26.562 GB/s"))
    assert "ok   nvlink: 4 NVLink links active" in lines(node.run("--check"))
    node.smi_file("nvlink-s.txt", NVLINK.format(link="<inactive>"))
    assert "FAIL nvlink (reboot): inactive: GPU 1 link 1" in lines(node.run("--check"))
    assert node.run("--prolog").returncode == 0


# --- nvidia-smi itself ------------------------------------------------------------------------------------------

def test_a_hung_nvidia_smi_is_cut_off(node: Node) -> None:
    node.set(SMI_TIMEOUT=1)
    (node.tmp / "smi-sleep").write_text("30")
    assert "FAIL gpu-missing (reboot): nvidia-smi failed (timed out after 1 s): " in check_cut_off(node)


def test_a_gpu_off_the_bus_fails_once_not_for_every_query(node: Node) -> None:
    gone = "Unable to determine the device handle for GPU0000:00:06.0: Unknown Error\n"
    for name in ("names.txt", "ecc.txt", "remap.txt", "recovery.txt"):
        node.smi_file(name, gone, rc=15)
    node.kmsg.write_text(XID_79 + "\n")
    result = node.run()
    assert [line.split(":")[0] for line in lines(result) if line.startswith("FAIL")] == [
        "FAIL gpu-xid (reboot)", "FAIL gpu-missing (reboot)"]
    assert node.drains() == [reason("gpu-xid", "reboot", "Xid 79 on 0000:9a:00: GPU has fallen off the bus (+1 more)")]


# --- InfiniBand ports -------------------------------------------------------------------------------------------

def ib_port(node: Node, device: str, state: str = "4: ACTIVE", phys: str = "5: LinkUp",
            rate: str = "400 Gb/sec (4X NDR)", layer: str = "InfiniBand") -> None:
    port = Path(node.conf["IB_SYSFS"]) / device / "ports" / "1"
    port.mkdir(parents=True)
    for name, value in {"state": state, "phys_state": phys, "rate": rate, "link_layer": layer}.items():
        (port / name).write_text(value + "\n")


@pytest.mark.parametrize(("port", "detail"), [
    ({"state": "1: DOWN", "phys": "3: Disabled"}, "1 of 2 ports ACTIVE/LinkUp at 400 Gb/s: mlx5_1/1 DOWN/Disabled"),
    ({"state": "2: INIT", "phys": "5: LinkUp"}, "1 of 2 ports ACTIVE/LinkUp at 400 Gb/s: mlx5_1/1 INIT/LinkUp"),
    ({"rate": "200 Gb/sec (4X HDR)"}, "1 of 2 ports ACTIVE/LinkUp at 400 Gb/s: mlx5_1/1 at 200 Gb/s"),
], ids=["down", "init", "200-instead-of-400"])
def test_an_infiniband_port_down_or_slow_drains_for_a_person(node: Node, port: dict[str, str], detail: str) -> None:
    node.set(CHECK_INFINIBAND=1, IB_PORTS=2, IB_RATE_GBPS=400)
    ib_port(node, "mlx5_0")
    ib_port(node, "mlx5_1", **port)
    node.run()
    assert node.drains() == [reason("ib-port", "person", detail)]


def test_a_bad_port_names_its_rail_and_leaf_switch_in_nic_order(node: Node) -> None:
    """Rail i is the i-th fabric port in the NICs' order (mlx5_2 before mlx5_10), cabled to leaf i of the plan."""
    leaves = " ".join(f"leaf-{rail:03}" for rail in range(1, 12))
    node.set(CHECK_INFINIBAND=1, IB_PORTS=11, IB_RATE_GBPS=400, IB_LEAVES=leaves)
    for index in range(11):
        ib_port(node, f"mlx5_{index}", **({"state": "1: DOWN", "phys": "3: Disabled"} if index in (1, 10) else {}))
    node.run()
    assert node.drains() == [reason("ib-port", "person", "9 of 11 ports ACTIVE/LinkUp at 400 Gb/s: "
                                    "mlx5_1/1 DOWN/Disabled (rail 2, leaf-002), "
                                    "mlx5_10/1 DOWN/Disabled (rail 11, leaf-011)")]


def test_infiniband_ports_of_another_link_layer_do_not_count(node: Node) -> None:
    node.set(CHECK_INFINIBAND=1, IB_PORTS=2, IB_RATE_GBPS=400)
    ib_port(node, "mlx5_0")
    ib_port(node, "mlx5_1")
    ib_port(node, "mlx5_2", state="1: DOWN", phys="3: Disabled", rate="25 Gb/sec (1X EDR)", layer="Ethernet")
    assert "ok   ib-port: 2 ports ACTIVE/LinkUp at 400 Gb/s" in lines(node.run("--check"))
    node.set(IB_LINK_LAYER="Ethernet", IB_PORTS=1)  # RoCE: the Ethernet ports count
    assert "FAIL ib-port (person): 0 of 1 ports ACTIVE/LinkUp at 400 Gb/s: mlx5_2/1 DOWN/Disabled" in lines(
        node.run("--check"))
    node.set(IB_LINK_LAYER="InfiniBand", IB_PORTS=2, IB_DEVICES="mlx5_0 mlx5_2/1")  # only the listed ports
    assert node.run("--check").returncode == 1


# --- mounts and disks -------------------------------------------------------------------------------------------

def test_the_shared_file_system_not_mounted_drains_for_a_person(node: Node) -> None:
    node.set(CHECK_SHARED=1)
    node.run()
    assert node.drains() == [reason("shared-mount", "person", "/shared is not mounted")]
    (node.tmp / "mounts").write_text("/shared any\n")
    assert "ok   shared-mount: /shared mounted and answering" in lines(node.run("--check"))


def test_a_hung_lustre_is_cut_off_and_drains_for_a_reboot(node: Node) -> None:
    node.set(CHECK_LUSTRE=1, MOUNT_TIMEOUT=1)
    node.run()
    assert node.drains() == [reason("lustre-mount", "reboot", "/lustre is not mounted (no lustre mount there)")]
    (node.tmp / "mounts").write_text("/lustre lustre\n")
    (node.tmp / "hung").write_text("/lustre\n")
    assert "FAIL lustre-mount (reboot): /lustre does not answer (stat -f timed out after 1 s)" in check_cut_off(node)


def test_a_full_disk_drains_for_a_person(node: Node) -> None:
    node.set(CHECK_DISK=1, DISK_MIN_FREE_PCT=100)
    result = node.run()
    assert result.returncode == 1
    [drained] = node.drains()
    pattern = re.escape(reason("disk", "person", f"{node.tmp} ")) + r"\d+% free \(need writable, >= 100% free\)"
    assert re.fullmatch(pattern, drained), drained
    node.set(DISK_MIN_FREE_PCT=0, DISK_PATHS=f"{node.tmp} {node.tmp}/gone")
    assert f"FAIL disk (person): {node.tmp}/gone missing (need writable, >= 0% free)" in lines(node.run("--check"))


# --- the drain reason -------------------------------------------------------------------------------------------

def test_the_reason_is_the_first_failure_with_a_count_short_and_printable(node: Node) -> None:
    node.set(CHECK_SHARED=1, CHECK_DISK=1, DISK_PATHS=f"{node.tmp}/gone")
    node.kmsg.write_text("NVRM: Xid (PCI:0000:9a:00\x1b[31m" + "x" * 300 + "): 79, GPU has fallen off the bus\n")
    node.smi_file("ecc.txt", "0, 3, 3, 0\n")
    node.run()
    [drained] = node.drains()
    assert len(drained) == 200
    assert drained.startswith("clusterforge-health: gpu-xid (reboot): Xid 79 on 0000:9a:00[31mxxx")
    assert drained.endswith("xxx (+3 more)")
    assert drained.isprintable() and "\x1b" not in drained


# --- SLURM: prolog, epilog, resume ------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["--prolog", "--epilog"])
def test_a_failing_prolog_or_epilog_drains_prints_the_reason_and_exits_1(node: Node, mode: str) -> None:
    node.smi_file("ecc.txt", "0, 2, 2, 0\n")
    result = node.run(mode)
    expected = reason("gpu-ecc", "reboot", "uncorrected ECC errors since the driver loaded (GPU 0: 2)")
    assert result.returncode == 1
    assert expected in result.stdout.splitlines()
    assert node.drains() == [expected]
    assert f'clusterforge_health_duration_seconds{{mode="{mode[2:]}"}}' in node.prom_file()


def test_the_node_is_the_one_slurmd_names(node: Node) -> None:
    node.smi_file("ecc.txt", "0, 2, 2, 0\n")
    node.run("--prolog", SLURMD_NODENAME="gpu-0042")
    assert node.calls("sinfo") == [["--noheader", "--Node", "--nodes=gpu-0042", "--format=%T|%E"]]
    assert node.calls("scontrol")[0][:2] == ["update", "NodeName=gpu-0042"]


def test_check_mode_reports_only(node: Node) -> None:
    node.smi_file("ecc.txt", "0, 2, 2, 0\n")
    assert node.run("--check").returncode == 1
    assert node.calls("scontrol") == [] and node.calls("sinfo") == []


@pytest.mark.parametrize(("state", "current", "resumed"), [
    ("drained", "clusterforge-health: gpu-ecc (reboot): uncorrected ECC errors", True),
    ("draining", "clusterforge-health: disk (person): / 2% free", True),
    ("drained", "replacing a DIMM [admin@2026-11-20T10:00:00]", False),
    ("drained", "clusterforge-remediate: gave up after 2 reboots in 24h: clusterforge-health: gpu-xid (reboot): x",
     False),
    ("drained@", "clusterforge-health: gpu-xid (reboot): Xid 79", False),  # a reboot pending: resume cancels it
    ("idle", "none", False),
    ("down", "Node unexpectedly rebooted", True),  # back from a power cut: ReturnToService=1 keeps it DOWN
    ("down*", "Not responding", False),
    ("down", "taken down by admin", False),
    # the perf tier's and a DCGM diagnostic's verdicts: the periodic checks never looked at what they found
    ("drained", "clusterforge-health: gpu-slow (person): GPU 3 gemm 610.0 TFLOP/s, fleet median 790.0", False),
    ("drained", "clusterforge-health: gpu-sdc (person): GPU 5 checksum 0123456789abcdef, expected 6afbad815982bd58",
     False),
    ("drained", "clusterforge-health: gpu-perf (person): GPU 1 perf program timed out", False),
    ("drained", "clusterforge-health: dcgm-diag (person): level 3: Memory bandwidth fail", False),
], ids=["ours", "ours-draining", "admin", "remediation-gave-up", "reboot-pending", "not-drained", "crashed-and-back",
        "not-responding", "admin-down", "perf-slow", "perf-sdc", "perf-failed", "dcgm-diag"])
def test_a_passing_node_is_resumed_only_from_its_own_drain(node: Node, state: str, current: str,
                                                           resumed: bool) -> None:
    node.slurm_has(state, current)
    assert node.run().returncode == 0
    assert node.calls("sinfo") == [["--noheader", "--Node", f"--nodes={NODE}", "--format=%T|%E"]]
    assert node.calls("scontrol") == ([["update", f"NodeName={NODE}", "State=RESUME"]] if resumed else [])


@pytest.mark.parametrize(("state", "current"), [
    ("drained", "replacing a DIMM"),
    ("down*", "Not responding"),
    ("draining@", "clusterforge-remediate: reboot 1/2: clusterforge-health: gpu-ecc (reboot): x"),
    ("reboot^", "clusterforge-remediate: reboot 1/2: clusterforge-health: gpu-ecc (reboot): x"),
])
def test_a_failing_node_held_for_another_reason_keeps_it(node: Node, state: str, current: str) -> None:
    node.slurm_has(state, current).smi_file("ecc.txt", "0, 2, 2, 0\n")
    result = node.run()
    assert result.returncode == 1
    assert node.calls("scontrol") == []
    assert f"not drained: {NODE} is {state} for another reason: {current}" in result.stdout


@pytest.mark.parametrize(("state", "current", "drains"), [
    ("idle", "clusterforge-remediate: reboot 1/2: clusterforge-health: gpu-ecc (reboot): x", 1),  # left after a reboot
    ("drained", "clusterforge-health: gpu-remap (reboot): row remapping pending on 0", 1),  # ours, another fault now
    ("drained", "clusterforge-health: gpu-ecc (reboot): uncorrected ECC errors since the driver loaded (GPU 0: 2)", 0),
])
def test_a_failing_node_is_drained_unless_already_with_this_reason(node: Node, state: str, current: str,
                                                                    drains: int) -> None:
    node.slurm_has(state, current).smi_file("ecc.txt", "0, 2, 2, 0\n")
    node.run()
    assert len(node.drains()) == drains


# --- the textfile for the node exporter -------------------------------------------------------------------------

SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"'
                    r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")*\})? -?[0-9]+(\.[0-9]+)?$')


def check_exposition(text: str) -> dict[str, str]:
    """Text exposition format: HELP and TYPE once per family before its samples; the samples by name."""
    assert text.endswith("\n")
    typed: dict[str, str] = {}
    samples: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name not in typed and kind in ("gauge", "counter")
            typed[name] = kind
            continue
        assert SAMPLE.match(line), line
        name = re.split(r"[{ ]", line, maxsplit=1)[0]
        assert name in typed, f"{name} has no TYPE line before it"
        samples[line.rsplit(" ", 1)[0]] = line.rsplit(" ", 1)[1]
    if shutil.which("promtool"):
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                              check=False)
        assert lint.returncode == 0, lint.stdout + lint.stderr
    return samples


def test_the_textfile_is_valid_and_says_what_failed(node: Node) -> None:
    node.smi_file("remap.txt", "00000000:00:06.0, 0, 512, No, Yes\n").set(CHECK_SHARED=1)
    before = time.time()
    node.run("--check")
    samples = check_exposition(node.prom_file())
    assert samples.pop("clusterforge_health_ok") == "0"
    assert samples.pop('clusterforge_health_failure{code="gpu-remap",action="person"}') == "1"
    assert samples.pop('clusterforge_health_failure{code="shared-mount",action="person"}') == "1"
    assert before - 1 <= int(samples.pop("clusterforge_health_last_run_timestamp_seconds")) <= time.time() + 1
    assert 0 < float(samples.pop('clusterforge_health_duration_seconds{mode="check"}')) < 30
    assert not samples
    assert (node.prom / "clusterforge_health.prom").stat().st_mode & 0o777 == 0o644
    node.smi_file("remap.txt", "00000000:00:06.0, 0, 0, No, No\n").set(CHECK_SHARED=0)
    node.run()
    samples = check_exposition(node.prom_file())
    assert samples["clusterforge_health_ok"] == "1"
    assert 'clusterforge_health_duration_seconds{mode="periodic"}' in samples
    assert not [name for name in samples if name.startswith("clusterforge_health_failure")]


def test_the_textfile_is_replaced_whole(node: Node) -> None:
    """Written beside, under a name the textfile collector ignores, then renamed over the old one."""
    spy = node.tmp / "spy"
    spy.mkdir()
    _script(spy / "mv", RECORD + 'exec /bin/mv "$@"\n')
    (node.prom / "clusterforge_health.prom").write_text("old\n")
    node.run("--check", extra_path=spy)
    [argv] = node.calls("mv")
    assert argv[0] == "-f" and argv[2] == str(node.prom / "clusterforge_health.prom")
    temporary = Path(argv[1])
    assert temporary.parent == node.prom and temporary.name.startswith(".") and not temporary.name.endswith(".prom")
    assert sorted(p.name for p in node.prom.iterdir()) == ["clusterforge_health.prom"]
    check_exposition(node.prom_file())


def test_no_textfile_directory_no_textfile_no_error(node: Node) -> None:
    node.set(TEXTFILE_DIR=node.tmp / "absent")
    result = node.run("--check")
    assert result.returncode == 0 and result.stderr == ""
    assert not (node.tmp / "absent").exists()


# --- DCGM -------------------------------------------------------------------------------------------------------

DCGM_FAIL = """Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 4.2.3                                          |
|-----  Deployment  --------+------------------------------------------------|
| Software                  | Fail                                           |
| Warning                   | GPU 0: Persistence mode for GPU 0 is disabled  |
+---------------------------+------------------------------------------------+
"""


def fake_dcgmi(node: Node, output: str, rc: int) -> Path:
    folder = node.tmp / "dcgm-bin"
    folder.mkdir(exist_ok=True)
    (node.tmp / "dcgmi.out").write_text(output)
    _script(folder / "dcgmi", RECORD + f'cat "$CF_FAKE/dcgmi.out"\nexit {rc}\n')
    return folder


def diag(node: Node, *args: str, extra_path: Path | None = None) -> tuple[subprocess.CompletedProcess[str], Any]:
    result = node.run("--diag", *args, extra_path=extra_path)
    out = result.stdout.splitlines()
    assert len(out) == 1, result.stdout
    data = json.loads(out[0])
    assert list(data) == ["node", "level", "status", "seconds", "detail"]
    assert data["node"] == NODE and isinstance(data["seconds"], float) and isinstance(data["level"], int)
    return result, data


def test_diag_is_skipped_without_dcgm(node: Node) -> None:
    result, data = diag(node, "3", "--json")
    assert result.returncode == 0
    assert data["level"] == 3 and data["status"] == "skipped" and "dcgmi not installed" in data["detail"]
    assert not (node.prom / "clusterforge_health.prom").exists()


def test_a_failing_diag_reports_and_drains_only_when_asked(node: Node) -> None:
    dcgm = fake_dcgmi(node, DCGM_FAIL, 226)
    result, data = diag(node, "2", "--json", extra_path=dcgm)
    assert result.returncode == 1
    assert data["status"] == "fail" and data["detail"] == "level 2: Software Fail"
    assert node.calls("dcgmi") == [["diag", "-r", "2"]] and node.calls("scontrol") == []
    result, data = diag(node, "2", "--json", "--drain", extra_path=dcgm)
    assert node.drains() == [reason("dcgm-diag", "person", "level 2: Software Fail")]


def test_a_passing_diag(node: Node) -> None:
    result, data = diag(node, "1", "--json", extra_path=fake_dcgmi(node, "Successfully ran diagnostic\n", 0))
    assert result.returncode == 0 and data["status"] == "pass"


def test_the_periodic_check_runs_dcgm_level_1_and_the_prolog_does_not(node: Node) -> None:
    dcgm = fake_dcgmi(node, DCGM_FAIL, 226)
    node.set(DCGM_DIAG_LEVEL=1)
    assert node.run("--prolog", extra_path=dcgm).returncode == 0
    assert node.calls("dcgmi") == []
    node.run(extra_path=dcgm)
    assert node.calls("dcgmi") == [["diag", "-r", "1"]]
    assert node.drains() == [reason("dcgm-diag", "person", "dcgmi diag -r 1: Software Fail")]
    assert "skip dcgm-diag: dcgmi not installed" in lines(node.run("--check"))


def test_diag_refuses_a_level_it_does_not_know(node: Node) -> None:
    assert node.run("--diag", "5").returncode == 2


# --- the reboot program -----------------------------------------------------------------------------------------

def test_the_reboot_program_logs_why_then_reboots(node: Node) -> None:
    node.slurm_has("reboot^", "clusterforge-remediate: reboot 1/2: clusterforge-health: gpu-xid (reboot): Xid 79")
    _script(node.bin / "sinfo", RECORD + 'cut -d"|" -f2 "$CF_FAKE/sinfo.out"\n')
    for command in ("logger", "systemctl"):
        _script(node.bin / command, RECORD)
    log = node.tmp / "reboot.log"
    env = {k: v for k, v in os.environ.items() if k != "SLURMD_NODENAME"}
    env |= {"PATH": f"{node.bin}{os.pathsep}{os.environ['PATH']}", "CF_FAKE": str(node.tmp),
            "CLUSTERFORGE_REBOOT_LOG": str(log)}
    result = subprocess.run(["bash", str(REBOOT)], capture_output=True, text=True, env=env, timeout=30, check=False)
    assert result.returncode == 0, result.stderr
    why = (f"rebooting {NODE} for scontrol reboot (slurmd's RebootProgram); reason: clusterforge-remediate: reboot "
           "1/2: clusterforge-health: gpu-xid (reboot): Xid 79")
    assert result.stdout.splitlines() == [why]
    assert node.calls("logger") == [["-t", "clusterforge-reboot", "--", why]]
    assert log.read_text().endswith(why + "\n")
    assert node.calls("systemctl") == [["reboot"]]


@pytest.mark.skipif(not shutil.which("shellcheck") and not os.environ.get("CI"),
                    reason="shellcheck is not installed (CI installs it, and runs this)")
def test_the_scripts_pass_shellcheck() -> None:
    checks = sorted(str(path) for path in (SCRIPT.parent / "clusterforge-health.d").glob("*.sh"))
    assert len(checks) >= 10  # one file per check
    result = subprocess.run(["shellcheck", str(SCRIPT), *checks, str(REBOOT)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stdout



# --- health.conf from the inventory -----------------------------------------------------------------------------

PROFILES: dict[str, dict[str, Any]] = {
    "dgx-h100": {"gpu_count": 8, "gpu_model": "H100-SXM5", "fabric_kind": "infiniband", "infiniband_enabled": True,
                 "fabric_nics": 8, "lustre_client_enabled": True, "lustre_client_mount": "/lustre",
                 "common_shared_enabled": True, "common_shared_mount": "/home"},
    "gb200-tray": {"gpu_count": 4, "gpu_model": "GB200", "fabric_kind": "infiniband", "infiniband_enabled": True,
                   "fabric_nics": 4},
    "b200-roce": {"gpu_count": 8, "gpu_model": "B200", "fabric_kind": "roce", "infiniband_enabled": True,
                  "fabric_nics": 8},
    "a100": {"gpu_count": 8, "gpu_model": "A100-SXM4"},
    "h100-pcie": {"gpu_count": 1, "gpu_model": "H100"},
    "h100-nvl": {"gpu_count": 4, "gpu_model": "H100-NVL"},
    "mi300x": {"gpu_count": 8, "gpu_model": "MI300X", "gpu_vendor": "amd"},
    # the lab's compute node: no GPU, the Xid scan on a file, no Lustre, /shared a podman volume
    "lab": {"gpu_count": 0, "gpu_model": None, "fabric_kind": "infiniband", "infiniband_enabled": True,
            "fabric_nics": 1, "lustre_client_enabled": True, "lustre_client_mount": "/lustre",
            "common_shared_enabled": True, "common_shared_mount": "/shared", "health_check_nccl": True,
            "health_check_infiniband": False, "health_check_efa": False, "health_check_lustre": False,
            "health_check_xid": "{{ inventory_hostname in groups['slurm_compute'] | default([]) }}",
            "health_kernel_log_file": "/run/clusterforge-lab/kmsg"},
}
# (CHECK_GPUS, CHECK_XID, CHECK_FABRIC, CHECK_NVLINK, CHECK_INFINIBAND, IB_LINK_LAYER, CHECK_LUSTRE, CHECK_SHARED)
EXPECTED = {
    "dgx-h100": ("1", "1", "1", "1", "1", "InfiniBand", "1", "1"),
    "gb200-tray": ("1", "1", "1", "1", "1", "InfiniBand", "0", "0"),
    "b200-roce": ("1", "1", "1", "1", "1", "Ethernet", "0", "0"),
    "a100": ("1", "1", "0", "0", "0", "InfiniBand", "0", "0"),
    "h100-pcie": ("1", "1", "0", "0", "0", "InfiniBand", "0", "0"),
    "h100-nvl": ("1", "1", "0", "0", "0", "InfiniBand", "0", "0"),
    "mi300x": ("0", "0", "0", "0", "0", "InfiniBand", "0", "0"),
    "lab": ("0", "1", "0", "0", "0", "InfiniBand", "0", "1"),
}


def test_health_conf_follows_the_inventory(tmp_path: Path) -> None:
    """The role's defaults and template, rendered by Ansible for each kind of node; the lab's conf runs clean."""
    role = ROOT / "roles" / "health"
    inventory = {"all": {"children": {"slurm_compute": {"hosts": {
        name: {**{k: v for k, v in profile.items() if v is not None}, "ansible_connection": "local",
               "ansible_python_interpreter": sys.executable}
        for name, profile in PROFILES.items()}}}}}
    (tmp_path / "hosts.yml").write_text(json.dumps(inventory))
    # the role's defaults (at their precedence, below the inventory's), vars and template; only the template task
    copy = tmp_path / "roles" / "health_conf"
    for sub in ("defaults", "vars", "templates"):
        shutil.copytree(role / sub, copy / sub)
    (copy / "tasks").mkdir()
    (copy / "tasks" / "main.yml").write_text(json.dumps([{"name": "health.conf", "ansible.builtin.template": {
        "src": "health.conf.j2", "dest": str(tmp_path) + "/{{ inventory_hostname }}.conf", "mode": "0644"}}]))
    play = [{"hosts": "all", "gather_facts": False, "roles": ["health_conf"]}]
    (tmp_path / "play.yml").write_text(json.dumps(play))
    home = tmp_path / "ansible-home"
    env = {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
           "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(home / "facts"),
           "ANSIBLE_ROLES_PATH": str(tmp_path / "roles"), "ANSIBLE_NOCOLOR": "1"}
    result = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(tmp_path / "hosts.yml"),
                             str(tmp_path / "play.yml")], capture_output=True, text=True, env=env, timeout=300,
                            check=False, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    keys = ("CHECK_GPUS", "CHECK_XID", "CHECK_FABRIC", "CHECK_NVLINK", "CHECK_INFINIBAND", "IB_LINK_LAYER",
            "CHECK_LUSTRE", "CHECK_SHARED")
    for name, expected in EXPECTED.items():
        conf = dict(line.split("=", 1) for line in (tmp_path / f"{name}.conf").read_text().splitlines()
                    if "=" in line and not line.startswith("#"))
        assert tuple(conf[key] for key in keys) == expected, (name, conf)
        assert conf["DCGM_DIAG_LEVEL"] == "1" and conf["REASON_PREFIX"] == "clusterforge-health:"
        # the clock and PCIe checks on every GPU node, through amd-smi on AMD's
        speed = ("1", "1", "1" if name == "mi300x" else "0") if name != "lab" else ("0", "0", "0")
        assert (conf["CHECK_GPU_CLOCKS"], conf["CHECK_PCIE"], conf["CHECK_AMD_GPUS"]) == speed, name
        assert conf["PERF_PROGRAM"] == "/usr/local/sbin/clusterforge-gpu-perf"
        assert conf["PERF_CHECKSUM"] == "6afbad815982bd58"
        assert (conf["PERF_TIMEOUT"], conf["PERF_MIN_GEMM_TFLOPS"]) == ("120", "0.0")
    lab = (tmp_path / "lab.conf").read_text()
    assert "KERNEL_LOG_FILE=/run/clusterforge-lab/kmsg\n" in lab and "SHARED_MOUNT=/shared\n" in lab
    assert "DISK_PATHS='/ /tmp'\n" in lab and "CHECK_NCCL=1\n" in lab
    # the lab's conf, with its paths pointed here, runs clean and catches the drill's Xid
    (tmp_path / "lab-node").mkdir()
    node = Node(tmp_path / "lab-node")
    for line in lab.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            node.conf[key] = subprocess.run(["bash", "-c", f"printf %s {value}"], capture_output=True, text=True,
                                            check=True).stdout
    node.set(KERNEL_LOG_FILE=node.kmsg, CHECK_NCCL=0, DISK_PATHS=str(node.tmp), TEXTFILE_DIR=node.prom)
    (node.tmp / "mounts").write_text("/shared any\n")
    checked = lines(node.run("--check"))
    assert checked[:2] == ["ok   gpu-xid: no Xid that needs a reset or reboot this boot",
                           "ok   shared-mount: /shared mounted and answering"]
    assert re.fullmatch(rf"ok   disk: {re.escape(str(node.tmp))} \d+% free", checked[2])
    assert checked[3:] == ["skip dcgm-diag: dcgmi not installed"]  # no DCGM in the lab
    node.kmsg.write_text(XID_79 + "\n")
    node.run()
    assert node.drains() == [reason("gpu-xid", "reboot", "Xid 79 on 0000:9a:00: GPU has fallen off the bus")]
