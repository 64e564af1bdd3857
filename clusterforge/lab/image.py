"""Lab images, built locally and cached in podman storage (no registry is needed or used).

`base`: a Debian trixie rootfs (SLURM 24.11) from debootstrap, imported as is. `node`: the base with per-node SSH
host keys and the timers that would race Ansible masked (data/Containerfile). The `baked` image (see bake.py) is a
node that the roles' install steps already ran on.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.lab import durations, podman
from clusterforge.lab.paths import shared_cache

SUITE = "trixie"
BASE_IMAGE = f"localhost/cf-lab-base:{SUITE}"
NODE_IMAGE_REPO = "localhost/cf-lab-node"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
PACKAGES = ("systemd-sysv", "openssh-server", "python3", "python3-apt", "iproute2", "procps", "sudo",
            "ca-certificates")


def mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))) -> str:
    """`$CLUSTERFORGE_LAB_MIRROR`, else the first Debian archive in this host's apt sources, else deb.debian.org."""
    explicit = os.environ.get("CLUSTERFORGE_LAB_MIRROR")
    if explicit:
        return explicit
    files: list[Path] = []
    for src in sources:
        files += sorted(src.glob("*.list")) + sorted(src.glob("*.sources")) if src.is_dir() else [src]
    pattern = re.compile(r"^(?:deb\s+(?:\[[^]]*]\s+)?|URIs:\s*)(\S+/debian)/?\s", re.MULTILINE)
    for file in files:
        try:
            match = pattern.search(file.read_text() + "\n")
        except OSError:
            continue
        if match:
            return match.group(1)
    return DEFAULT_MIRROR


def ensure_base(say: Callable[[str], None] | None = None) -> str:
    """The debootstrap base image, built on first use (minutes: lab/durations.py says how many here)."""
    if podman.exists("image", BASE_IMAGE):
        return BASE_IMAGE
    archive = mirror()
    with durations.timed("debootstrap", say, f"building {BASE_IMAGE} with debootstrap from {archive}, once"):
        _debootstrap(archive)
    return BASE_IMAGE


def _debootstrap(archive: str) -> None:
    work = Path(tempfile.mkdtemp(prefix="rootfs-", dir=_scratch()))
    try:
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(work / "rootfs"),
             archive], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = " | ".join(proc.stdout.strip().splitlines()[-3:] + proc.stderr.strip().splitlines()[-3:])
            raise ClusterforgeError(Problem(f"debootstrap failed: {tail}", archive,
                                            hint="set CLUSTERFORGE_LAB_MIRROR to a reachable Debian mirror"))
        (work / "rootfs" / "etc/apt/sources.list").write_text(
            f"deb {archive} {SUITE} main\ndeb {archive} {SUITE}-updates main\n")
        tar = subprocess.Popen(["tar", "-C", str(work / "rootfs"), "--numeric-owner", "-c", "."],
                               stdout=subprocess.PIPE)
        imported = subprocess.run(["podman", "import", "--change", 'CMD ["/sbin/init"]', "-", BASE_IMAGE],
                                  stdin=tar.stdout, capture_output=True, text=True, check=False)
        tar.wait()
        if imported.returncode != 0 or tar.returncode != 0:
            raise ClusterforgeError(Problem(f"podman import failed: {imported.stderr.strip()[-300:]}", "podman"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _scratch() -> Path:
    path = shared_cache() / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def containerfile() -> Path:
    return Path(str(resources.files("clusterforge.lab") / "data" / "Containerfile"))


def node_image_tag() -> str:
    """The node image's tag changes with the Containerfile and the base image, so edits rebuild it."""
    digest = hashlib.sha256(containerfile().read_bytes())
    digest.update(podman.inspect("image", BASE_IMAGE)["Id"].encode())
    return f"{NODE_IMAGE_REPO}:{SUITE}-{digest.hexdigest()[:12]}"


def prune(repository: str, keep: str) -> None:
    """Remove the other tags of a lab image repository (earlier builds); images a container uses stay. Only that
    repository's tags: podman lists every name of a matching image, and an image may carry another repository's
    tag too (`image build` names the lab's baked image for the product)."""
    tags = podman.run(["images", "--format", "{{.Repository}}:{{.Tag}}", repository]).stdout.split()
    for tag in tags:
        if tag != keep and tag.rpartition(":")[0] == repository:
            podman.run(["rmi", tag], check=False)


def lab_images() -> list[str]:
    out = podman.run(["images", "--format", "{{.Repository}}:{{.Tag}}"]).stdout.split()
    return [tag for tag in out if tag.startswith("localhost/cf-lab-")]


def ensure_node(say: Callable[[str], None] | None = None) -> str:
    """The node image (base + per-node identity), built when missing (seconds)."""
    ensure_base(say)
    tag = node_image_tag()
    if not podman.exists("image", tag):
        if say:
            say(f"building {tag}")
        podman.run(["build", "--network=none", "--build-arg", f"BASE={BASE_IMAGE}", "-t", tag,
                    "-f", str(containerfile()), str(containerfile().parent)])
        prune(NODE_IMAGE_REPO, tag)
    return tag
