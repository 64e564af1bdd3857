"""The provisioning role's network boot service, run for real: its dnsmasq configuration and the rendered
reservations served by Debian's dnsmasq in a network namespace, and a DHCP client (busybox udhcpc) in another,
joined by a veth pair, so nothing leaves this machine. The node's MAC gets the address the blueprint's plan gave
it, the iPXE program for its firmware and the gateway; a MAC the render does not know gets nothing; the boot
program comes over TFTP byte for byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

SERVER, NETWORK, GATEWAY = "10.1.0.2", "10.1.0.0/22", "10.1.0.1"
NETWORKS = {"provisioning": {"cidr": NETWORK, "gateway": GATEWAY}, "management": {"cidr": "10.2.0.0/22"}}
MAC = "52:54:00:00:01:01"  # gpu-0001's boot NIC in the macs file below: 10.1.0.17 in the plan
TOOLS = ("dnsmasq", "busybox", "ip", "nginx")
IPXE_USER_CLASS = "0x4d:69505845"  # DHCP option 77, the user class iPXE sends: "iPXE"


def _tools_or_skip() -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None] + (
        [] if Path("/usr/lib/ipxe/undionly.kpxe").is_file() else ["ipxe"])
    if missing or os.geteuid() != 0:
        why = (f"needs root and {', '.join(missing) or 'network namespaces'} (.ci/run installs dnsmasq-base, "
               "busybox-static, ipxe, nginx-light)")
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def run(*argv: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=timeout)


@pytest.fixture
def served(tmp_path: Path, cli, onprem_data: dict) -> Iterator[dict]:
    """The role applied (nothing installed, no service started), then its dnsmasq and nginx running in a namespace
    on the server's end of a veth pair; yields what a client needs."""
    _tools_or_skip()
    data = {**onprem_data, "site": {**onprem_data["site"], "networks": NETWORKS}}
    blueprint = tmp_path / "cluster.yaml"
    blueprint.write_text(yaml.safe_dump(data, sort_keys=False))
    macs = tmp_path / "macs.yaml"
    macs.write_text(f"macs:\n  gpu-0001: ['{MAC}']\n  gpu-0002: ['52:54:00:00:02:01']\n")
    assert cli("render", blueprint, "-o", tmp_path / "out", "--macs", macs).exit_code == 0
    tag = f"{os.getpid() % 100000}"
    server_ns, client_ns, server_if, client_if = f"cfps{tag}", f"cfpc{tag}", f"cfs{tag}", f"cfc{tag}"
    root = tmp_path / "srv"
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                     "roles": [{"role": "provisioning"}]}]))
    extra = {"provisioning_install": False, "provisioning_start_service": False, "provisioning_root": str(root),
             "provisioning_dnsmasq_conf": str(tmp_path / "dnsmasq.conf"),
             "provisioning_nginx_conf": str(tmp_path / "nginx.conf"), "provisioning_render_dir": str(tmp_path / "out"),
             "provisioning_interface": server_if, "provisioning_server_address": SERVER,
             "provisioning_network": NETWORK, "provisioning_gateway": GATEWAY,
             "ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    home = tmp_path / "ansible-home"
    env = {**os.environ, "ANSIBLE_HOME": str(home), "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
           "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(ROOT / "roles"),
           "ANSIBLE_NOCOLOR": "1"}
    applied = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", str(play),
                              "-e", json.dumps(extra)], capture_output=True, text=True, env=env, timeout=300)
    assert applied.returncode == 0, applied.stdout[-3000:] + applied.stderr[-2000:]
    dnsmasq = nginx = None
    try:
        run("ip", "netns", "add", server_ns)
        run("ip", "netns", "add", client_ns)
        run("ip", "link", "add", server_if, "netns", server_ns, "type", "veth", "peer", "name", client_if, "netns",
            client_ns)
        run("ip", "-n", server_ns, "addr", "add", f"{SERVER}/22", "dev", server_if)
        for namespace, interface in ((server_ns, server_if), (client_ns, client_if)):
            run("ip", "-n", namespace, "link", "set", "lo", "up")
            run("ip", "-n", namespace, "link", "set", interface, "up")
        # as root: the test's folders are private to root, and tftp-secure serves files owned by dnsmasq's user
        dnsmasq = subprocess.Popen(["ip", "netns", "exec", server_ns, "dnsmasq", "--keep-in-foreground",
                                    f"--conf-file={tmp_path / 'dnsmasq.conf'}", "--user=root", "--group=root",
                                    f"--pid-file={tmp_path / 'dnsmasq.pid'}",
                                    f"--dhcp-leasefile={tmp_path / 'leases'}", "--log-dhcp",
                                    f"--log-facility={tmp_path / 'dnsmasq.log'}"])
        deadline = time.monotonic() + 20  # its pid file is written once its sockets are bound
        while not (tmp_path / "dnsmasq.pid").exists() and dnsmasq.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        log = tmp_path / "dnsmasq.log"
        assert dnsmasq.poll() is None and (tmp_path / "dnsmasq.pid").exists(), log.read_text() if log.exists() else ""
        # nginx with the role's server block, as root (the test's folders are private to root), in the foreground
        main = tmp_path / "nginx-main.conf"
        main.write_text(f"user root;\nworker_processes 1;\nerror_log {tmp_path / 'nginx-error.log'};\n"
                        f"pid {tmp_path / 'nginx.pid'};\nevents {{}}\n"
                        f"http {{ access_log off; include {tmp_path / 'nginx.conf'}; }}\n")
        nginx = subprocess.Popen(["ip", "netns", "exec", server_ns, "nginx", "-p", str(tmp_path), "-c", str(main),
                                  "-g", "daemon off;"])
        deadline = time.monotonic() + 20
        while not (tmp_path / "nginx.pid").exists() and nginx.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert nginx.poll() is None, (tmp_path / "nginx-error.log").read_text()
        yield {"tmp": tmp_path, "root": root, "client_ns": client_ns, "client_if": client_if,
               "log": tmp_path / "dnsmasq.log"}
    finally:
        for daemon in (dnsmasq, nginx):
            if daemon is not None:
                daemon.terminate()
                daemon.wait(10)
        for namespace in (server_ns, client_ns):
            run("ip", "netns", "del", namespace, check=False)


