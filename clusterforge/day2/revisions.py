"""A blueprint as it was at a git revision: `REV:PATH` (`main:cluster.yaml`, `HEAD~1:examples/x.yaml`).

The revision comes from a pull request, so it is read, never extracted: the blueprint and exactly the files it
`!include`s (found by composing each file with the loader's bounds) are looked up one path at a time
(`git ls-tree` of that path, which also gives the object's size) and read one blob at a time (`git cat-file`),
each read bounded before it starts. Only regular files are read: a link or a submodule at the revision is
refused, as a link leaving the tree is on disk, and nothing outside the blueprint's folder is looked up. The
blueprint and its includes share limits.INPUT_BYTES, and there are at most limits.INCLUDES included files.

The loader needs files (it resolves includes the same way on disk and at a revision), so the files read are
written, under the names git holds and only after checking each part of them, into a private temporary folder
(mode 0700) that is removed when the context ends. PATH is relative to the current directory, as for a file.
git runs with an argument list, never a shell (see gitrun), and a revision that starts with '-' is refused: git
would read it as an option.
"""

from __future__ import annotations

import os
import posixpath
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

import yaml

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.day2.gitrun import Result, git
from clusterforge.files.yamlguard import check_graph, check_text
from clusterforge.files.yamlsource import MAX_INCLUDE_DEPTH

try:  # the loader's parser, so the same tags are found
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

_HINT = "REV:PATH names a blueprint at a branch, tag or commit: main:cluster.yaml, HEAD~1:examples/x.yaml"
_LINE_MAX = 4096  # one line of rev-parse or ls-tree output
_INCLUDE = "!include"
_INCLUDE_SUFFIXES = (".yaml", ".yml")
_NAME_MAX = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_REGULAR = frozenset({"100644", "100755"})


@dataclass(frozen=True)
class Revision:
    """A `REV:PATH` argument, split."""

    argument: str
    rev: str
    path: str


def parse(argument: str) -> Revision | None:
    """`argument` as REV:PATH, or None when it names an existing file or has no ':'; refuses an empty or
    option-like revision and an empty path."""
    if Path(argument).exists() or ":" not in argument:
        return None
    rev, _, path = argument.partition(":")
    if not rev or rev.startswith("-"):
        why = "is empty" if not rev else "starts with '-' (git would read it as an option)"
        raise ClusterforgeError(Problem(f"the revision {shown(rev)} {why}", argument, hint=_HINT))
    if not path:
        raise ClusterforgeError(Problem("no blueprint path after ':'", argument, hint=_HINT))
    return Revision(argument, rev, path)


def _git(revision: Revision, *args: str, limit: int = _LINE_MAX) -> Result:
    return git(revision.argument, *args, limit=limit)


