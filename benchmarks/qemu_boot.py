"""Does the node image boot, and how long does it take: the image's own kernel and initramfs in QEMU, from QEMU's
start to the image's boot unit (`clusterforge-boot.service`, the node beginning to configure itself).

`python benchmarks/qemu_boot.py [--blueprint BLUEPRINT | --image TAG] [--accel auto|kvm|tcg]` (root: it reads the
image with podman and writes a file system with its owners):

1. the image: `clusterforge image build BLUEPRINT` (the lab's blueprint by default; nothing is baked when the image
   is up to date, and a bake runs at `nice -n 10`), or an existing bootable image given with `--image`;
2. its root file system exported (`podman export`), given what Warewulf's `clusterforge` overlay gives a node
   (`/etc/clusterforge/boot/node.env`, docs/bare-metal.md section 3: without it the boot unit does not run), and
   written as an ext4 disk image (`mkfs.ext4 -d`); the kernel and initramfs are the image's
   `/boot/vmlinuz-<version>` and `/boot/initrd.img-<version>`, as Warewulf 4.6+ finds them. Kept in `--work`
   under the image's id, so a second run boots at once;
3. `qemu-system-x86_64 -kernel ... -initrd ... -append 'root=/dev/vda console=ttyS0'` with the disk on virtio
   (`snapshot=on`: the disk image is not changed), KVM where /dev/kvm can be opened, else TCG (software
   emulation, about ten times slower); `-nographic -no-reboot`, 2 CPUs and 2 GiB (a 24 GiB 2-core machine runs it
   beside other work). The serial console goes to `--work/.../console.log`, each line with the seconds since QEMU
   started;
4. QEMU is stopped when the boot unit's console line (image/bootable.py BOOT_LINE) appears, and the seconds from
   QEMU's start to each step are printed and written to `result.json` beside the log: the kernel's first line,
   the kernel handing over to the initramfs's init, systemd starting from the image, the boot unit.

The Debian initramfs here mounts a disk; Warewulf's default iPXE boot instead gives the image itself as the
ramdisk root with its wwinit overlay (docs/images.md). Both start the image's kernel and then the image's systemd
with its units; what this boot shows is that the image's kernel, initramfs and units bring a machine up to its
boot unit. Exit 2 when qemu, podman, root or the image is missing; 1 when the boot does not reach the unit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clusterforge.image.bootable import BOOT_LINE  # noqa: E402

QEMU = "qemu-system-x86_64"
LAB_BLUEPRINT = ROOT / "clusterforge/lab/data/blueprint.yaml"
WORK = Path("/var/tmp/clusterforge-qemu-boot")
NODE_ENV = ("CLUSTERFORGE_CLUSTER=qemu\nCLUSTERFORGE_NODE=qemu-0001\nSLURM_CONTROLLER=qemu-ctl\n"
            "CLUSTERFORGE_SHARED=\n")
# what each step looks like on the serial console, in the order they come
STEPS = (
    ("kernel", "the kernel's first line", re.compile(r"Linux version \d")),
    ("init", "the kernel hands over to the initramfs's init", re.compile(r"Run /init as init process")),
    ("systemd", "systemd starts from the image", re.compile(r"systemd\[1\]: systemd \d+|Welcome to .*Debian")),
    ("boot_unit", "the boot unit starts", re.compile(re.escape(BOOT_LINE))),
)
KERNEL_CMDLINE = "console=ttyS0,115200 root=/dev/vda rw panic=-1 net.ifnames=0"


class Missing(Exception):
    """Something the benchmark needs is not here (exit 2)."""


@dataclass(frozen=True)
class Boot:
    kernel: Path
    initrd: Path
    disk: Path
    folder: Path


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, check=True, text=True, capture_output=True)


def image_tag(blueprint: Path) -> str:
    """The bootable image's tag that `image build BLUEPRINT` makes (the first of its images)."""
    from clusterforge.image.build import rendered
    from clusterforge.policies.policy_inputs import PolicyInputs

    with rendered(blueprint, PolicyInputs(), "lab", True) as (_, found):
        return found[0].tag


def build_image(blueprint: Path) -> str:
    tag = image_tag(blueprint)
    print(f"image build {blueprint} (nice -n 10): {tag}", flush=True)
    subprocess.run(["nice", "-n", "10", sys.executable, "-m", "clusterforge", "image", "build", str(blueprint)],
                   check=True)
    return tag


