"""File names as reports show them: relative to the working directory when the file lies under it."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import PurePath


def report_path(file: str) -> str:
    """`file` relative to the working directory (the repository's root in CI) when it lies below it.

    An included file is located by its resolved, absolute path; GitHub annotations and code scanning match
    only paths relative to the repository, and the runner's own folder has no business in a report. A file
    outside the working directory, or any relative name, is kept as given.
    """
    if not os.path.isabs(file):
        return file
    try:
        here = os.getcwd()
    except OSError:  # the working directory was removed
        return file
    return _relative(file, here)


@lru_cache(maxsize=256)
def _relative(file: str, here: str) -> str:
    """`file` relative to `here` (or its real path), once per pair: a report names one file thousands of times."""
    path = PurePath(file)
    for base in dict.fromkeys((here, os.path.realpath(here))):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix() or "."
    return file


def machine_path(file: str) -> str:
    """`file` as machine outputs (JSON, SARIF, JUnit) name it: never absolute.

    Below the working directory it is relative to it (as report_path); elsewhere it is relative too, climbing
    with `..`, so a report never carries the runner's or a user's folders and a SARIF location resolves against
    %SRCROOT%. A relative name is kept as given.
    """
    name = report_path(file)
    if not os.path.isabs(name):
        return name
    try:
        return PurePath(os.path.relpath(name)).as_posix()
    except (OSError, ValueError):  # no working directory, or another drive
        return PurePath(name).name
