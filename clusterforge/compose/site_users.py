"""What `check` judges when it is given a Site file, a folder or `-`.

A `kind: Site` file is no blueprint: alone it has no pools and nothing to check. What a change to it can break
is the blueprints that include it, so `check site.yaml` checks those: the ones among the files it was given,
and the ones beside it (its folder and below, and below CLUSTERFORGE_INCLUDE_ROOT when that is set). A folder
stands for every Cluster and Site below it; `-` for one blueprint on stdin. Each blueprint is checked once,
however many ways it was named. The kind and the includes are read from the text (a top-level `kind:` line,
`!include NAME`), without loading: a file that cannot be parsed is still handed on, so its error is reported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, shown
from clusterforge.files.paths import report_path
from clusterforge.files.yamlguard import read_text
from clusterforge.files.yamlsource import INCLUDE_ROOT, MAX_INCLUDE_DEPTH

STDIN = Path("-")
SUFFIXES = (".yaml", ".yml")
MAX_SCANNED = 20_000  # YAML files looked at when searching for a site's blueprints: a bound on a huge tree


def is_yaml_name(name: str) -> bool:
    """Whether a file name is a YAML file's: .yaml or .yml in any case (`check` reads `rogue.YAML` as well)."""
    return name.lower().endswith(SUFFIXES)


_KIND = re.compile(r"""^kind:[ \t]*["']?([A-Za-z]+)["']?[ \t]*(?:#.*)?$""", re.MULTILINE)
_INCLUDE = re.compile(r"""!include[ \t]+["']?([^\s"'#,\]}]+)""")


@dataclass(frozen=True)
class Selection:
    """The blueprints to check, each once (STDIN for `-`), and what the reader is told about the choice."""

    blueprints: tuple[Path, ...]
    notes: tuple[str, ...]


def kind_of(path: Path) -> str | None:
    """The top-level `kind:` of a YAML file; None when it has none or cannot be read."""
    try:
        text = read_text(path)
    except ClusterforgeError:
        return None
    found = _KIND.search(text)
    return found.group(1) if found else None


def includes(path: Path, target: Path, depth: int = 0) -> bool:
    """Whether the file at `path` includes `target` (resolved), directly or through the files it includes."""
    if depth > MAX_INCLUDE_DEPTH:
        return False
    try:
        text = read_text(path)
    except ClusterforgeError:
        return False
    for name in _INCLUDE.findall(text):
        if os.path.isabs(name) or not is_yaml_name(name):
            continue
        included = path.parent / name
        try:
            if included.resolve() == target:
                return True
        except (OSError, RuntimeError):
            continue
        if included.is_file() and includes(included, target, depth + 1):
            return True
    return False


def yaml_below(folder: Path) -> Iterator[Path]:
    """Every .yaml/.yml file below `folder`, in a stable order; hidden folders (.git, .venv) and links to
    folders are not entered."""
    for top, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if is_yaml_name(name):
                yield Path(top) / name


def search_folders(site: Path) -> tuple[list[Path], list[Path]]:
    """Where the blueprints of a site are looked for besides the files given: (folders searched with everything
    below them, folders whose own files only are read). Below: the site's folder, and the include root when
    CLUSTERFORGE_INCLUDE_ROOT names one (a blueprint anywhere below it may include the site). Own files only:
    each folder between the site's and the working directory (with the default root, a blueprint includes
    files in its folder and below, so one above the site may include it)."""
    below = [site.parent]
    root = os.environ.get(INCLUDE_ROOT, "")
    if root and Path(root).is_dir():
        below.append(Path(root))
    here = Path.cwd().resolve()
    folder = site.resolve().parent
    above = []
    while folder != here and here in folder.parents:
        folder = folder.parent
        above.append(folder)
    return below, above


def site_users(site: Path, given: Sequence[Path]) -> list[Path]:
    """The Cluster blueprints that include `site`: among `given`, then in search_folders(site)."""
    target = site.resolve()
    found: list[Path] = []
    seen: set[Path] = set()
    candidates = [*given]
    below, above = search_folders(site)
    for folder in below:
        for n, path in enumerate(yaml_below(folder)):
            if n >= MAX_SCANNED:
                break
            candidates.append(path)
    for folder in above:
        candidates += sorted(p for p in folder.iterdir() if is_yaml_name(p.name) and p.is_file())
    for path in candidates:
        real = path.resolve()
        if real in seen or real == target:
            continue
        seen.add(real)
        if kind_of(path) == "Cluster" and includes(path, target):
            found.append(path)
    return found


def select(args: Sequence[Path]) -> Selection:
    """The blueprints `check ARGS` judges (see the module's docstring), and a note for each site and skip."""
    notes: list[str] = []
    direct: list[Path] = []
    sites: list[Path] = []
    for arg in args:
        if arg == STDIN:
            direct.append(arg)
        elif arg.is_dir():
            for path in yaml_below(arg):
                kind = kind_of(path)
                if kind == "Site":
                    sites.append(path)
                elif kind == "Cluster":
                    direct.append(path)
                else:
                    said = f" (kind: {shown(kind)})" if kind else ""
                    notes.append(f"{report_path(str(path))}: skipped: not a Cluster or Site{said}")
        elif kind_of(arg) == "Site":
            sites.append(arg)
        else:  # a Cluster, or a file whose errors the loader reports
            direct.append(arg)
    chosen = list(direct)
    for site in sites:
        users = site_users(site, direct)
        name = report_path(str(site))
        if users:
            teams = ", ".join(_beside(site, u) for u in users)
            notes.append(f"{name} is a Site: checked {teams} that include it")
            chosen += users
        else:
            below, above = search_folders(site)
            where = ", ".join(f"{report_path(str(f)) or '.'}/" for f in below) + " and below" + "".join(
                f", {report_path(str(f)) or '.'}/" for f in above)
            notes.append(f"{name} is a Site: no blueprint includes it, so there is nothing to judge (looked among the "
                         f"files given and in {where}: a Cluster there with `site: !include {site.name}` (the "
                         "path from its folder) would be checked)")
    return Selection(tuple(_once(chosen)), tuple(notes))


def _beside(site: Path, path: Path) -> str:
    """A blueprint's name as the note shows it: relative to the site's folder when below it (`team-nlp.yaml`)."""
    try:
        return str(path.resolve().relative_to(site.resolve().parent))
    except ValueError:
        return report_path(str(path))


def _once(paths: Sequence[Path]) -> Iterator[Path]:
    """Each file once, however it was named (`a.yaml`, `./a.yaml`, through a site)."""
    seen: set[Path | str] = set()
    for path in paths:
        try:
            key: Path | str = path.resolve() if path != STDIN else "-"
        except (OSError, RuntimeError):
            key = str(path)
        if key not in seen:
            seen.add(key)
            yield path