def _commit(revision: Revision) -> str:
    """The commit the revision names (unknown revisions and a directory outside a repository are refused)."""
    inside = _git(revision, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0:
        raise ClusterforgeError(Problem("the current directory is not in a git repository", revision.argument,
                                        hint="run clusterforge diff from the repository that holds the blueprint"))
    found = _git(revision, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision.rev}^{{commit}}")
    if found.returncode != 0:
        raise ClusterforgeError(Problem(f"unknown revision {shown(revision.rev)}", revision.argument,
                                        hint="a branch, tag or commit of this repository, e.g. main or HEAD~1"))
    return found.stdout.decode().strip()


def _repository_path(revision: Revision) -> PurePosixPath:
    """PATH relative to the repository's top, from PATH relative to the current directory."""
    prefix = _git(revision, "rev-parse", "--show-prefix").stdout.decode(errors="replace").strip()
    relative = posixpath.normpath(posixpath.join(prefix, revision.path.replace(os.sep, "/")))
    if (os.path.isabs(revision.path) or relative in ("..", ".") or relative.startswith("../")
            or not _safe(relative)):
        raise ClusterforgeError(Problem("the path is outside the repository or not a file name", revision.argument,
                                        hint=_HINT))
    return PurePosixPath(relative)


def _safe(path: str) -> bool:
    """Whether `path` is a relative name whose parts can be written as they are: no empty, '.' or '..' part,
    no control character, no part longer than a file name may be."""
    parts = path.split("/")
    return not _CONTROL.search(path) and all(p not in ("", ".", "..") and len(p.encode()) <= _NAME_MAX
                                              for p in parts)


@dataclass(frozen=True)
class _Entry:
    """One path's entry in a commit's tree: its mode, object and size (for a blob)."""

    mode: str
    oid: str
    size: int


def _entry(revision: Revision, commit: str, path: str) -> _Entry | None:
    """The tree entry at `path` (None when there is none): `git ls-tree` of that one path, nothing below it."""
    listed = _git(revision, "ls-tree", "-z", "-l", "--full-tree", commit, "--", path)
    if listed.returncode != 0:
        raise ClusterforgeError(Problem(f"git ls-tree failed: {listed.error}", revision.argument))
    for record in listed.stdout.split(b"\0"):
        head, _, name = record.partition(b"\t")
        fields = head.decode(errors="replace").split()
        if name.decode(errors="replace") == path and len(fields) == 4:
            mode, _, oid, size = fields
            return _Entry(mode, oid, int(size) if size.isdigit() else 0)
    return None


def _kind(entry: _Entry) -> str:
    if entry.mode == "120000":
        return "a symbolic link"
    if entry.mode == "160000":
        return "a submodule"
    return "a folder" if entry.mode == "040000" else "not a regular file"


class _Reader:
    """The blueprint and the files it includes at one commit, read with a budget of bytes and files."""

    def __init__(self, revision: Revision, commit: str, top: PurePosixPath) -> None:
        self.revision = revision
        self.commit = commit
        self.folder = top.parent.as_posix()
        self.files: dict[str, bytes] = {}
        self.bytes_left = limits.INPUT_BYTES.value

    def shown_at(self, path: str) -> str:
        return f"{self.revision.rev}:{path}"

    def read(self, path: str, entry: _Entry, where: str, line: int = 0) -> bytes:
        """The blob of a regular file entry, its size checked against the limits before it is read."""
        limit = limits.INPUT_BYTES.value
        if entry.size > limit:
            raise ClusterforgeError(limits.INPUT_BYTES.problem(entry.size, self.shown_at(path)))
        if entry.size > self.bytes_left:
            total = limit - self.bytes_left + entry.size
            raise ClusterforgeError(Problem(
                f"{total:,} bytes in the blueprint and its includes at {shown(self.revision.rev)} is over the limit "
                f"of {limit:,}", where, line,
                hint=f"at a revision they share one limit; raise it with {limits.INPUT_BYTES.variable}=N"))
        blob = _git(self.revision, "cat-file", "blob", entry.oid, limit=entry.size)
        if blob.returncode != 0:
            raise ClusterforgeError(Problem(f"git cat-file failed: {blob.error}", self.shown_at(path)))
        self.bytes_left -= len(blob.stdout)
        self.files[path] = blob.stdout
        return blob.stdout

    def blueprint(self, path: str) -> None:
        entry = _entry(self.revision, self.commit, path)
        if entry is None or entry.mode == "040000":
            raise ClusterforgeError(Problem(f"no file {shown(path)} at {shown(self.revision.rev)}",
                                            self.revision.argument,
                                            hint="check the path with `git ls-tree --name-only REV FOLDER/`"))
        if entry.mode not in _REGULAR:
            raise ClusterforgeError(Problem(f"{shown(path)} is {_kind(entry)} at {shown(self.revision.rev)}: only "
                                            "regular files are read from a revision", self.revision.argument))
        self.includes(path, self.read(path, entry, self.revision.argument), 1)

    def includes(self, path: str, data: bytes, depth: int) -> None:
        """Read what the file at `path` includes, depth first as the loader does. A file the loader will refuse
        (not YAML, over a bound) is not searched: the loader says why."""
        if depth > MAX_INCLUDE_DEPTH:
            return
        for name, line in _included_names(data, self.shown_at(path)):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            if target in self.files or not self._inside(target):
                continue  # read already, or outside the blueprint's folder: the loader refuses it
            where = self.shown_at(path)
            entry = _entry(self.revision, self.commit, target)
            if entry is None:
                continue  # the loader says: no such file
            if entry.mode not in _REGULAR:
                raise ClusterforgeError(Problem(
                    f"!include {shown(name)}: {_kind(entry)} at {shown(self.revision.rev)}: only regular files are "
                    "read from a revision", where, line))
            if len(self.files) > limits.INCLUDES.value:
                raise ClusterforgeError(limits.INCLUDES.problem(len(self.files), where, line))
            self.includes(target, self.read(target, entry, where, line), depth + 1)

    def _inside(self, target: str) -> bool:
        inside = self.folder == "." or target.startswith(self.folder + "/")
        return inside and _safe(target) and not target.startswith("../")


def _included_names(data: bytes, file: str) -> list[tuple[str, int]]:
    """The names a file `!include`s with their lines, in document order, found on its composed graph under
    the loader's bounds; names the loader refuses by their form are left out."""
    try:
        text = data.decode("utf-8")
        check_text(text, file)
        root = yaml.compose(text, Loader=_Loader)
        if root is None:
            return []
        check_graph(root, file, limits.YAML_DEPTH.value, limits.YAML_NODES.value)
    except (UnicodeDecodeError, ClusterforgeError, yaml.YAMLError):
        return []
    found: list[tuple[str, int]] = []
    seen: set[int] = set()
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            name = str(node.value)
            if node.tag == _INCLUDE and _well_formed(name):
                found.append((name, node.start_mark.line + 1))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in reversed(node.value) for part in reversed(pair))
    return found


