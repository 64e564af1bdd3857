"""The direct YAML writer reads back as exactly the data it was given, whatever the strings hold."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterforge.render.yamlout import dump

words = st.sampled_from(["yes", "no", "on", "null", "~", "010", "0x1f", "1e3", "1.5", "12:30", "2026-01-01", "a: b",
                         "- x", "[x]", "#c", "x #c", "", " lead", "it's", 'say "hi"', "rack-01", "gpu:h100:8", "=",
                         "<<", "?", "@x", "a,b", "ünï", "tab\there", "line\nbreak"])
scalars = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
           | st.floats(allow_nan=False, allow_infinity=False) | words | st.text(max_size=12))
keys = words | st.text(min_size=1, max_size=10)
values = st.recursive(scalars | st.lists(scalars, max_size=5),
                      lambda inner: st.dictionaries(keys, inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=5))
def test_round_trip(data: dict) -> None:
    assert yaml.safe_load(dump(data)) == data


def test_inventory_shape() -> None:
    data = {"all": {"children": {"pool_gpu": {"hosts": {"gpu-0001": {"rack": "a01", "rails": ["leaf-1", "leaf-2"],
                                                                        "rack_position": 1}}}}}}
    assert dump(data) == ("all:\n  children:\n    pool_gpu:\n      hosts:\n        gpu-0001:\n          rack: a01\n"
                          "          rails: [leaf-1, leaf-2]\n          rack_position: 1\n")