def lease(served: dict, mac: str, *options: str) -> dict[str, str] | None:
    """What udhcpc is offered for `mac` (its `bound` event's variables), or None when no server answers;
    `options` are sent as udhcpc's -x OPT:VALUE."""
    script = served["tmp"] / "udhcpc.sh"
    found = served["tmp"] / f"lease-{mac.replace(':', '')}"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = bound ] && env > {found}\nexit 0\n")
    script.chmod(0o755)
    namespace, interface = served["client_ns"], served["client_if"]
    run("ip", "-n", namespace, "link", "set", interface, "address", mac)
    done = run("ip", "netns", "exec", namespace, "busybox", "udhcpc", "-i", interface, "-n", "-q", "-f", "-t", "3",
               "-T", "1", "-A", "1", "-s", str(script), *(arg for o in options for arg in ("-x", o)), check=False)
    if done.returncode != 0 or not found.exists():
        return None
    return dict(line.split("=", 1) for line in found.read_text().splitlines() if "=" in line)


def test_the_reserved_mac_gets_its_planned_address_the_gateway_and_the_boot_program(served: dict) -> None:
    got = lease(served, MAC)
    assert got is not None, served["log"].read_text()[-2000:]
    assert (got["ip"], got.get("router"), got.get("siaddr")) == ("10.1.0.17", GATEWAY, SERVER)
    assert got.get("boot_file") == "undionly.kpxe"  # BIOS firmware, not iPXE yet: iPXE first
    assert got.get("subnet") == "255.255.252.0"


