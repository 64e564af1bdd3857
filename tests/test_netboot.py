"""The stateless boot's parts (clusterforge/netboot): the initramfs (its modules in dependency order, a static
busybox, the init script), the overlays (root-owned, modes kept), and the metal lab's pieces that are plain data
(the servers' libvirt definitions, the BMC emulator's configuration, what a server's overlays carry). The boot
itself runs in the metal lab (tests/lab/test_lab_metal.py)."""

from __future__ import annotations

import ast
import http.server
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.lab.metal import bmcs, boot_service, virt
from clusterforge.lab.nodes import NodeSpec
from clusterforge.lab.selfboot import BOOT, SECRETS, TREE, Given
from clusterforge.netboot import initramfs, overlay
from tests.conftest import ROOT

DATA = ROOT / "clusterforge" / "netboot" / "data"


def modules_dir(tmp_path: Path) -> Path:
    """A kernel's modules folder as depmod writes it: virtio_net needs net_failover, which needs failover;
    squashfs is built in; overlay has no dependency; one module nobody asked for."""
    folder = tmp_path / "6.1.0-test"
    for path in ("kernel/drivers/net/virtio_net.ko.xz", "kernel/drivers/net/net_failover.ko.xz",
                 "kernel/net/core/failover.ko.xz", "kernel/fs/overlayfs/overlay.ko", "kernel/sound/snd.ko.xz"):
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        body = f"module {Path(path).name}".encode()
        (folder / path).write_bytes(lzma.compress(body) if path.endswith(".xz") else body)
    (folder / "modules.dep").write_text(
        "kernel/drivers/net/virtio_net.ko.xz: kernel/drivers/net/net_failover.ko.xz kernel/net/core/failover.ko.xz\n"
        "kernel/drivers/net/net_failover.ko.xz: kernel/net/core/failover.ko.xz\n"
        "kernel/net/core/failover.ko.xz:\nkernel/fs/overlayfs/overlay.ko:\nkernel/sound/snd.ko.xz:\n")
    return folder


def test_modules_load_after_what_they_need_and_only_those_asked_for(tmp_path: Path) -> None:
    order = initramfs.module_order(modules_dir(tmp_path))
    assert order == ["kernel/net/core/failover.ko.xz", "kernel/drivers/net/net_failover.ko.xz",
                     "kernel/drivers/net/virtio_net.ko.xz", "kernel/fs/overlayfs/overlay.ko"]


def test_a_dynamically_linked_program_is_not_static() -> None:
    assert not initramfs.is_static(Path(sys.executable).resolve())
    assert not initramfs.is_static(ROOT / "README.md")


def _need(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if not initramfs.BUSYBOX.is_file() or not initramfs.is_static(initramfs.BUSYBOX):
        missing.append("busybox-static")
    if missing:
        why = f"needs {', '.join(missing)} (scripts/metal-host-setup; .ci/run runs it)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def test_the_initramfs_holds_busybox_the_scripts_and_the_modules_decompressed_in_order(tmp_path: Path) -> None:
    _need("cpio")
    out = tmp_path / "initrd.img"
    size = initramfs.build(modules_dir(tmp_path), out)
    assert size == out.stat().st_size
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    subprocess.run(f"gzip -dc {out} | cpio -idm --quiet", shell=True, cwd=unpacked, check=True)
    assert (unpacked / "init").read_bytes() == (DATA / "init").read_bytes() and os.access(unpacked / "init", os.X_OK)
    assert (unpacked / "bin/busybox").read_bytes() == initramfs.BUSYBOX.read_bytes()
    assert (unpacked / "lib/modules/order").read_text().split() == [
        "failover.ko", "net_failover.ko", "virtio_net.ko", "overlay.ko"]
    assert (unpacked / "lib/modules/virtio_net.ko").read_bytes() == b"module virtio_net.ko.xz"  # decompressed
    assert not (unpacked / "lib/modules/snd.ko").exists()


def test_an_initramfs_without_a_static_busybox_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ClusterforgeError, match="not a static busybox"):
        initramfs.build(modules_dir(tmp_path), tmp_path / "initrd.img", busybox=Path(sys.executable).resolve())