def prepare(tag: str, work: Path) -> Boot:
    """The image's kernel, initramfs and root disk, made once per image id under `work`."""
    if shutil.which("podman") is None:
        raise Missing("podman is not installed: it reads the image (scripts/lab-host-setup installs it)")
    found = subprocess.run(["podman", "image", "inspect", "--format", "{{.Id}}", tag], text=True,
                           capture_output=True, check=False)
    if found.returncode != 0:
        raise Missing(f"no image {tag}: build it with `clusterforge image build BLUEPRINT` (or leave out --image)")
    folder = work / found.stdout.strip()[:12]
    boot = Boot(folder / "vmlinuz", folder / "initrd.img", folder / "root.ext4", folder)
    if all(p.is_file() for p in (boot.kernel, boot.initrd, boot.disk)):
        print(f"kernel, initramfs and root disk of {tag}: {folder} (made earlier)", flush=True)
        return boot
    folder.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=folder) as tmp:
        tree = Path(tmp) / "tree"
        tree.mkdir()
        container = run(["podman", "create", tag, "/sbin/init"]).stdout.strip()
        try:
            export = subprocess.Popen(["podman", "export", container], stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "--numeric-owner", "--xattrs", "--xattrs-include=*", "-C", str(tree)],
                           stdin=export.stdout, check=True)
            if export.wait() != 0:
                raise Missing(f"podman export of {tag} failed")
        finally:
            run(["podman", "rm", "--force", container])
        kernels = sorted((tree / "boot").glob("vmlinuz-*"))
        if not kernels:
            raise Missing(f"{tag} has no /boot/vmlinuz-*: it is not bootable (built with --no-bootable?)")
        version = kernels[-1].name.removeprefix("vmlinuz-")
        initrd = tree / "boot" / f"initrd.img-{version}"
        if not initrd.is_file():
            raise Missing(f"{tag} has /boot/vmlinuz-{version} but no /boot/initrd.img-{version}")
        # what the site's overlay gives every node (docs/bare-metal.md section 3): the boot unit's condition
        boot_dir = tree / "etc/clusterforge/boot"
        boot_dir.mkdir(parents=True, exist_ok=True)
        (boot_dir / "node.env").write_text(NODE_ENV)
        shutil.copyfile(kernels[-1], boot.kernel.with_suffix(".part"))
        shutil.copyfile(initrd, boot.initrd.with_suffix(".part"))
        used = int(run(["du", "-sb", str(tree)]).stdout.split()[0])
        size_mib = used * 13 // 10 // 2**20 + 512
        part = boot.disk.with_suffix(".part")
        run(["mkfs.ext4", "-q", "-F", "-L", "cf-root", "-d", str(tree), str(part), f"{size_mib}M"])
    for path in (boot.kernel, boot.initrd, boot.disk):
        os.replace(path.with_suffix(".part"), path)
    (folder / "kernel-version").write_text(version + "\n")
    print(f"kernel {version}, initramfs and a {size_mib} MiB root disk of {tag} in "
          f"{time.monotonic() - started:.0f} s: {folder}", flush=True)
    return boot


def kvm_usable() -> bool:
    try:
        os.close(os.open("/dev/kvm", os.O_RDWR))
    except OSError:
        return False
    return True


def qemu_command(boot: Boot, accel: str, memory_mib: int, cpus: int) -> list[str]:
    return [QEMU, "-accel", accel, "-cpu", "host" if accel == "kvm" else "max", "-smp", str(cpus),
            "-m", str(memory_mib), "-nographic", "-no-reboot", "-serial", "stdio", "-monitor", "none",
            "-kernel", str(boot.kernel), "-initrd", str(boot.initrd), "-append", KERNEL_CMDLINE,
            "-drive", f"file={boot.disk},format=raw,if=virtio,snapshot=on",
            "-nic", "user,model=virtio-net-pci"]


