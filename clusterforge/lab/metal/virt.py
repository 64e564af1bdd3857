"""The metal lab's servers: libvirt/QEMU virtual machines on the lab's bridge, with no disk, that boot from the
network only (their boot order says so, as a stateless server's firmware does).

Software emulation (`type='qemu'`, TCG): these machines expose no hardware virtualisation, and KVM nested in
them hung after the BIOS (shared reference bare-metal.md). Each server runs one TCG thread for its vCPUs
(data/qemu-one-tcg-thread, its emulator): with one per vCPU a guest kernel patching its own code oopsed in early
boot on a loaded host. Each server has this host's CPU topology, as the lab's `lab-node` catalog entry does
(lab/render.with_host_cpus): slurm.conf's node line is what its slurmd counts, or slurmctld refuses the
registration ("Low socket*core*thread count"). Memory holds the image (its root is in memory, netboot/) and what
the node runs.
libvirtd and virtlogd are started here when the machine's init has not (a container or CI machine without
systemd as PID 1), each under tini as a subreaper, and left running: they serve every lab on the host. The reaper
is why: QEMU daemonizes, so a QEMU that exits (libvirtd's capability probe, a server powered off) is reaped by the
nearest subreaper or PID 1, and an init that does not reap promptly (seen: over a minute) leaves a zombie that
libvirtd takes for a QEMU still running: its capability probe waited on every zombie, failed and started again,
and every libvirt call (virsh, the BMC emulator's) waited behind it, for minutes.
"""

from __future__ import annotations

import grp
import hashlib
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from clusterforge.catalog.models import Cpus
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab.render import host_cpus

URI = "qemu:///system"
MEMORY_MIB = 3072  # the image (~700 MB) and its writable layer in memory, systemd, slurmd and the boot phase
CONSOLE_DIR = Path("/var/log/libvirt/qemu")
DAEMONS = ("virtlogd", "libvirtd")
KVM = Path("/dev/kvm")
DAEMON_LOG = Path("/var/log/libvirt")  # <daemon>.out: what each one started here prints
EMULATOR = "qemu-one-tcg-thread"  # data/'s QEMU wrapper, written where libvirt runs it from
# where: libvirt runs QEMU as its own user (libvirt-qemu), who may not enter root's home or a lab's folder in it
EMULATOR_DIR = Path("/var/lib/libvirt/clusterforge")
PACKAGES = "libvirt-daemon-system qemu-system-x86 ipxe-qemu busybox-static squashfs-tools cpio python3-venv tini"


@dataclass(frozen=True)
class Server:
    """One virtual server: its libvirt name and UUID (the BMC's system id), its NIC's MAC, the bridge it is on."""

    node: str
    domain: str
    uuid: str
    mac: str
    bridge: str

    @property
    def console(self) -> Path:
        return CONSOLE_DIR / f"{self.domain}-console.log"


def mac_of(lab: str, node: str) -> str:
    """A stable MAC in QEMU's own prefix (52:54:00), made from the lab and node: the same server keeps it."""
    digest = hashlib.sha256(f"{lab}/{node}".encode()).digest()
    return "52:54:00:" + ":".join(f"{byte:02x}" for byte in digest[:3])


