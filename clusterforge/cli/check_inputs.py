"""The blueprints `check` reads: files, folders, sites (through the blueprints that include them) and `-`,
loaded together so that every unreadable one is reported at once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterforge.core.errors import ClusterforgeError, Problem

if TYPE_CHECKING:
    from clusterforge.blueprint.load import Loaded
    from clusterforge.policies.policy_inputs import Policy

STDIN_NAME = "<stdin>"  # how messages name the blueprint read from `-`; its includes resolve against the cwd


def read_stdin() -> str:
    """The blueprint on stdin, within the same size limit and encoding as a file."""
    from clusterforge.core import limits

    limit = limits.INPUT_BYTES.value
    data = click.get_binary_stream("stdin").read(limit + 1)
    if len(data) > limit:
        raise ClusterforgeError(limits.INPUT_BYTES.problem(f"more than {limit:,}", STDIN_NAME))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ClusterforgeError(Problem(f"not UTF-8 text ({exc.reason} at byte {exc.start})", STDIN_NAME,
                                        line)) from None


def empty_folders(args: Sequence[Path]) -> list[Problem]:
    """A problem for each folder among `args` that holds no Cluster or Site file: `check blueprints/` on the wrong
    folder (or before the files are there) must not pass as a check of nothing."""
    from clusterforge.compose.site_users import STDIN

    problems = []
    for arg in args:
        if arg == STDIN or not arg.is_dir():
            continue
        looked = _yaml_without_blueprint(arg)
        if looked is None:
            continue
        found = f"{looked} YAML file{'s' if looked != 1 else ''} of other kinds" if looked else "no YAML file"
        problems.append(Problem(f"no blueprint to check: looked for .yaml/.yml files of kind Cluster or Site below "
                                f"it (hidden folders skipped) and found {found}", str(arg),
                                hint="name the blueprint files, or the folder that holds them"))
    return problems


def _yaml_without_blueprint(folder: Path) -> int | None:
    """How many YAML files lie below `folder` when none is a Cluster or a Site; None at the first that is (cheap
    where a folder holds blueprints)."""
    from clusterforge.compose.site_users import kind_of, yaml_below

    count = 0
    for path in yaml_below(folder):
        if kind_of(path) in ("Cluster", "Site"):
            return None
        count += 1
    return count


def load_all(blueprints: Sequence[Path], policy: Policy) -> tuple[list[Loaded], list[Problem]]:
    """Every blueprint that loads (`-` from stdin), and the problems of all that cannot, together."""
    from clusterforge.pipeline.analysis import load_set

    return load_set(blueprints, policy, _load_one)


def _load_one(path: Path, policy: Policy) -> Loaded:
    from clusterforge.blueprint.load import from_source
    from clusterforge.compose.site_users import STDIN
    from clusterforge.core.bulk import bulk_objects
    from clusterforge.files.yamlsource import parse_text
    from clusterforge.pipeline.analysis import load

    if path != STDIN:
        return load(path, policy)
    with bulk_objects():
        return from_source(parse_text(read_stdin(), STDIN_NAME), policy.catalog)
