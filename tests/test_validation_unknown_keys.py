"""Unknown keys past the first thousand are taken out before pydantic sees the data and reported after its
errors (core/unknown_keys.strip_unknown): the problems are the same as when pydantic reports every one of them,
the source's data is left as it was, and a blueprint of few unknown keys goes to pydantic untouched."""

from __future__ import annotations

import pytest

from clusterforge.blueprint.load import load_text
from clusterforge.core import unknown_keys
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.yamlsource import parse_text
from clusterforge.target_kernel import blueprint_model

_HEAD = "apiVersion: clusterforge/v1\nkind: Cluster\nname: tiny\ntarget: onprem\n"
_PARTITIONS = "slurm:\n  partitions:\n    - {name: train, pools: [gpu], default: true}\n"
_KEYS = ", ".join(f"zq{i:03d}: 1" for i in range(60))

# 60 unknown keys in each of 50 aliased pools (3,000), one of them bad beside its unknown keys.
def _many_keys(pools: int) -> str:
    return (_HEAD + f"x-keys: &u {{name: gpu, hardware: dgx-h100, count: 2, {_KEYS}}}\n"
            + "pools: [" + ", ".join(["*u"] * pools) + ", {name: gpu, hardware: dgx-h100, count: -1, zz: 1}]\n"
            + _PARTITIONS)


MANY_KEYS = _many_keys(49)
# A misspelt key beside the missing one it stands for, in a feed that 30 racks list 40 times each (1,200).
_FEEDS = "[&g {name: a, side: A, voltage: 415, ampz: 60, phase: 3}" + ", *g" * 39 + "]"
MISSPELT = (_HEAD + "pools:\n  - {name: gpu, hardware: dgx-h100, count: 2, partition: train}\n" + _PARTITIONS
            + "site:\n  name: dc1\n  rows:\n    - name: a\n      racks:\n"
            + f"        - &r {{name: r0000, feeds: {_FEEDS}, devices: [{{pool: gpu, count: 2}}]}}\n"
            + "".join(f"        - {{<<: *r, name: r{i:04d}}}\n" for i in range(1, 30)))


def _problems(text: str) -> list[Problem]:
    with pytest.raises(ClusterforgeError) as raised:
        load_text(text, "cluster.yaml")
    return raised.value.problems


@pytest.mark.parametrize("text", [MANY_KEYS, MISSPELT], ids=["many-keys", "misspelt"])
@pytest.mark.parametrize("kept", [0, 1, 25, 130])
def test_taken_out_keys_read_as_pydantic_reports_them(text: str, kept: int, monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setattr(unknown_keys, "_KEPT_UNKNOWN", 10_000)
    every = _problems(text)  # pydantic reports every unknown key
    monkeypatch.setattr(unknown_keys, "_KEPT_UNKNOWN", kept)
    taken_out = _problems(text)
    if kept >= 20:  # the 20 unknown keys shown are pydantic's: the problems come in its order
        assert taken_out == every
    else:  # those after the last kept come after pydantic's other errors
        assert sorted(taken_out, key=repr) == sorted(every, key=repr)


def test_counts_what_it_leaves_out() -> None:
    shown = [p.message for p in _problems(MANY_KEYS)]
    assert "... and 2,922 more like this (unknown key …)" in shown  # 'x-keys' is the 2,942nd
    assert "Input should be greater than or equal to 0" in shown  # the bad count in the last pool is reported
    misspelt = _problems(MISSPELT)
    assert [(p.message, p.hint) for p in misspelt] == [
        ("unknown key 'ampz' (and 1199 more places that use this line)", "did you mean amps?")]


def test_takes_out_of_a_copy_only_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    few = parse_text(_many_keys(5), "cluster.yaml")
    data, stripped = unknown_keys.strip_unknown(blueprint_model(), few.data)
    assert data is few.data and not stripped  # 362 unknown keys: under the default, nothing is taken out
    source = parse_text(MANY_KEYS, "cluster.yaml")
    monkeypatch.setattr(unknown_keys, "_KEPT_UNKNOWN", 100)
    data, stripped = unknown_keys.strip_unknown(blueprint_model(), source.data)
    assert sum(len(keys) for _, keys in stripped) == 49 * 60 + 2 - 100  # and 'x-keys'
    assert stripped[0] == (("pools", 1), [f"zq{i:03d}" for i in range(40, 60)])
    assert all(len(pool) == 3 for pool in data["pools"][2:49]) and len(data["pools"][0]) == 63
    assert all(len(pool) == 63 for pool in source.data["pools"][:49])  # the source keeps every key
