"""Which blueprints a change touches: what `check` must judge when some files of a repository changed.

A pull request that changes only a file a blueprint `!include`s (a site, a fragment of pools, anywhere below the
include root) changes that blueprint's design as much as an edit of the blueprint itself, and a deleted include
breaks it. A gate that picks blueprints by their file names alone passes such a change without judging it. The
include graph here is the loader's own: every candidate is parsed by `yamlsource.load_file`, which resolves
`!include` exactly as `check` does (same include root, same links), so no spelling of a kind or an include can
put a blueprint out of the graph and into a green build.

A candidate is touched when it is a Cluster and it, or any file it includes, is among the changed paths (deleted
ones included). A candidate that cannot be parsed is touched when it changed itself (it may be a Cluster: `check`
then says why it cannot be read), and when its own text says it is a Cluster (or cannot say) and its error lies
in a changed file or it names a changed file in an `!include` (the loader stopped before it could say). Every
changed YAML file among the candidates that is judged through no blueprint is said, with its kind, so that
"nothing to check" is an explained verdict and never a silent one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusterforge.compose.site_users import MAX_SCANNED, includes, is_yaml_name, yaml_below
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.core.source import Source
from clusterforge.files.paths import report_path
from clusterforge.files.yamlsource import load_file


@dataclass(frozen=True)
class Touched:
    """The blueprints to check, each once, in the order the candidates were given, and what the reader is told."""

    blueprints: tuple[Path, ...]
    notes: tuple[str, ...]


def _real(path: Path | str) -> str:
    """A path as the loader compares files: links resolved, and a path that no longer exists (a deleted file)
    resolved as far as it goes."""
    return os.path.realpath(path)


def _files(source: Source) -> set[str]:
    """Every file a parsed document read: itself and, through its includes, theirs."""
    found: set[str] = set()
    todo = [source]
    while todo:
        item = todo.pop()
        if _real(item.file) not in found:
            found.add(_real(item.file))
            todo.extend(inner for inner, _ in item.includes.values())
    return found


def _expand(candidates: Iterable[Path]) -> list[Path]:
    """The YAML files among `candidates`, a folder standing for every .yaml/.yml below it (hidden folders left
    out), at most MAX_SCANNED of them."""
    found: list[Path] = []
    for path in candidates:
        more = yaml_below(path) if path.is_dir() else [path] if is_yaml_name(path.name) else []
        for item in more:
            if len(found) >= MAX_SCANNED:
                raise ClusterforgeError(Problem(f"more than {MAX_SCANNED:,} YAML files to consider",
                                                report_path(str(path)),
                                                hint="name the folders where blueprints live"))
            found.append(item)
    return found


def touched(changed: Sequence[Path], candidates: Sequence[Path], everything: bool = False) -> Touched:
    """The Cluster blueprints among `candidates` that the `changed` paths touch (see the module's docstring);
    with `everything`, every Cluster among them (a change to the policy config or the waivers)."""
    gone = {_real(p) for p in changed}
    notes: list[str] = []
    chosen: list[Path] = []
    judged: set[str] = set()  # the changed files some chosen blueprint reads
    unexplained: dict[str, str] = {}  # a changed candidate judged through no blueprint -> why
    for path in _expand(candidates):
        real = _real(path)
        try:
            source = load_file(path)
        except ClusterforgeError as error:
            reaches = any(_real(p.file) in gone for p in error.problems if p.file) or any(
                includes(path, Path(target)) for target in gone)
            if real in gone or ((everything or reaches) and _own_kind(path) in ("Cluster", UNKNOWN)):
                chosen.append(path)
                judged.add(real)
            continue
        data = source.data
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind != "Cluster":
            if real in gone:
                unexplained[real] = (f"kind: {shown(kind)}" if isinstance(kind, str) else "no kind")
            continue
        read = _files(source)
        if everything or read & gone:
            chosen.append(path)
            judged |= read & gone
    for real, why in unexplained.items():
        if real not in judged:
            notes.append(f"{report_path(real)}: changed, not a Cluster ({why}) and included by no blueprint "
                         "considered: nothing to judge")
    return Touched(tuple(_once(chosen)), tuple(notes))


UNKNOWN = "<unknown>"  # _own_kind could not tell


def _own_kind(path: Path) -> str | None:
    """The top-level `kind` this file's own text gives, its includes not followed (one of them is what failed):
    read from the composed node tree, so escapes, quoting, tags and flow style count as the loader counts them,
    and aliases are not expanded. UNKNOWN when the text does not parse or a merge key (`<<`) could supply it."""
    import yaml

    from clusterforge.files.yamlguard import read_text

    try:
        root = yaml.compose(read_text(path), Loader=yaml.SafeLoader)
    except (ClusterforgeError, yaml.YAMLError, RecursionError):
        return UNKNOWN
    if not isinstance(root, yaml.MappingNode):
        return None
    found: str | None = None
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "<<":
            return UNKNOWN
        if isinstance(key, yaml.ScalarNode) and key.value == "kind":
            found = str(value.value) if isinstance(value, yaml.ScalarNode) else UNKNOWN
    return found


def _once(paths: Sequence[Path]) -> list[Path]:
    seen: set[str] = set()
    kept = []
    for path in paths:
        if _real(path) not in seen:
            seen.add(_real(path))
            kept.append(path)
    return kept
