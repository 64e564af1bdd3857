"""One check for "a bad value is refused at load with its own file, line and path": the blueprint's text with one
value replaced, the problem that names the path, and the line the replaced value stands on."""

from __future__ import annotations

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core.errors import ClusterforgeError


def assert_located(base: str, old: str, new: str, needle: str, path: str, fragment: str) -> None:
    """`base` with `old` replaced by `new` fails to load with a problem at `path`, on the line holding `needle`,
    whose message contains `fragment`."""
    assert old in base
    text = base.replace(old, new, 1)
    with pytest.raises(ClusterforgeError) as error:
        load_text(text, "bp.yaml")
    problems = [p for p in error.value.problems if p.path == path]
    assert problems, [p.render() for p in error.value.problems]
    line = next(i for i, row in enumerate(text.splitlines(), 1) if needle in row)
    assert (problems[0].file, problems[0].line) == ("bp.yaml", line)
    assert fragment in problems[0].render(), problems[0].render()
