"""A Site file given where a blueprint is expected (`validate`, `plan`, `render`, `report`): one answer.

A `kind: Site` file is the `site:` section of blueprints, written once and included (`site: !include
site-dc1.yaml`). Loaded as a blueprint it fails ten ways (the kind, no target, no pools, every facility key
unknown) and none of them says what is wrong: the file is a site. These commands say that in one problem at its
`kind:` line, name the blueprints that include it (found where `check SITE` looks: compose.site_users) and give
the command to run instead. `check` needs none of this: it judges a site through those blueprints.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

MAX_NAMED = 5  # blueprints named in the message; a site shared by a hundred teams still gets one short line
_KIND_LINE = re.compile(r"^kind:", re.MULTILINE)

# The options a command cannot run without, in the command line the problem suggests.
_REQUIRED = {"render": " -o out", "report": " -o report.html"}


def site_problem(path: Path, command: str, given: Sequence[Path] = ()) -> Problem | None:
    """The one problem that says `path` is a Site file and what to run instead; None for any other file (its
    own errors, if any, are the loader's to report). `given`: the other files of the same command line, which
    are searched first, as `check` does."""
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
    run = f"`clusterforge {command} {' '.join(shlex.quote(u) for u in targets)}{_REQUIRED.get(command, '')}`"
    return Problem(f"a Site file, not a Cluster blueprint: included by {named}", str(path), line, "kind",
                   f"run {run}, or {check} to check every blueprint that includes it")


def refuse_site(path: Path, command: str) -> None:
    """Raise the one problem of site_problem when `path` is a Site file (exit 2 at the CLI's edge)."""
    problem = site_problem(path, command)
    if problem is not None:
        raise ClusterforgeError(problem)
