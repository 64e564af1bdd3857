"""`lab up --metal`: two libvirt/QEMU servers with no disk, behind BMCs (sushy-tools' libvirt driver for Redfish,
VirtualBMC for IPMI), boot the baked image over the network from the controller's provisioning service (dnsmasq,
iPXE, nginx: roles/provisioning) and join SLURM by themselves; SLURM powers them through the on-prem power-save
provider. One metal lab serves every test here (a boot under software emulation takes minutes), in the order a
site meets them: the first job on both, one server powered off through its BMC by reconcile after its slurmd died
under a job, the other powered down idle, then both powered on again through their BMCs for one job (a second
emulated boot of each). benchmarks/metal_boot.py runs the same lab and records each boot's milestones and bytes."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator

import pytest
import yaml

from tests.conftest import ROOT
from tests.lab.conftest import CHECKOUT, Lab, bring_up, clusterforge

NAME = "cf-metal"
SERVERS = ("metal-0001", "metal-0002")


def _metal_host() -> None:
    from clusterforge.lab.metal import virt
    from clusterforge.netboot import initramfs

    try:
        virt.require()
    except Exception as problem:  # the reason is shown, whatever it is
        import os

        message = f"the metal lab needs libvirt and QEMU (scripts/metal-host-setup): {problem}"
        if os.environ.get("CLUSTERFORGE_REQUIRE_LAB") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    assert initramfs.is_static(initramfs.BUSYBOX)


@pytest.fixture(scope="module")
def lab(release: tuple[str, ...]) -> Iterator[Lab]:
    """The metal lab, brought up by the installed release (tests/lab/conftest.py's `release`: the wheel this
    checkout builds, run from outside it), as a site runs `clusterforge lab up --metal`."""
    _metal_host()
    from clusterforge.lab.metal.up import JOIN_S

    # the lab's own bound on the first job (power-on to both servers in SLURM), and the controller and images before
    yield from bring_up(NAME, "--metal", program=release, timeout=JOIN_S + 900)


def paths():  # type: ignore[no-untyped-def]
    from clusterforge.lab.paths import LabPaths

    return LabPaths.of(NAME)


def sinfo(lab: Lab) -> dict[str, str]:
    """Each server's SLURM state (`idle`, `idle~` powered down, `idle#` powering up, `down*`, ...)."""
    out = lab.sh("ctl-0001", "sinfo -h -N -o '%N %t' -p metal")
    return dict(line.split() for line in out.splitlines())


def domstate(node: str) -> str:
    return subprocess.run(["virsh", "--connect", "qemu:///system", "domstate", f"{NAME}-{node}"],
                          capture_output=True, text=True, check=False).stdout.strip()


def test_up_ran_from_the_installed_release(lab: Lab) -> None:
    assert lab.program != CHECKOUT and not lab.program[0].startswith(str(ROOT)), lab.program


def test_both_servers_booted_the_image_from_the_network_and_ran_the_first_job(lab: Lab) -> None:
    out = lab.up_output
    lines = out.splitlines()
    done = next(i for i, line in enumerate(lines) if line.startswith("metal lab "))
    assert sorted(line.strip() for line in lines[done - 2:done]) == list(SERVERS), out  # srun -N2 hostname
    times = json.loads((paths().root / "metal" / "boot-times.json").read_text())
    for node in SERVERS:
        seen = times["servers"][node]
        # the firmware's lease (the provisioning server's log), then the kernel, the image, the boot unit, in order
        assert seen["dhcp"] < seen["kernel"] < seen["image"] < seen["boot_unit"] < times["job_seconds"], seen
    # each one fetched the image and its own overlay from the controller's nginx, and no other node's
    log = lab.sh("ctl-0001", "cat /var/log/nginx/access.log")
    for node, address in (("metal-0001", "10.213.0.33"), ("metal-0002", "10.213.0.34")):
        assert re.search(rf"^{re.escape(address)} .*GET /netboot/image.sqfs HTTP/1.1\" 200 ", log, re.M), log
        assert re.search(rf"^{re.escape(address)} .*GET /overlays/node/{node}.tar HTTP/1.1\" 200 ", log, re.M)


def test_the_dhcp_reservations_hold_the_macs_the_bmcs_reported(lab: Lab) -> None:
    """`power inventory` read each server's NIC through Redfish EthernetInterfaces; `render --macs` bound it to
    the address plan's address; libvirt's definition is the truth they must match."""
    macs = yaml.safe_load((paths().root / "metal" / "macs.yaml").read_text())["macs"]
    reservations = lab.sh("ctl-0001", "cat /srv/clusterforge-boot/dhcp-hosts")
    for node, address in (("metal-0001", "10.213.0.33"), ("metal-0002", "10.213.0.34")):
        listed = subprocess.run(["virsh", "--connect", "qemu:///system", "domiflist", f"{NAME}-{node}"],
                                capture_output=True, text=True, check=True).stdout
        assert macs[node][0] in listed
        assert f"{macs[node][0]},{address},{node}" in reservations.splitlines()


def powered(status_stdout: str) -> dict[str, str]:
    """Each server's power as `clusterforge power status --format json` read it from its BMC."""
    return {name: row["power"] for name, row in json.loads(status_stdout)["nodes"].items()}


