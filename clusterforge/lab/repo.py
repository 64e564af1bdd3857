"""The lab's local apt repository: the vendor packages the hardware roles install, which no Debian mirror has.

The Lustre client, enroot and pyxis are stand-ins with the real names and versions and no payload: they let the
roles' install paths (repository, pin, packages, checksum) run on machines without the vendors' repositories. An
accelerator vendor (its GPU stack: clusterforge/accelerators/<vendor>/lab_standins.py) and a target whose nodes need
software of their own (a cloud's fabric plugin and installer: clusterforge/targets/<name>/lab_standins.py) bring
their stand-ins from their folders (`STANDINS`, a `StandIns`): their packages, the files fetched by URL beside them,
and the lab variables that point the roles at them.
Every package and file is built once into a pool shared by every lab (`pool_root`). A lab serves its own folder
(`LabPaths.repo`): links to exactly the pool's files its pins name, with their index, mounted read-only into each
of its nodes at MOUNT as a flat `file:` repository. So one lab's new pin (day two's driver roll) changes nothing
that another lab's nodes read, and the index a bake is keyed by follows the pins alone.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import shutil
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


def pool_root() -> Path:
    """Where every lab's packages and files are built, once each."""
    return shared_cache() / "repo"


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root.parent / ".repo.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _wanted(pins: Pins) -> tuple[list[tuple[str, str, Build]], dict[str, tuple[str, Build]]]:
    """The .debs these pins name, (file name in the pool, package and version, build), and the stand-ins' files
    by their key."""
    made = standins()
    debs = [(f"{name}_{version}_amd64.deb", f"{name} {version}", build)
            for name, version, build in [*_packages(pins), *(deb for s in made for deb in s.packages(pins))]]
    return debs, {key: value for s in made for key, value in s.files(pins).items()}


def ensure(pins: Pins, folder: Path, say: Callable[[str], None] | None = None) -> Repo:
    """Build what the pool lacks for these pins (a real library from PyPI may be fetched once), then make `folder`
    serve exactly them: links to the pool's files, the ones no longer named removed, and their index."""
    pool = pool_root()
    debs, files = _wanted(pins)
    with _locked(pool):
        for file_name, package, build in debs:
            if not (pool / file_name).exists():
                if say:
                    say(f"adding {package} to the lab's apt repository")
                build(pool / file_name)
        for file_name, build in files.values():
            if not (pool / file_name).exists():
                build(pool / file_name)
        packages = index_of(pool, [name for name, _, _ in debs])
    _publish(pool, folder, [*(name for name, _, _ in debs), *(name for name, _ in files.values())], packages)
    found = {key: (file_name, _digests(folder / file_name, "sha256")[0]) for key, (file_name, _) in files.items()}
    return Repo(folder, found)


def index(pins: Pins) -> bytes | None:
    """The index a lab with these pins serves (what its nodes' apt reads, and a bake is keyed by); None while the
    pool lacks one of its packages (no lab has served them yet)."""
    pool = pool_root()
    debs, _ = _wanted(pins)
    names = [name for name, _, _ in debs]
    if not all((pool / name).is_file() for name in names):
        return None
    with _locked(pool):
        return index_of(pool, names)


def _publish(pool: Path, folder: Path, names: list[str], packages: bytes) -> None:
    """`folder` holding links to `names` in the pool and nothing else of it, with `packages` as its index. A file
    system without hard links between the two gets copies."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = folder / name
        if target.exists() and os.path.samefile(target, pool / name):
            continue
        partial = folder / f".{name}.tmp"
        partial.unlink(missing_ok=True)
        try:
            os.link(pool / name, partial)
        except OSError:
            shutil.copyfile(pool / name, partial)
        partial.replace(target)
    for stale in set(p.name for p in folder.iterdir()) - {*names, "Packages", "Release"}:
        (folder / stale).unlink()
    if not (folder / "Packages").is_file() or (folder / "Packages").read_bytes() != packages:
        _write_index(folder, packages)


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


def _stanza(deb: Path) -> str:
    """A .deb's index entry: its control fields, file name, size and digests. Kept beside it in the pool
    (`<deb>.stanza`, for the size and time it was read at): libnccl2 is 270 MB, and every `lab up` asks."""
    stat = deb.stat()
    stamp = f"# {stat.st_size} {stat.st_mtime_ns}\n"
    kept = deb.with_name(deb.name + ".stanza")
    if kept.is_file():
        text = kept.read_text()
        if text.startswith(stamp):
            return text[len(stamp):]
    control = subprocess.run(["dpkg-deb", "--field", str(deb)], capture_output=True, text=True,
                             check=True).stdout.strip()
    md5, sha256 = _digests(deb, "md5", "sha256")
    stanza = f"{control}\nFilename: ./{deb.name}\nSize: {stat.st_size}\nMD5sum: {md5}\nSHA256: {sha256}\n"
    partial = kept.with_suffix(".tmp")
    partial.write_text(stamp + stanza)
    partial.replace(kept)
    return stanza


def index_of(root: Path, debs: list[str]) -> bytes:
    """The Packages file of these .debs in `root` (what dpkg-scanpackages writes, without dpkg-dev)."""
    return "\n".join(_stanza(root / name) for name in sorted(debs)).encode()


def _write_index(root: Path, packages: bytes) -> None:
    """Packages and Release of a flat repository."""
    (root / "Packages.tmp").write_bytes(packages)
    (root / "Packages.tmp").replace(root / "Packages")
    release = (f"Origin: clusterforge-lab\nLabel: clusterforge-lab\nArchitectures: amd64 all\nSHA256:\n"
               f" {hashlib.sha256(packages).hexdigest()} {len(packages)} Packages\n")
    (root / "Release.tmp").write_text(release)
    (root / "Release.tmp").replace(root / "Release")
