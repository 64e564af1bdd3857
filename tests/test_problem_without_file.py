"""A Problem renders as `file:line: path: message (hint)` where it has a file, and with no file prefix where it
has none (an option's value, a template's name, the Pulumi stack's refusal of a setting): never `<input>:`."""

from __future__ import annotations

import pytest

from clusterforge.core.errors import ClusterforgeError, Problem


@pytest.mark.parametrize(("problem", "text"), [
    (Problem("m", "cluster.yaml", 9, "pools[0].count", "h"), "cluster.yaml:9: pools[0].count: m (h)"),
    (Problem("m", "cluster.yaml"), "cluster.yaml: m"),
    (Problem("m", "cluster.yaml", path="p"), "cluster.yaml: p: m"),
    (Problem("m"), "m"),
    (Problem("m", hint="h"), "m (h)"),
    (Problem("m", path="aws.data_bucket"), "aws.data_bucket: m"),
    (Problem("m", "", 0, "p"), "p: m"),
    (Problem("m", line=3, path="p"), "line 3: p: m"),  # text read from no file keeps its line
])
def test_render(problem: Problem, text: str) -> None:
    assert problem.render() == text


def test_the_stack_refusal_names_no_file_for_a_setting() -> None:
    """stacks/aws/__main__.py refuses with `str(error)`: each problem's rendering, one per line."""
    error = ClusterforgeError([Problem("names no bucket", path="aws.data_bucket"), Problem("bad", "b.yaml", 4, "x")])
    assert str(error) == "aws.data_bucket: names no bucket\nb.yaml:4: x: bad"