def test_the_init_script_and_its_dhcp_hook_pass_shellcheck() -> None:
    if shutil.which("shellcheck") is None:
        if os.environ.get("CI"):
            pytest.fail("shellcheck is not installed (.ci/run installs it)")
        pytest.skip("shellcheck is not installed")
    done = subprocess.run(["shellcheck", "-x", "-s", "sh", *(str(DATA / script) for script in initramfs.SCRIPTS)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_the_init_refuses_a_node_name_that_is_not_a_host_name() -> None:
    """The name comes from DHCP through iPXE: it becomes /etc/hostname and a URL, so nothing else gets through."""
    script = (DATA / "init").read_text()
    assert 'case "$node" in *[!A-Za-z0-9.-]*) fail' in script
    # and a failed overlay stops the boot: fetched whole, then unpacked
    assert 'fetch "$overlays/$overlay.tar" /run/root/overlay.tar || fail' in script
    assert 'fetch "$image" /run/root/image.sqfs || fail' in script and "\nwget" not in script  # no fetch unbounded


class Stalling(http.server.BaseHTTPRequestHandler):
    """Serves BODY; its first answer sends a little of it, then nothing (a connection that stalled)."""

    BODY = bytes(range(256)) * 400
    answered = 0

    def do_GET(self) -> None:
        type(self).answered += 1
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.BODY)))
        self.end_headers()
        if type(self).answered == 1:
            self.wfile.write(self.BODY[:1000])
            self.wfile.flush()
            time.sleep(8)  # longer than the stall bound the test gives
            return
        self.wfile.write(self.BODY)

    def log_message(self, *args: object) -> None:
        pass


def test_the_initramfs_fetches_again_a_transfer_that_stalled_and_fails_after_its_tries(tmp_path: Path) -> None:
    """busybox's wget has no read timeout: the fetch watches the file grow, kills a stalled transfer and starts
    again; a server that refuses fails after TRIES (the init then says FAILED, and `lab up` stops at once)."""
    _need()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/image.sqfs"
    script = (f'say() {{ echo "said: $*"; }}\nSTALL_S=2 TRIES=2\n. {DATA / "fetch.sh"}\n'
              f'fetch {url} {tmp_path}/image.sqfs && echo fetched\n'
              f'fetch http://127.0.0.1:1/x {tmp_path}/other && echo fetched-other\n')
    try:
        done = subprocess.run([str(initramfs.BUSYBOX), "sh", "-c", script], capture_output=True, text=True,
                              timeout=60)
    finally:
        server.shutdown()
    assert "said: no byte of " + url + " in 2 s (at 1000 bytes): fetching again" in done.stdout, done.stdout
    assert "fetched\n" in done.stdout and (tmp_path / "image.sqfs").read_bytes() == Stalling.BODY
    assert Stalling.answered == 2
    refused = "said: fetch of http://127.0.0.1:1/x failed"
    assert "fetched-other" not in done.stdout and done.stdout.count(refused) == 1, done.stdout  # tried twice


def test_an_overlay_is_owned_by_root_keeps_modes_and_leaves_out_byte_code(tmp_path: Path) -> None:
    tree = tmp_path / "roles" / "munge"
    (tree / "__pycache__").mkdir(parents=True)
    (tree / "__pycache__" / "x.pyc").write_bytes(b"x")
    (tree / "main.yml").write_text("---\n")
    out = tmp_path / "o.tar"
    overlay.write(out, [(tmp_path / "roles", f"{TREE}/roles")], {f"{SECRETS}/munge.key": (b"k" * 16, 0o600)})
    with tarfile.open(out) as archive:
        members = {m.name: m for m in archive.getmembers()}
    assert f"{TREE.lstrip('/')}/roles/munge/main.yml" in members
    assert not any("__pycache__" in name for name in members)
    assert all(m.uid == 0 and m.gid == 0 for m in members.values())
    assert members[f"{SECRETS.lstrip('/')}/munge.key"].mode == 0o600
    assert members["etc"].mode == 0o755 and members["etc"].isdir()