def power_status(lab: Lab, over: str = "redfish") -> dict[str, str]:
    """What an operator's `clusterforge power status` (the lab's own program) reads from the BMCs: over Redfish
    (sushy-tools), or over IPMI (VirtualBMC: `power/bmc/ipmi/`)."""
    bmcs = paths().root / "power" / "bmc"
    if over == "ipmi":
        bmcs = bmcs / "ipmi"
    status = clusterforge("power", "status", ",".join(SERVERS), "--bmcs", str(bmcs / "bmcs.yaml"),
                          "--credentials", str(bmcs / "credentials.yaml"), "--format", "json", check=False,
                          program=lab.program)
    return powered(status.stdout)


def boot_status(lab: Lab, node: str) -> str:
    """The node's boot phase result (`ok SECONDS STEPS` or `failed ...`), "" while it runs."""
    return lab.sh(node, "cat /var/lib/clusterforge/boot.status 2>/dev/null || true", check=False)


def test_a_server_whose_slurmd_died_under_a_job_is_powered_off_through_its_bmc_by_reconcile(lab: Lab) -> None:
    """A server that stops answering is replaced by the on-prem provider's reconcile timer: slurmctld marks it
    not responding, reconcile powers it off through its BMC and hands it back to SLURM powered down (the next job
    that needs it powers it on afresh: benchmarks/metal_boot.py). The BMCs say so to `clusterforge power status`,
    as an operator asks them.

    The server runs a job when its slurmd dies, as a server does when it fails: an idle one would be powered down
    by SLURM's own power saving (SuspendTime) before slurmctld found it silent, and reconcile would have nothing
    to replace. And its boot phase has ended: slurmd registers, and the first job runs, while the boot phase's
    last steps still run under emulation; a slurmd killed then fails a later step, and the boot phase drains the
    server (`boot phase failed: ...`), which reconcile rightly leaves to whoever repairs it."""
    node = "metal-0002"
    job = lab.sh("ctl-0001", f"sbatch --parsable --no-requeue -w {node} --time=20 --wrap 'sleep 1200'")
    lab.wait(f"the job on {node} running", lambda: lab.job(job).get("JobState") == "RUNNING", timeout=300)
    lab.wait(f"{node}'s boot phase ended", lambda: boot_status(lab, node) != "", timeout=900, every=10)
    assert boot_status(lab, node).startswith("ok "), boot_status(lab, node)
    lab.sh(node, "systemctl kill --signal=KILL slurmd")
    lab.wait(f"{node} powered off", lambda: domstate(node) == "shut off", timeout=600)
    # reconcile powers the server off through its BMC first, then hands the node back to slurmctld with its reason
    # (seconds later): until then the reason is slurmctld's own "Not responding"
    lab.wait(f"{node} handed back by reconcile", lambda: "clusterforge-reconcile: replacing: not responding"
             in lab.sh("ctl-0001", f"scontrol show node {node}"), timeout=120)
    assert lab.job(job).get("JobState") != "RUNNING", lab.job(job)
    assert power_status(lab)[node] == "Off"


def test_the_idle_server_is_powered_down_through_its_bmc_by_slurms_power_saving(lab: Lab) -> None:
    """metal-0001 ran the first job and nothing since: after SuspendTime SLURM's SuspendProgram, the on-prem
    provider, powers it off through its BMC and slurmctld holds it powered down (`idle~`), ready to power it on
    for the next job."""
    idle = "metal-0001"
    lab.wait(f"{idle} powered down idle", lambda: sinfo(lab).get(idle) == "idle~" and domstate(idle) == "shut off",
             timeout=420)
    assert power_status(lab) == {"metal-0001": "Off", "metal-0002": "Off"}
    assert power_status(lab, over="ipmi") == {"metal-0001": "Off", "metal-0002": "Off"}


def test_both_servers_come_back_for_a_job_booting_the_image_again(lab: Lab) -> None:
    """The second boot of each, as a site meets it: metal-0002 was power-cycled through its BMC (reconcile powered
    it off after its slurmd died; the resume program powers it on) and metal-0001 was powered down idle. One job
    that asks for both makes SLURM power both on through their BMCs: each boots the image from the network again,
    configures itself and registers anew, and the job runs on both. A server that was shut off can run a job
    only by booting again, so the job's hostnames are the proof, and both serve jobs again afterwards."""
    from clusterforge.lab.metal.up import JOIN_S

    assert {node: domstate(node) for node in SERVERS} == dict.fromkeys(SERVERS, "shut off")
    # slurmctld holds a node that is powering down (`%`) for SuspendTimeout before it may power it on again
    lab.wait("both held powered down", lambda: all(state.endswith("~") for state in sinfo(lab).values())
             and sorted(sinfo(lab)) == list(SERVERS), timeout=300)
    ran = lab.sh("ctl-0001", f"srun -N2 -p metal -w {','.join(SERVERS)} --time=5 hostname", timeout=JOIN_S)
    assert sorted(ran.split()) == list(SERVERS), ran
    assert {node: domstate(node) for node in SERVERS} == dict.fromkeys(SERVERS, "running")
    assert power_status(lab) == dict.fromkeys(SERVERS, "On")
    assert power_status(lab, over="ipmi") == dict.fromkeys(SERVERS, "On")
    # both registered anew and serve jobs: neither down, drained nor powered down any more
    assert set(sinfo(lab).values()) <= {"idle", "mix", "alloc", "comp"}, sinfo(lab)
