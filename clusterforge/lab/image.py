"""Lab images, built locally and cached in podman storage (no registry is needed or used).

`base`: a Debian trixie rootfs (SLURM 24.11) from mmdebstrap, imported as is. `node`: the base with per-node SSH
host keys and the timers that would race Ansible masked (data/Containerfile). The `baked` image (see bake.py) is a
node that the roles' install steps already ran on.
"""

from __future__ import annotations

import hashlib
import os
import re
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
    """The base image, built on first use (seconds: lab/durations.py says how many here)."""
    if podman.exists("image", BASE_IMAGE):
        return BASE_IMAGE
    archive = mirror()
    with durations.timed("mmdebstrap", say, f"building {BASE_IMAGE} with mmdebstrap from {archive}, once"):
        _bootstrap(archive)
    return BASE_IMAGE


def _bootstrap(archive: str) -> None:
    """A minbase Debian with PACKAGES, written by mmdebstrap as a tarball straight into `podman import`.

    mmdebstrap resolves the set with apt and downloads it in parallel where debootstrap fetched one package after
    another (16-19 s against 42-53 s here, benchmarks/README.md); the image's apt sources are the suite and its
    updates, as before."""
    sources = [f"deb {archive} {SUITE} main", f"deb {archive} {SUITE}-updates main"]
    with tempfile.TemporaryFile(dir=_scratch()) as said:  # a file, not a pipe: its messages never stall the tar
        # the package lists stay: the roles install from them without an `apt-get update` of their own
        # its chroot in the lab's scratch folder, as debootstrap's was: not a /tmp that may be small or noexec
        strap = subprocess.Popen(["mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                                  "--skip=cleanup/apt/lists", "--format=tar", SUITE, "-", *sources],
                                 stdout=subprocess.PIPE, stderr=said, env={**os.environ, "TMPDIR": str(_scratch())})
        imported = subprocess.run(["podman", "import", "--change", 'CMD ["/sbin/init"]', "-", BASE_IMAGE],
                                  stdin=strap.stdout, capture_output=True, text=True, check=False)
        if strap.stdout is not None:
            strap.stdout.close()
        if strap.wait() != 0:
            if imported.returncode == 0:
                podman.run(["rmi", "--force", BASE_IMAGE], check=False)  # a truncated tarball is no base
            said.seek(0)
            tail = " | ".join(said.read().decode("utf-8", "replace").strip().splitlines()[-4:])
            raise ClusterforgeError(Problem(f"mmdebstrap failed: {tail}", archive,
                                            hint="set CLUSTERFORGE_LAB_MIRROR to a reachable Debian mirror"))
    if imported.returncode != 0:
        raise ClusterforgeError(Problem(f"podman import failed: {imported.stderr.strip()[-300:]}", "podman"))


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
