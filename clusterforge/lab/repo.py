"""The lab's local apt repository: the vendor packages the hardware roles install, which no Debian mirror has.

The Lustre client, enroot and pyxis are stand-ins with the real names and versions and no payload: they let the
roles' install paths (repository, pin, packages, checksum) run on machines without the vendors' repositories. An
accelerator vendor (its GPU stack: clusterforge/accelerators/<vendor>/lab_standins.py) and a target whose nodes need
software of their own (a cloud's fabric plugin and installer: clusterforge/targets/<name>/lab_standins.py) bring
their stand-ins from their folders (`STANDINS`, a `StandIns`): their packages, the files fetched by URL beside them,
and the lab variables that point the roles at them.
The repository is mounted read-only into every node at MOUNT and served as a flat `file:` repository.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.checkout import project_root
from clusterforge.lab.paths import shared_cache

MOUNT = "/srv/clusterforge-repo"
APT_LINE = f"deb [trusted=yes] file:{MOUNT} ./"
LIBDIR = "usr/lib/x86_64-linux-gnu"
STANDIN = "clusterforge lab stand-in: the real package's name and version, none of its files"
REPO_FILE = "clusterforge-lab"
ON_COMPUTE = "{{ inventory_hostname in groups['slurm_compute'] | default([]) }}"  # a role switched on per node


def apt_source(role: str) -> dict[str, str]:
    """The lab variables that point a role's apt source at this repository (no signing key: it is trusted)."""
    return {f"{role}_apt_repository": APT_LINE, f"{role}_apt_repository_filename": REPO_FILE,
            f"{role}_apt_key_url": ""}


def _containers_default(variable: str) -> str:
    """A version pinned in the containers role's defaults (the blueprint has no enroot or pyxis pin)."""
    defaults = yaml.safe_load((project_root() / "roles/containers/defaults/main.yml").read_text())
    return str(defaults[variable])


@dataclass(frozen=True)
class Pins:
    """The versions to serve, from the rendered group_vars (the blueprint's software pins); enroot's and pyxis's
    are the containers role's defaults unless given. `others` are the vendors' and the targets' stand-ins' pins:
    each role variable a `StandIns` names (`StandIns.pins`) with its rendered version."""

    lustre_client: str
    enroot: str = field(default_factory=lambda: _containers_default("containers_enroot_version"))
    pyxis: str = field(default_factory=lambda: _containers_default("containers_pyxis_version"))
    others: tuple[tuple[str, str], ...] = ()

    def pin(self, variable: str) -> str:
        """The version of a vendor's or a target's stand-in, by the role variable that pins it."""
        return dict(self.others)[variable]


Build = Callable[[Path], None]  # writes the file at the path it is given


@dataclass(frozen=True)
class StandIns:
    """What an accelerator vendor or a target adds to the lab's repository (its `lab_standins.py`'s `STANDINS`):
    stand-ins for the software its nodes install, at the versions of the role variables in `pins` (read from the
    render's group_vars)."""

    pins: tuple[str, ...]
    packages: Callable[[Pins], list[tuple[str, str, Build]]]
    """Its .debs: (package, version, build)."""
    files: Callable[[Pins], dict[str, tuple[str, Build]]]
    """Files the roles fetch by URL, by a key of its own: (file name in the repository, build)."""
    variables: Callable[[Mapping[str, tuple[str, str]]], dict[str, Any]]
    """The lab variables for site.yml that point its roles at them, given each file's (URL, sha256) by its key."""
    gaps: Mapping[str, Any] = field(default_factory=dict)
    """Role variables a lab image sets to leave out what it has no stand-in for (its GPU telemetry, say): nodes
    without its devices cannot run those anyway."""


def standins() -> list[StandIns]:
    """Every registered accelerator vendor's stand-ins, then every registered target's, in the registries' order."""
    from clusterforge.accelerator_kernel import registered as vendors
    from clusterforge.accelerator_kernel import vendor_value
    from clusterforge.target_kernel import registered, stage_value

    made = [vendor_value(vendor, "lab_standins", "STANDINS", StandIns) for vendor in vendors().values()]
    made += [stage_value(target, "lab_standins", "STANDINS", StandIns) for target in registered().values()]
    return [one for one in made if one is not None]


def other_pins(variables: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The vendors' and the targets' stand-ins' pins from rendered variables (all.yml, or a pool's own over it)."""
    return tuple((name, str(variables.get(name))) for made in standins() for name in made.pins)


def recipe() -> bytes:
    """What the repository's content follows besides the pins: this module and the modules of the stand-ins."""
    modules = [Path(__file__), *(Path(inspect.getfile(made.packages)) for made in standins())]
    return b"".join(path.read_bytes() for path in modules)


@dataclass(frozen=True)
class Repo:
    root: Path
    files: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """The stand-ins' files by their key: (file name inside the repository, sha256)."""

    def variables(self) -> dict[str, Any]:
        """The lab variables of every vendor's and target's stand-ins, pointing at these files."""
        located = {key: (f"file://{MOUNT}/{name}", digest) for key, (name, digest) in self.files.items()}
        return {key: value for made in standins() for key, value in made.variables(located).items()}