def test_a_servers_overlay_carries_its_name_and_secrets_and_the_system_overlay_the_rest(tmp_path: Path) -> None:
    boot = tmp_path / "boot"
    (boot / "render").mkdir(parents=True)
    (boot / "render" / "hosts").write_text("10.0.0.33 metal-0001\n" * 2000)  # grows with the cluster
    (boot / "vars.yml").write_text("slurm_self_boot: true\n")
    (boot / "node.env").write_text("CLUSTERFORGE_CLUSTER=metal\nCLUSTERFORGE_NODE=$(hostname)\n")
    key, roles = tmp_path / "munge.key", tmp_path / "roles"
    key.write_bytes(b"k" * 1024)
    roles.mkdir()
    (roles / "site.txt").write_text("roles")
    given = Given(("--volume", f"{boot}:{BOOT}:ro", "--volume", f"{key}:{SECRETS}/munge.key:ro",
                   "--volume", f"{roles}:{TREE}/roles:ro"), ())
    folder = boot_service.BootFolder(tmp_path / "overlays", None)  # type: ignore[arg-type]
    sizes = boot_service.write_overlays(folder, given, [NodeSpec("metal-0001", ("slurm_compute",), "10.0.0.33")],
                                        b"ssh-ed25519 AAAA lab\n", lambda _: None)
    assert set(sizes) == {"system", "metal-0001"}
    with tarfile.open(tmp_path / "overlays" / "system.tar") as archive:
        system = set(archive.getnames())
    with tarfile.open(tmp_path / "overlays" / "node" / "metal-0001.tar") as archive:
        own = {m.name: m for m in archive.getmembers()}
        env = archive.extractfile("etc/clusterforge/boot/node.env").read().decode()  # type: ignore[union-attr]
    assert f"{TREE.lstrip('/')}/roles/site.txt" in system
    assert {"etc/clusterforge/boot/render/hosts", "etc/clusterforge/boot/vars.yml"} <= system
    assert not any(name.startswith("etc/clusterforge/secrets") for name in system)  # no secret is everyone's
    assert "etc/clusterforge/boot/node.env" not in system  # nor anyone's name
    assert own["etc/clusterforge/secrets/munge.key"].mode == 0o600
    assert own["root/.ssh/authorized_keys"].mode == 0o600
    assert env.splitlines()[-1] == "CLUSTERFORGE_NODE=metal-0001"
    # what grows with the cluster is fetched once per server from the system overlay, not in each one's own
    assert {name for name, m in own.items() if m.isfile()} == {
        "etc/clusterforge/boot/node.env", "etc/clusterforge/secrets/munge.key", "root/.ssh/authorized_keys"}
    assert sizes["metal-0001"] < 16 * 1024 < 40_000 < sizes["system"]


def test_a_server_has_no_disk_boots_from_the_network_under_emulation_on_the_labs_bridge() -> None:
    server = virt.Server("metal-0001", "lab-metal-0001", "0b0f6f4e-8d1e-5e2c-9c2e-2f6f4b7f1a01",
                         virt.mac_of("lab", "metal-0001"), "podman3")
    domain = ET.fromstring(virt.domain_xml(server, Path("/cache/metal/qemu-one-tcg-thread")))
    assert domain.get("type") == "qemu"
    assert domain.findtext("devices/emulator") == "/cache/metal/qemu-one-tcg-thread"
    assert [b.get("dev") for b in domain.iter("boot")] == ["network"]
    assert not list(domain.iter("disk"))
    nic = domain.find("devices/interface")
    assert nic is not None and nic.get("type") == "bridge"
    assert nic.find("source").get("bridge") == "podman3"  # type: ignore[union-attr]
    assert nic.find("mac").get("address") == server.mac  # type: ignore[union-attr]
    assert domain.find("devices/serial/log").get("file") == str(server.console)  # type: ignore[union-attr]


