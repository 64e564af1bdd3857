"""Hostlist expressions as SLURM writes them, and expansion back to names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.hostlist import compress, expand


@pytest.mark.parametrize(("names", "expected"), [
    (["gpu-0001"], "gpu-0001"),
    ([f"gpu-{i:04d}" for i in range(1, 17)], "gpu-[0001-0016]"),
    ([*(f"gpu-{i:04d}" for i in range(1, 17)), "gpu-0020"], "gpu-[0001-0016,0020]"),
    (["gpu-0003", "gpu-0001", "gpu-0002", "gpu-0002"], "gpu-[0001-0003]"),  # sorted, duplicates collapse
    (["gpu-0001", "cpu-0001", "gpu-0002", "login"], "gpu-[0001-0002],cpu-0001,login"),  # first-seen prefixes
    (["n9", "n10", "n11"], "n[9-11]"),  # unpadded numbers run across a digit boundary
    (["n09", "n10"], "n[09-10]"),
    (["n009", "n10"], "n[009,10]"),  # 10 padded to three digits is 010, so no run
    (["n9", "n10", "n009", "n010"], "n[009-010,9-10]"),
    (["leaf-001", "leaf-002", "leaf-004"], "leaf-[001-002,004]"),
])
def test_compress(names: list[str], expected: str) -> None:
    assert compress(names) == expected


def test_compress_12500_nodes_is_one_range() -> None:
    assert compress(f"gpu-{i:05d}" for i in range(1, 12_501)) == "gpu-[00001-12500]"


@pytest.mark.parametrize(("expression", "expected"), [
    ("gpu-[0001-0003,0007]", ["gpu-0001", "gpu-0002", "gpu-0003", "gpu-0007"]),
    ("a,b[1-2],c", ["a", "b1", "b2", "c"]),
    ("r[1-2]n[01-02]", ["r1n01", "r1n02", "r2n01", "r2n02"]),
    ("n[9-10]", ["n9", "n10"]),
    ("", []),
])
def test_expand(expression: str, expected: list[str]) -> None:
    assert expand(expression) == expected


@pytest.mark.parametrize("bad", ["gpu-[1-", "gpu-1]", "gpu-[a-b]", "gpu-[5-3]"])
def test_expand_rejects_malformed(bad: str) -> None:
    with pytest.raises(ClusterforgeError):
        expand(bad)


names = st.lists(
    st.builds(lambda prefix, number, width: f"{prefix}{number:0{width}d}",
              st.sampled_from(["gpu-", "cpu-", "n", "leaf-"]), st.integers(0, 3000), st.integers(1, 5)),
    max_size=60)


@given(names)
def test_round_trip(hosts: list[str]) -> None:
    expanded = expand(compress(hosts))
    assert sorted(expanded) == sorted(set(hosts))
    assert len(expanded) == len(set(hosts))


@given(names)
def test_compress_is_a_fixed_point(hosts: list[str]) -> None:
    once = compress(hosts)
    assert compress(expand(once)) == once