def test_a_mac_the_render_does_not_know_gets_no_address(served: dict) -> None:
    assert lease(served, "02:00:00:00:00:99") is None
    assert "no address available" in served["log"].read_text() or "ignored" in served["log"].read_text()


def test_the_boot_program_comes_over_tftp_byte_for_byte(served: dict) -> None:
    namespace, interface = served["client_ns"], served["client_if"]
    run("ip", "-n", namespace, "addr", "add", "10.1.0.17/22", "dev", interface)
    fetched = served["tmp"] / "fetched.kpxe"
    run("ip", "netns", "exec", namespace, "busybox", "tftp", "-g", "-r", "undionly.kpxe", "-l", str(fetched), SERVER)
    assert fetched.read_bytes() == Path("/usr/lib/ipxe/undionly.kpxe").read_bytes()


def test_the_boot_script_names_the_servers_kernel_and_the_node(served: dict) -> None:
    script = (served["root"] / "http" / "boot.ipxe").read_text()
    assert script.startswith("#!ipxe\n")
    assert f"set base http://{SERVER}:80\n" in script
    assert "kernel ${base}/vmlinuz initrd=initrd.img console=ttyS0 clusterforge.node=${hostname}" in script
    assert "clusterforge.image=${base}/image.sqfs clusterforge.overlays=${base}/overlays" in script


def test_ipxe_is_told_the_boot_scripts_url_and_fetches_it_and_the_kernel_over_http(served: dict) -> None:
    """The second DHCP exchange of a network boot: iPXE (user class "iPXE") is given the boot script's URL, and
    nginx serves the script and the kernel the image pipeline put in the HTTP root."""
    got = lease(served, MAC, IPXE_USER_CLASS)
    assert got is not None and got.get("boot_file") == f"http://{SERVER}:80/boot.ipxe", got
    kernel = served["root"] / "http" / "vmlinuz"
    kernel.write_bytes(os.urandom(1 << 20))
    namespace, interface = served["client_ns"], served["client_if"]
    run("ip", "-n", namespace, "addr", "add", "10.1.0.17/22", "dev", interface)
    for name in ("boot.ipxe", "vmlinuz"):
        fetched = served["tmp"] / f"http-{name}"
        run("ip", "netns", "exec", namespace, "busybox", "wget", "-q", "-O", str(fetched),
            f"http://{SERVER}:80/{name}")
        assert fetched.read_bytes() == (served["root"] / "http" / name).read_bytes()
    missing = run("ip", "netns", "exec", namespace, "busybox", "wget", "-q", "-O", "/dev/null",
                  f"http://{SERVER}:80/../dnsmasq.conf", check=False)
    assert missing.returncode != 0  # nothing outside the HTTP root


def test_a_nodes_own_overlay_is_served_to_its_reserved_address_alone(served: dict) -> None:
    """A node's overlay carries its secrets: gpu-0001's address reads gpu-0001's, not gpu-0002's; the system overlay
    is everyone's."""
    overlays = served["root"] / "http" / "overlays"
    (overlays / "node").mkdir(parents=True)
    for name in ("system", "node/gpu-0001", "node/gpu-0002"):
        (overlays / f"{name}.tar").write_bytes(name.encode())
    namespace, interface = served["client_ns"], served["client_if"]
    run("ip", "-n", namespace, "addr", "add", "10.1.0.17/22", "dev", interface)  # gpu-0001's reservation

    def fetch(name: str) -> bytes | None:
        fetched = served["tmp"] / "overlay-fetched"
        fetched.unlink(missing_ok=True)
        done = run("ip", "netns", "exec", namespace, "busybox", "wget", "-q", "-O", str(fetched),
                   f"http://{SERVER}:80/overlays/{name}.tar", check=False)
        return fetched.read_bytes() if done.returncode == 0 else None

    assert fetch("system") == b"system"
    assert fetch("node/gpu-0001") == b"node/gpu-0001"
    assert fetch("node/gpu-0002") is None
    assert fetch("node/gpu-9999") is None  # a name the render does not know: refused too
