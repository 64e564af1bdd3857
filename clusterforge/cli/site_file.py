"""A Site file given where a blueprint is expected (`validate`, `plan`, `render`, `report`, `cost`, either side of
`diff` and `cost --diff`): one answer.

A `kind: Site` file is the `site:` section of blueprints, written once and included (`site: !include
site-dc1.yaml`). Loaded as a blueprint it fails ten ways (the kind, no target, no pools, every facility key
unknown) and none of them says what is wrong: the file is a site. These commands say that in one problem at its
`kind:` line, name the blueprints that include it (found where `check SITE` looks: compose.site_users) and give
the command to run instead. `check` needs none of this: it judges a site through those blueprints.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

MAX_NAMED = 5  # blueprints named in the message; a site shared by a hundred teams still gets one short line
_KIND_LINE = re.compile(r"^kind:", re.MULTILINE)

# The options a command cannot run without, in the command line the problem suggests.
_REQUIRED = {"render": " -o out", "report": " -o report.html"}


def site_problem(path: Path, command: str, given: Sequence[Path] = (),
                 run: Callable[[str], str] | None = None) -> Problem | None:
    """The one problem that says `path` is a Site file and what to run instead; None for any other file (its
    own errors, if any, are the loader's to report). `given`: the other files of the same command line, which
    are searched first, as `check` does. `run`: the command line to suggest (after `clusterforge `) given the
    first blueprint that includes it, where `command` and that blueprint are not the whole of it."""
    from clusterforge.compose.site_users import kind_of, search_folders, site_users
    from clusterforge.files.paths import report_path
    from clusterforge.files.yamlguard import read_text

    if kind_of(path) != "Site":
        return None
    text = read_text(path)
    found = _KIND_LINE.search(text)
    line = text.count("\n", 0, found.start()) + 1 if found else 0
    site = report_path(str(path))
    users = [report_path(str(user)) for user in site_users(path, [g for g in given if g != path])]
    check = f"`clusterforge check {shlex.quote(site)}`"
    if not users:
        below, above = search_folders(path)
        where = ", ".join(f"{report_path(str(f)) or '.'}/" for f in below) + " and below" + "".join(
            f", {report_path(str(f)) or '.'}/" for f in above)
        return Problem(f"a Site file, not a Cluster blueprint, and no blueprint includes it (looked in {where})",
                       str(path), line, "kind",
                       f"a Cluster blueprint in its folder with `site: !include {path.name}` would use it; {check} "
                       "then checks it through that blueprint")
    named = ", ".join(users[:MAX_NAMED]) + (f" and {len(users) - MAX_NAMED} more" if len(users) > MAX_NAMED else "")
    targets = users[:MAX_NAMED] if command == "validate" else users[:1]  # validate takes many; the others one
    suggested = (run(users[0]) if run is not None else
                 f"{command} {' '.join(shlex.quote(u) for u in targets)}{_REQUIRED.get(command, '')}")
    return Problem(f"a Site file, not a Cluster blueprint: included by {named}", str(path), line, "kind",
                   f"run `clusterforge {suggested}`, or {check} to check every blueprint that includes it")


def refuse_site(path: Path, command: str) -> None:
    """Raise the one problem of site_problem when `path` is a Site file (exit 2 at the CLI's edge)."""
    problem = site_problem(path, command)
    if problem is not None:
        raise ClusterforgeError(problem)


def refuse_site_sides(old: str, new: str, command: str) -> None:
    """`diff OLD NEW` and `cost --diff OLD NEW` (`command`): each side that is a plain file and a Site file gets
    site_problem's answer, both in one error. The command suggested puts the first blueprint that includes it in
    its place; the other side stays, except a REV:PATH of the same Site file, which becomes REV:that blueprint.
    A render directory and a REV:PATH are never judged here (the blueprint at a revision is the loader's)."""
    sides = [old, new]
    problems = []
    for index, side in enumerate(sides):
        if not Path(side).is_file() or (index and Path(old).is_file() and Path(old).samefile(side)):
            continue  # a render directory, REV:PATH or a missing file; the same file twice is answered once
        other = sides[1 - index]

        def run(user: str, index: int = index, side: str = side, other: str = other) -> str:
            line = [other, other]
            line[index] = user
            line[1 - index] = _same_site(other, Path(side), user)
            if line[0] == line[1]:
                line[0] = f"REV:{user}"
            return f"{command} {' '.join(shlex.quote(part) for part in line)}"

        problem = site_problem(Path(side), command.split()[0], [Path(other)] if Path(other).is_file() else [], run)
        if problem is not None:
            problems.append(problem)
    if problems:
        raise ClusterforgeError(problems)


def _same_site(argument: str, site: Path, user: str) -> str:
    """`argument`, or `user` in its place where it names the Site file `site` too: REV:`user` for REV:PATH (the
    same site at a revision)."""
    from clusterforge.day2 import revisions

    if Path(argument).is_file():
        return user if Path(argument).samefile(site) else argument
    try:
        revision = revisions.parse(argument)
    except ClusterforgeError:
        return argument
    if revision is None or Path(revision.path).resolve() != site.resolve():
        return argument
    return f"{revision.rev}:{user}"