def test_the_servers_qemu_runs_one_tcg_thread_and_passes_every_other_argument_as_given(tmp_path: Path) -> None:
    """libvirt passes `-accel tcg`; the wrapper makes it `tcg,thread=single` (a thread per vCPU let a guest kernel
    patching its own code oops in early boot), and nothing else it is given changes."""
    fake = tmp_path / "bin" / "qemu-system-x86_64"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nfor a; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    program = virt.emulator(tmp_path / "metal")
    assert os.access(program, os.X_OK)
    given = ["-name", "guest=lab-metal-0001,debug-threads=on", "-accel", "tcg", "-object", '{"a": "b c"}', "tcg"]
    ran = subprocess.run([str(program), *given], capture_output=True, text=True, check=True,
                         env={**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"})
    assert ran.stdout.splitlines() == [*given[:3], "tcg,thread=single", *given[4:]]
    # written once: libvirt probes an emulator again whenever its file changes
    written = program.stat().st_mtime_ns
    time.sleep(0.01)
    assert virt.emulator(tmp_path / "metal") == program and program.stat().st_mtime_ns == written
    if shutil.which("shellcheck"):
        assert subprocess.run(["shellcheck", "-s", "sh", str(program)], capture_output=True).returncode == 0


def test_a_servers_mac_is_stable_and_qemus() -> None:
    mac = virt.mac_of("lab", "metal-0001")
    assert mac == virt.mac_of("lab", "metal-0001") != virt.mac_of("lab", "metal-0002")
    assert mac.startswith("52:54:00:") and len(mac) == 17


def test_libvirtd_is_started_under_a_reaper_and_one_that_does_not_answer_is_said_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started here (no init started it), each daemon runs under `tini -s`: QEMU daemonizes, and a zombie left to an
    init that does not reap kept libvirtd's capability probe, and every libvirt call behind it, waiting."""
    started: list[list[str]] = []
    answers = iter([1, 1, 0])  # not running, then up after the start

    def run(command: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        if "version" in command:
            raise subprocess.TimeoutExpired(command, 10)
        return subprocess.CompletedProcess(command, next(answers), "", "")

    monkeypatch.setattr(virt.shutil, "which", lambda program: f"/usr/bin/{program}")
    monkeypatch.setattr(virt.subprocess, "run", run)
    monkeypatch.setattr(virt.subprocess, "Popen", lambda command, **_: started.append(command))
    monkeypatch.setattr(virt, "DAEMON_LOG", tmp_path)
    monkeypatch.setattr(virt, "KVM", tmp_path / "no-kvm")
    virt.require()
    assert started == [["tini", "-s", "--", "virtlogd"], ["tini", "-s", "--", "libvirtd"]]
    with pytest.raises(ClusterforgeError, match="libvirtd did not answer `virsh version` within 10 s"):
        virt.virsh("version", timeout=10)


def test_lab_down_starts_libvirtd_before_removing_the_servers_it_defined(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """After a reboot, or once the daemons a `lab up` started were killed, nothing answers libvirt's calls: `lab
    down` starts libvirtd first, or the servers would stay defined after the lab folder naming them is gone."""
    from clusterforge.lab.metal import servers
    from clusterforge.lab.paths import LabPaths

    paths = LabPaths("cf-down-test", tmp_path / "cf-down-test")
    (paths.root / "metal" / "domains").mkdir(parents=True)
    (paths.root / "metal" / "domains" / "cf-down-test-metal-0001.xml").write_text("<domain/>")
    calls: list[str] = []
    monkeypatch.setattr(servers.bmcs, "stop", lambda files: False)
    monkeypatch.setattr(virt, "require", lambda: calls.append("require"))
    monkeypatch.setattr(virt, "undefine", lambda server: calls.append(f"undefine {server.domain}") or True)
    monkeypatch.setattr(virt, "CONSOLE_DIR", tmp_path)
    assert servers.down(paths) == ["server cf-down-test-metal-0001"]
    assert calls == ["require", "undefine cf-down-test-metal-0001"]
    (paths.root / "metal" / "domains" / "cf-down-test-metal-0001.xml").unlink()
    calls.clear()
    assert servers.down(paths) == [] and calls == []  # no server: libvirt is not needed, nor asked for


def test_a_kvm_device_only_root_may_open_is_named_before_libvirtd_probes_on_every_call(tmp_path: Path) -> None:
    device = tmp_path / "kvm"
    assert virt.kvm_device_problem(device) is None  # no KVM: nothing to probe
    device.write_bytes(b"")
    device.chmod(0o600)
    assert "is not open to group kvm (mode -rw-------)" in (virt.kvm_device_problem(device) or "")
    device.chmod(0o666)
    assert virt.kvm_device_problem(device) is None


def test_the_bmc_emulator_is_given_libvirt_and_only_the_labs_servers_as_literals(tmp_path: Path) -> None:
    text = bmcs.config("10.213.0.1", 8000, {"metal-0001": "id-1", "metal-0002": "id-2'); import os; ('"},
                       tmp_path / "htpasswd", tmp_path / "state")
    values = {node.targets[0].id: ast.literal_eval(node.value)  # type: ignore[attr-defined]
              for node in ast.parse(text).body if isinstance(node, ast.Assign)}
    assert values["SUSHY_EMULATOR_LIBVIRT_URI"] == "qemu:///system"
    assert values["SUSHY_EMULATOR_ALLOWED_INSTANCES"] == ["id-1", "id-2'); import os; ('"]
    assert values["SUSHY_EMULATOR_LISTEN_IP"] == "10.213.0.1"
    assert all(isinstance(node, ast.Assign) for node in ast.parse(text).body)  # nothing but literals runs


def always_running(server: virt.Server) -> str:
    """libvirt's answer for a server that runs throughout (the unit tier has no libvirtd)."""
    return "running (booted)"


def test_the_metal_lab_reads_each_servers_milestones_and_stops_at_a_failed_boot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.lab.metal import up

    monkeypatch.setattr(virt, "CONSOLE_DIR", tmp_path)
    server = virt.Server("metal-0001", "lab-metal-0001", "id", "52:54:00:00:00:01", "br0")
    server.console.write_text("[    0.000000] Linux version 6.12\nclusterforge-netboot: fetching the image from x\n"
                              "clusterforge-netboot: image and overlays in place\n"
                              "[   30.9] echo[346]: clusterforge-boot: the boot phase starts on metal-0001\n")
    said: list[str] = []
    seen = up.watch([server], time.monotonic(), lambda: True, 10, said.append, state=always_running)
    assert set(seen["metal-0001"]) == {"kernel", "fetch", "image", "boot_unit"}
    server.console.write_text("clusterforge-netboot: FAILED: fetch http://10.213.0.17:80/overlays/node/x.tar\n")
    with pytest.raises(ClusterforgeError, match="metal-0001 did not boot: clusterforge-netboot: FAILED: fetch"):
        up.watch([server], time.monotonic(), lambda: False, 10, said.append, state=always_running)
    # a server that never loads a kernel (a wrong boot order or reservation): named, not waited on for the job
    server.console.write_text("")
    with pytest.raises(ClusterforgeError, match="no kernel started on metal-0001 within 5 s"):
        up.watch([server], time.monotonic() - 6, lambda: False, 600, said.append, no_kernel_s=5, state=always_running)
    # beside one that booted, the silent one is named, and its console is where to look
    other = virt.Server("metal-0002", "lab-metal-0002", "id2", "52:54:00:00:00:02", "br0")
    other.console.write_text("[    0.000000] Linux version 6.12\n")
    with pytest.raises(ClusterforgeError, match="no kernel started on metal-0001 within") as silent:
        up.watch([other, server], time.monotonic() - 6, lambda: False, 600, said.append, no_kernel_s=5,
                 state=always_running)
    assert silent.value.problems[0].file == str(server.console)


def test_a_failed_boot_phase_ends_the_wait_with_its_step_and_error(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.lab.metal import up

    monkeypatch.setattr(virt, "CONSOLE_DIR", tmp_path)
    server = virt.Server("metal-0001", "lab-metal-0001", "id", "52:54:00:00:00:01", "br0")
    server.console.write_text("[    0.000000] Linux version 6.12\nclusterforge-boot: FAILED at munge : Start munge\n"
                              "fatal: [metal-0001]: FAILED! => munge.key is missing\n" + "more\n" * 500)
    with pytest.raises(ClusterforgeError) as failed:
        up.watch([server], time.monotonic(), lambda: False, 10, [].append, state=always_running)
    message = str(failed.value)
    assert "metal-0001 did not boot: clusterforge-boot: FAILED at munge : Start munge" in message
    assert "munge.key is missing" in message and message.count("more") < 100  # the error, bounded


def test_a_server_that_stopped_running_ends_the_wait_with_libvirts_reason_and_qemus_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A QEMU killed (the host's OOM killer) or crashed prints nothing on the console: without asking libvirt,
    the wait would last until slurmctld's ResumeTimeout failed the job, twenty minutes on."""
    from clusterforge.lab.metal import up

    monkeypatch.setattr(virt, "CONSOLE_DIR", tmp_path)
    monkeypatch.setattr(up, "STATE_EVERY_S", 0)
    server = virt.Server("metal-0002", "lab-metal-0002", "id", "52:54:00:00:00:02", "br0")
    server.console.write_text("[    0.000000] Linux version 6.12\nclusterforge-netboot: DHCP on eth0\n"
                              "clusterforge-netboot: fetching the image from http://10.213.0.17/image.sqfs\n")
    virt.qemu_log(server).write_text("char device redirected to /dev/pts/3\n"
                                     "2026-11-29 qemu-system-x86_64: terminating on signal 9 from pid 812\n")
    answers = iter(["shut off (destroyed)", "running (booted)", "running (booted)", "shut off (crashed)"])
    with pytest.raises(ClusterforgeError) as stopped:
        up.watch([server], time.monotonic(), lambda: False, 60, [].append, state=lambda s: next(answers))
    message = str(stopped.value)
    assert "metal-0002 stopped before it joined SLURM: libvirt says it is shut off (crashed)" in message
    assert "metal-0002's last milestone: the image's fetch starts" in message
    assert "fetching the image from http://10.213.0.17/image.sqfs" in message  # where its console stood
    assert "terminating on signal 9" in message  # and why QEMU ended
    # powered off before it ever ran (SLURM has not resumed it yet) is not a failure
    answers = iter(["shut off (destroyed)"] * 3)
    ended = iter([False, False, True])
    up.watch([server], time.monotonic(), lambda: next(ended), 60, [].append, state=lambda s: next(answers))


def test_a_wait_that_ends_without_a_failure_line_shows_where_each_server_stood(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.lab.metal import up

    monkeypatch.setattr(virt, "CONSOLE_DIR", tmp_path)
    server = virt.Server("metal-0002", "lab-metal-0002", "id", "52:54:00:00:00:02", "br0")
    server.console.write_text("noise\n" * 5000 + "[    0.000000] Linux version 6.12\n"
                              "clusterforge-netboot: fetching the image from http://10.213.0.17/image.sqfs\n"
                              "\x1b[2Jcontrol\x07 characters\n")
    with pytest.raises(ClusterforgeError) as late:
        up.watch([server], time.monotonic(), lambda: False, 0, [].append, state=always_running)
    message = str(late.value)
    assert (f"{server.console}: metal-0002's last milestone: the image's fetch starts; its console ends: noise | "
            in message)
    assert "\x1b" not in message and "\x07" not in message and "[2Jcontrol characters" in message
    assert message.count("noise") <= 8  # the end, bounded
    assert "last milestone: none" in up.where_they_stand([server], {})[0].message
    # a kernel that started but an image never mounted: named before the join's bound
    with pytest.raises(ClusterforgeError, match="no image mounted on metal-0002 within 5 s of power-on") as stuck:
        up.watch([server], time.monotonic() - 6, lambda: False, 600, [].append, no_image_s=5, state=always_running)
    assert "fetching the image from http://10.213.0.17/image.sqfs" in str(stuck.value)


def test_a_console_is_read_as_it_grows_and_anew_when_the_server_boots_again(tmp_path: Path) -> None:
    from clusterforge.lab.metal.console import Console

    log = tmp_path / "console.log"
    log.write_text("x" * 10_000 + "clusterforge-boot: the boot ")
    console = Console(log)
    assert "the boot phase starts" not in console.look()
    with log.open("a") as more:
        more.write("phase starts on metal-0001\n")
    text = console.look()
    assert "clusterforge-boot: the boot phase starts on metal-0001" in text  # a marker split across two reads
    assert len(text) < 5_000  # what was read before is not read again
    log.write_text("[    0.000000] Linux version 6.12\n")  # the next boot: libvirt starts the log anew
    assert console.look().startswith("[    0.000000] Linux version")
    assert console.failure(("clusterforge-boot: FAILED",)) is None
    with log.open("a") as more:
        more.write("clusterforge-boot: FAILED at slurm")
    console.look()
    assert console.failure(("clusterforge-boot: FAILED",)) is None  # its line is not complete yet
    with log.open("a") as more:
        more.write(" : Start slurmd\n")
    console.look()
    assert console.failure(("clusterforge-boot: FAILED",)) == "clusterforge-boot: FAILED at slurm : Start slurmd"


def test_a_labs_nodes_take_the_address_plans_addresses(tmp_path: Path) -> None:
    import ipaddress

    from clusterforge.lab.nodes import planned_addresses, specs_for

    (tmp_path / "provisioning").mkdir()
    (tmp_path / "provisioning" / "addresses.txt").write_text("# generated\nctl-0001 10.213.0.17\n")
    planned = planned_addresses(tmp_path)
    assert planned == {"ctl-0001": "10.213.0.17"}
    specs = specs_for({"ctl-0001": ("slurm_controller",), "node-0001": ("slurm_compute",)},
                      ipaddress.IPv4Network("10.213.0.0/24"), planned)
    assert [(s.name, s.ip) for s in specs] == [("ctl-0001", "10.213.0.17"), ("node-0001", "10.213.0.11")]


def test_virtualbmc_is_given_one_ipmi_bmc_per_server_and_its_login_only_in_files_root_reads(tmp_path: Path) -> None:
    """The metal lab's IPMI service (lab/metal/vbmc.py): VirtualBMC's own per-domain files, active, each on its own
    port of the bridge's host address; a BMC document `clusterforge power` loads (protocol ipmi); the login within
    IPMI's limits and never on a command line; and a stale pid file never stops another program."""
    import configparser
    import os

    import yaml

    from clusterforge.bmc import hosts
    from clusterforge.lab.bmc_service import BmcFiles
    from clusterforge.lab.metal import vbmc

    files = BmcFiles(tmp_path / "bmc")
    files.folder.mkdir()
    files.settings.write_text('{"address": "127.0.0.1", "port": 1, "systems": {}}')
    servers = [virt.Server(f"metal-000{i}", f"lab-metal-000{i}", "", "", "") for i in (1, 2)]
    ipmi = vbmc.write(files, servers, *vbmc.ports_for(files, servers))
    document = hosts.load(ipmi.document)
    assert sorted(document) == ["metal-0001", "metal-0002"] and {b.protocol for b in document.values()} == {"ipmi"}
    assert len({b.url for b in document.values()}) == 2
    login = yaml.safe_load(ipmi.credentials.read_text())
    assert len(login["username"].encode()) <= 16 and len(login["password"].encode()) <= 20
    assert ipmi.credentials.stat().st_mode & 0o077 == 0
    for server in servers:
        config = ipmi.domains / server.domain / "config"
        assert config.stat().st_mode & 0o077 == 0
        read = configparser.ConfigParser()
        read.read(config)
        section = read["VirtualBMC"]
        assert section["domain_name"] == server.domain and section["active"] == "True"
        assert section["password"] == login["password"] and section["libvirt_uri"] == virt.URI
        assert document[server.node].url == f"ipmi://127.0.0.1:{section['port']}"
    settings = configparser.ConfigParser()
    settings.read(ipmi.settings)
    assert settings["default"]["config_dir"] == str(ipmi.domains)
    ipmi.pid.write_text(f"{os.getpid()}\n")  # a pid that is not vbmcd's (this test's own)
    assert vbmc.stop(files) is False