def repo_root() -> Path:
    return shared_cache() / "repo"


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / ".repo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure(pins: Pins, say: Callable[[str], None] | None = None) -> Repo:
    """Build what is missing for these pins (a real library from PyPI may be fetched once) and refresh the
    index."""
    root = repo_root()
    made = standins()
    with _locked(root):
        built = False
        for name, version, build in [*_packages(pins), *(deb for s in made for deb in s.packages(pins))]:
            deb = root / f"{name}_{version}_amd64.deb"
            if not deb.exists():
                if say:
                    say(f"adding {name} {version} to the lab's apt repository")
                build(deb)
                built = True
        files = {key: value for s in made for key, value in s.files(pins).items()}
        for file_name, build in files.values():
            if not (root / file_name).exists():
                build(root / file_name)
                built = True
        if built or not (root / "Packages").exists():
            _index(root)
        found = {key: (file_name, _digests(root / file_name, "sha256")[0]) for key, (file_name, _) in files.items()}
    return Repo(root, found)


def _packages(pins: Pins) -> list[tuple[str, str, Callable[[Path], None]]]:
    """The stand-ins every lab serves whatever its vendors and targets: the Lustre client, enroot and pyxis."""
    lustre = f"{pins.lustre_client}-1"
    enroot = f"{pins.enroot}-1"
    pyxis = f"{pins.pyxis}-1"
    return [
        ("lustre-client-utils", lustre,
         lambda deb: standin(deb, "lustre-client-utils", lustre, "Lustre client utilities")),
        ("lustre-client-modules-dkms", lustre,
         lambda deb: standin(deb, "lustre-client-modules-dkms", lustre, "Lustre client kernel modules (DKMS)")),
        # enroot's release .debs and pyxis's `make deb`, with the dependencies between them they declare
        ("enroot", enroot, lambda deb: standin(deb, "enroot", enroot, "Unprivileged container sandboxing utility")),
        ("enroot+caps", enroot,
         lambda deb: standin(deb, "enroot+caps", enroot, "enroot's extra capabilities for unprivileged image import",
                              f"Depends: enroot (= {enroot})\n")),
        ("nvslurm-plugin-pyxis", pyxis,
         lambda deb: standin(deb, "nvslurm-plugin-pyxis", pyxis, "Slurm SPANK plugin for containerized tasks (pyxis)",
                              "Depends: enroot (>= 3.1.0) | enroot-hardened (>= 3.1.0)\n")),
    ]


def control(name: str, version: str, description: str, extra: str = "") -> str:
    return (f"Package: {name}\nVersion: {version}\nArchitecture: amd64\n"
            f"Maintainer: clusterforge lab <lab@localhost>\nSection: misc\nPriority: optional\n"
            f"{extra}Description: {description}\n")


def build_deb(tree: Path, deb: Path, compress: str = "gzip") -> None:
    tmp = deb.with_suffix(".tmp")
    proc = subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compress}", "--build", str(tree), str(tmp)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ClusterforgeError(Problem(f"dpkg-deb failed: {proc.stderr.strip()}", str(deb)))
    tmp.replace(deb)


def standin(deb: Path, name: str, version: str, what: str, extra: str = "") -> None:
    with tempfile.TemporaryDirectory(dir=deb.parent) as tmp:
        tree = Path(tmp)
        (tree / "DEBIAN").mkdir()
        (tree / "DEBIAN/control").write_text(control(name, version, f"{what} ({STANDIN})", extra))
        doc = tree / "usr/share/doc" / name
        doc.mkdir(parents=True)
        (doc / "README.clusterforge-lab").write_text(f"{what} {version}: {STANDIN}.\n")
        build_deb(tree, deb)


def _digests(path: Path, *algorithms: str) -> list[str]:
    """Hex digests of a file, read once in 1 MiB blocks (libnccl2 is 270 MB)."""
    hashes = [hashlib.new(name) for name in algorithms]
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            for digest in hashes:
                digest.update(block)
    return [digest.hexdigest() for digest in hashes]


def _index(root: Path) -> None:
    """Write Packages and Release for a flat repository (what dpkg-scanpackages would, without dpkg-dev)."""
    stanzas = []
    for deb in sorted(root.glob("*.deb")):
        control = subprocess.run(["dpkg-deb", "--field", str(deb)], capture_output=True, text=True,
                                 check=True).stdout.strip()
        md5, sha256 = _digests(deb, "md5", "sha256")
        stanzas.append(f"{control}\nFilename: ./{deb.name}\nSize: {deb.stat().st_size}\n"
                       f"MD5sum: {md5}\nSHA256: {sha256}\n")
    packages = "\n".join(stanzas).encode()
    (root / "Packages.tmp").write_bytes(packages)
    (root / "Packages.tmp").replace(root / "Packages")
    release = (f"Origin: clusterforge-lab\nLabel: clusterforge-lab\nArchitectures: amd64 all\nSHA256:\n"
               f" {hashlib.sha256(packages).hexdigest()} {len(packages)} Packages\n")
    (root / "Release.tmp").write_text(release)
    (root / "Release.tmp").replace(root / "Release")
