"""A blueprint as it was at a git revision: `REV:PATH` (`main:cluster.yaml`, `HEAD~1:examples/x.yaml`).

The blueprint's whole folder at that revision is written to a temporary directory (`git archive`), so the site
files and other includes it names resolve as they did then (includes stay inside the blueprint's folder). PATH
is relative to the current directory, as for a file. git runs with an argument list, never a shell, and a
revision that starts with '-' is refused: git would read it as an option.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from clusterforge.errors import ClusterforgeError, Problem, shown

GIT_TIMEOUT_S = 120
_HINT = "REV:PATH names a blueprint at a branch, tag or commit: main:cluster.yaml, HEAD~1:examples/x.yaml"


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


def _git(revision: Revision, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run git in the current directory; a missing git or one that hangs is an input problem."""
    try:
        return subprocess.run(["git", *args], capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise ClusterforgeError(Problem("git is not installed", revision.argument, hint=_HINT)) from None
    except subprocess.TimeoutExpired:
        raise ClusterforgeError(Problem(f"git {args[0]} took more than {GIT_TIMEOUT_S} s",
                                        revision.argument)) from None


def _error(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode(errors="replace").strip().splitlines()
    return shown(lines[-1], 160) if lines else f"exit {result.returncode}"


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
    prefix = _git(revision, "rev-parse", "--show-prefix").stdout.decode().strip()
    relative = os.path.normpath(os.path.join(prefix, revision.path)).replace(os.sep, "/")
    if os.path.isabs(revision.path) or relative == ".." or relative.startswith("../"):
        raise ClusterforgeError(Problem("the path is outside the repository", revision.argument, hint=_HINT))
    return PurePosixPath(relative)


def _extract(revision: Revision, commit: str, path: PurePosixPath, into: Path) -> None:
    """Write the blueprint's folder at `commit` under `into` (git archive: only regular files and links inside)."""
    kind = _git(revision, "cat-file", "-t", f"{commit}:{path}")
    if kind.returncode != 0 or kind.stdout.decode().strip() != "blob":
        raise ClusterforgeError(Problem(f"no file {shown(str(path))} at {shown(revision.rev)}", revision.argument,
                                        hint="check the path with `git ls-tree -r --name-only REV`"))
    folder = str(path.parent)
    archive = _git(revision, "archive", "--format=tar", commit, *(["--", folder] if folder != "." else []))
    if archive.returncode != 0:
        raise ClusterforgeError(Problem(f"git archive failed: {_error(archive)}", revision.argument))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise ClusterforgeError(Problem(f"cannot write the blueprint's folder at {shown(revision.rev)}: {exc}",
                                        revision.argument)) from None


@contextmanager
def blueprint_path(argument: str) -> Iterator[Path]:
    """The blueprint file `argument` names: itself, or for REV:PATH its copy in a temporary folder that lives
    as long as the context. Problems reported inside the context name the copy as `REV:PATH`."""
    revision = parse(argument)
    if revision is None:
        yield Path(argument)
        return
    commit = _commit(revision)
    path = _repository_path(revision)
    with tempfile.TemporaryDirectory(prefix="clusterforge-rev-") as tmp:
        root = Path(tmp)
        _extract(revision, commit, path, root)
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