def _well_formed(name: str) -> bool:
    return (0 < len(name) <= _NAME_MAX and not _CONTROL.search(name) and not name.startswith("/")
            and name.endswith(_INCLUDE_SUFFIXES))


def _materialise(files: dict[str, bytes], root: Path) -> None:
    """Write each file under `root` (a private folder this process made), refusing any name that could leave it
    or pass through a link: every part was checked by _safe, and no file is opened through a link or twice."""
    for path, data in files.items():
        if not _safe(path):  # pragma: no cover - every name was checked before it was read
            raise ClusterforgeError(Problem(f"cannot write {shown(path)}", path))
        target = root.joinpath(*path.split("/"))
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)


@contextmanager
def blueprint_path(argument: str) -> Iterator[Path]:
    """The blueprint file `argument` names: itself, or for REV:PATH its copy (with the files it includes) in a
    private temporary folder that lives as long as the context. Problems reported inside the context name the
    copy as `REV:PATH`."""
    revision = parse(argument)
    if revision is None:
        yield Path(argument)
        return
    commit = _commit(revision)
    path = _repository_path(revision)
    reader = _Reader(revision, commit, path)
    reader.blueprint(path.as_posix())
    with tempfile.TemporaryDirectory(prefix="clusterforge-rev-") as tmp:  # mkdtemp: mode 0700, ours alone
        root = Path(tmp)
        try:
            _materialise(reader.files, root)
        except OSError as exc:
            raise ClusterforgeError(Problem(f"cannot write a temporary copy: {exc.strerror}", argument)) from None
        try:
            yield root / path
        except ClusterforgeError as error:
            raise ClusterforgeError([_renamed(problem, root, revision) for problem in error.problems]) from None


def _renamed(problem: Problem, root: Path, revision: Revision) -> Problem:
    """A problem located in the temporary copy, located at `REV:path` instead."""
    file = Path(problem.file)
    if not file.is_relative_to(root):
        return problem
    return replace(problem, file=f"{revision.rev}:{file.relative_to(root).as_posix()}")