def watch(command: list[str], log: Path, timeout_s: float) -> tuple[dict[str, float], str]:
    """Start QEMU, timestamp each console line, and stop it at the boot unit's line: the seconds from QEMU's
    start to each step seen, and why it ended."""
    seen: dict[str, float] = {}
    started = time.monotonic()
    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    assert qemu.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(qemu.stdout, selectors.EVENT_READ)
    buffer = b""
    ended = "timed out"
    with log.open("w") as out:
        try:
            while (left := started + timeout_s - time.monotonic()) > 0:
                if not selector.select(min(left, 1.0)):
                    continue
                chunk = os.read(qemu.stdout.fileno(), 65536)
                if not chunk:
                    ended = f"QEMU exited ({qemu.wait()}) before the boot unit started"
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                now = time.monotonic() - started
                for raw in lines:
                    line = raw.decode(errors="replace").rstrip("\r")
                    out.write(f"{now:8.2f} {line}\n")
                    for key, _, pattern in STEPS:
                        if key not in seen and pattern.search(line):
                            seen[key] = now
                out.flush()
                if "boot_unit" in seen:
                    ended = "the boot unit started"
                    break
        finally:
            if qemu.poll() is None:
                os.killpg(qemu.pid, signal.SIGTERM)
                try:
                    qemu.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(qemu.pid, signal.SIGKILL)
                    qemu.wait()
    return seen, ended


def versions(boot: Boot, accel: str) -> dict[str, str]:
    qemu = run([QEMU, "--version"]).stdout.splitlines()[0]
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory_kib = int(Path("/proc/meminfo").read_text().split()[1])
    return {"qemu": qemu, "accel": accel, "guest_kernel": (boot.folder / "kernel-version").read_text().strip(),
            "host": f"{cpu}, {os.cpu_count()} cores, {memory_kib / 2**20:.0f} GiB, Linux {platform.release()}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blueprint", type=Path, default=LAB_BLUEPRINT,
                        help="build this blueprint's image (`clusterforge image build`, --sources lab)")
    parser.add_argument("--image", help="boot this existing bootable image instead of building one")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                        help="auto: KVM where /dev/kvm can be opened, else TCG")
    parser.add_argument("--memory", type=int, default=2048, help="guest memory, MiB")
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for the boot unit")
    parser.add_argument("--work", type=Path, default=WORK, help="where the disk image and the console log go")
    args = parser.parse_args()
    try:
        if shutil.which(QEMU) is None:
            raise Missing(f"{QEMU} is not installed (Debian: apt-get install qemu-system-x86)")
        if os.geteuid() != 0:
            raise Missing("run as root: it reads the image with podman and writes a file system with its owners")
        tag = args.image or build_image(args.blueprint)
        boot = prepare(tag, args.work)
    except Missing as exc:
        print(f"qemu_boot: {exc}", file=sys.stderr)
        return 2
    accel = args.accel if args.accel != "auto" else ("kvm" if kvm_usable() else "tcg")
    log = boot.folder / f"console-{accel}.log"
    command = qemu_command(boot, accel, args.memory, args.cpus)
    print(f"booting {tag} ({accel}): {' '.join(command)}", flush=True)
    seen, ended = watch(["nice", "-n", "10", *command], log, args.timeout)
    if args.accel == "auto" and accel == "kvm" and "kernel" not in seen:
        # /dev/kvm opens, yet a nested or restricted KVM may refuse the guest (QEMU aborts on an MSR it cannot
        # set): software emulation then, as where there is no /dev/kvm
        print(f"KVM did not start the guest ({ended}; {log}): TCG instead", flush=True)
        accel, log = "tcg", boot.folder / "console-tcg.log"
        command = qemu_command(boot, accel, args.memory, args.cpus)
        print(f"booting {tag} ({accel}): {' '.join(command)}", flush=True)
        seen, ended = watch(["nice", "-n", "10", *command], log, args.timeout)
    result = {"image": tag, **versions(boot, accel), "memory_mib": args.memory, "cpus": args.cpus,
              "seconds": {key: round(value, 2) for key, value in seen.items()}, "ended": ended,
              "console_log": str(log)}
    (boot.folder / f"result-{accel}.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"{ended}; console: {log}")
    print("| step | seconds from QEMU's start |\n|---|---|")
    for key, what, _ in STEPS:
        print(f"| {what} | {seen[key]:.1f} |" if key in seen else f"| {what} | not seen |")
    print(f"{result['qemu']}; accelerator {accel}; guest kernel {result['guest_kernel']}; "
          f"{args.cpus} CPUs, {args.memory} MiB; host {result['host']}")
    return 0 if "boot_unit" in seen else 1


if __name__ == "__main__":
    sys.exit(main())