def virsh(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(["virsh", "--connect", URI, "--quiet", *args], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ClusterforgeError(Problem(f"libvirtd did not answer `virsh {args[0]}` within {timeout:.0f} s", args[-1],
                                        hint=f"`virsh --connect {URI} version` answers at once when libvirtd is well; "
                                             f"its log: {DAEMON_LOG}/libvirtd.log")) from None
    if check and proc.returncode != 0:
        raise ClusterforgeError(Problem(f"virsh {args[0]} failed: {(proc.stderr or proc.stdout).strip()[-300:]}",
                                        args[-1]))
    return proc


def kvm_device_problem(device: Path) -> str | None:
    """What is wrong with KVM's device for libvirt, or None. libvirtd probes QEMU's capabilities as root and then
    asks whether QEMU's user (group kvm) could open the device: where it cannot (a root-only /dev/kvm, left so on a
    machine without udev), every later call finds the probe outdated and probes again, and libvirt calls (a define,
    the BMC emulator's requests) waited minutes behind each other. No device at all is fine: no KVM to probe."""
    try:
        st = device.stat()
    except FileNotFoundError:
        return None
    try:
        kvm_gid = grp.getgrnam("kvm").gr_gid
    except KeyError:
        return None  # no kvm group: libvirt's QEMU user cannot be in it, and nothing here can mend that
    if st.st_mode & 0o006 == 0o006 or (st.st_gid == kvm_gid and st.st_mode & 0o060 == 0o060):
        return None
    return (f"{device} is not open to group kvm (mode {stat.filemode(st.st_mode)}): libvirtd would probe QEMU again "
            "on every call and the metal lab's servers and BMCs would wait minutes on it")


def require() -> None:
    """libvirt's client and QEMU are installed, and libvirtd answers (started here when nothing started it)."""
    missing = [p for p in ("virsh", "libvirtd", "virtlogd", "qemu-system-x86_64", "tini") if shutil.which(p) is None]
    if missing:
        raise ClusterforgeError(Problem(f"the metal lab needs {', '.join(missing)}", "--metal",
                                        hint=f"scripts/metal-host-setup (Debian: {PACKAGES})"))
    if problem := kvm_device_problem(KVM):
        raise ClusterforgeError(Problem(problem, str(KVM), hint="scripts/metal-host-setup gives it root:kvm 0660, as "
                                                                 "Debian's udev rule does"))
    if virsh("uri", check=False, timeout=10).returncode == 0:
        return
    DAEMON_LOG.mkdir(parents=True, exist_ok=True)
    for daemon in DAEMONS:  # in the foreground, each the child of its own reaper, in a session of its own
        with open(DAEMON_LOG / f"{daemon}.out", "ab") as log:
            subprocess.Popen(["tini", "-s", "--", daemon], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             start_new_session=True)
    deadline = time.monotonic() + 30
    while virsh("uri", check=False, timeout=10).returncode != 0:
        if time.monotonic() > deadline:
            raise ClusterforgeError(Problem("libvirtd did not start", "--metal",
                                            hint="run `libvirtd` in a terminal and read what it prints"))
        time.sleep(0.5)


def emulator(folder: Path = EMULATOR_DIR) -> Path:
    """The servers' QEMU (one TCG thread each) as a program in `folder`, open to libvirt's QEMU user; written only
    when its text changed, since libvirt probes an emulator again whenever its file does."""
    from clusterforge.files.atomic import write_bytes

    text = (resources.files("clusterforge.lab.metal") / "data" / EMULATOR).read_bytes()
    program = folder / EMULATOR
    if not program.is_file() or program.read_bytes() != text:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        write_bytes(program, text, mode=0o755)
    return program


def domain_xml(server: Server, emulator: Path, memory_mib: int = MEMORY_MIB) -> str:
    """The server as libvirt defines it: TCG through `emulator` (one thread), no disk, one virtio NIC on the lab's
    bridge, boot from the network, its serial console logged."""
    console = quoteattr(str(server.console))
    cpus = host_cpus() or Cpus(sockets=1, cores_per_socket=1, threads_per_core=1)
    vcpus = cpus.sockets * cpus.cores_per_socket * cpus.threads_per_core
    topology = f"sockets='{cpus.sockets}' dies='1' cores='{cpus.cores_per_socket}' threads='{cpus.threads_per_core}'"
    return f"""<domain type='qemu'>
  <name>{server.domain}</name>
  <uuid>{server.uuid}</uuid>
  <memory unit='MiB'>{memory_mib}</memory>
  <vcpu>{vcpus}</vcpu>
  <cpu><topology {topology}/></cpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <boot dev='network'/>
  </os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{escape(str(emulator))}</emulator>
    <interface type='bridge'>
      <source bridge={quoteattr(server.bridge)}/>
      <mac address='{server.mac}'/>
      <model type='virtio'/>
    </interface>
    <serial type='pty'>
      <log file={console} append='off'/>
      <target port='0'/>
    </serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <memballoon model='none'/>
  </devices>
</domain>
"""


def define(server: Server, folder: Path, program: Path) -> None:
    """Define the server in libvirt, run by `program` (`emulator`'s), again when it was: its definition is this
    lab's."""
    undefine(server)
    folder.mkdir(parents=True, exist_ok=True)
    xml = folder / f"{server.domain}.xml"
    xml.write_text(domain_xml(server, program), encoding="utf-8")
    virsh("define", str(xml))


def undefine(server: Server) -> bool:
    """Power the server off and remove its definition; whether it existed."""
    if virsh("domstate", server.domain, check=False, timeout=30).returncode != 0:
        return False
    virsh("destroy", server.domain, check=False, timeout=60)
    virsh("undefine", server.domain, check=False, timeout=60)
    return True


def state(server: Server, reason: bool = False) -> str:
    """libvirt's word for the server's state ("running", "shut off"), with its reason when asked ("shut off
    (crashed)", "running (booted)"); "" when it is not defined."""
    proc = virsh("domstate", *(("--reason",) if reason else ()), server.domain, check=False, timeout=30)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def state_and_reason(server: Server) -> str:
    """`state` with libvirt's reason: what a wait on a server shows when the server stopped."""
    return state(server, reason=True)


def qemu_log(server: Server) -> Path:
    """QEMU's own log of the server (its command line, and why it exited when it did)."""
    return CONSOLE_DIR / f"{server.domain}.log"
