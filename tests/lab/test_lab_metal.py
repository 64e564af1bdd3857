"""`lab up --metal`: two libvirt/QEMU servers with no disk, behind BMCs (sushy-tools' libvirt driver), boot the baked
image over the network from the controller's provisioning service (dnsmasq, iPXE, nginx: roles/provisioning) and
join SLURM by themselves; SLURM powers them through the on-prem power-save provider. One metal lab serves every
test here (a boot under software emulation takes minutes), in the order a site meets them: the first job on both,
one server power-cycled through its BMC after its slurmd died, the other powered down idle and back for a job."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator

import pytest
import yaml

from tests.lab.conftest import Lab, bring_up, clusterforge

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
def lab() -> Iterator[Lab]:
    _metal_host()
    yield from bring_up(NAME, "--metal")


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


def test_both_servers_booted_the_image_from_the_network_and_ran_the_first_job(lab: Lab) -> None:
    out = lab.up_output
    lines = out.splitlines()
    job = lines[next(i for i, line in enumerate(lines) if line.startswith("== srun -N2")) + 1:]
    assert sorted(line.strip() for line in job[:2]) == list(SERVERS), out
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


def test_a_server_whose_slurmd_died_is_noticed_and_power_cycled_through_its_bmc(lab: Lab) -> None:
    """The cycle is asked here; the server's boot overlaps the next test's, and the last test sees it back."""
    node = "metal-0002"
    lab.sh(node, "systemctl kill --signal=KILL slurmd")
    lab.wait(f"{node} not responding", lambda: sinfo(lab).get(node, "").endswith("*"), timeout=300)
    bmcs = paths().root / "power" / "bmc"
    cycled = clusterforge("power", "cycle", node, "--boot", "pxe", "--bmcs", str(bmcs / "bmcs.yaml"),
                          "--credentials", str(bmcs / "credentials.yaml"))
    assert node in cycled.stdout, cycled.stdout
    assert domstate(node) == "running"


def test_an_idle_server_is_powered_down_through_its_bmc_and_back_for_a_job(lab: Lab) -> None:
    node = "metal-0001"
    lab.wait(f"{node} powered down idle", lambda: sinfo(lab).get(node) == "idle~" and domstate(node) == "shut off",
             timeout=600)
    assert lab.sh("ctl-0001", f"srun -w {node} --time=5 hostname", timeout=1500) == node
    assert domstate(node) == "running"


def test_the_power_cycled_server_booted_again_and_rejoined_by_itself(lab: Lab) -> None:
    """Back from not responding to idle needs its slurmd to register again (ReturnToService=1); SLURM may have
    powered it down idle since (idle~), which it does only to a node that answered."""
    node = "metal-0002"
    lab.wait(f"{node} back in SLURM after its power cycle",
             lambda: sinfo(lab).get(node, "").rstrip("~%") == "idle", timeout=900)
    assert lab.sh("ctl-0001", f"srun -w {node} --time=5 hostname", timeout=1500) == node
