"""The direct YAML writer reads back as exactly the data it was given, whatever the strings hold; for Ansible,
no string but a deliberate Template can be evaluated."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterforge.core.errors import ClusterforgeError
from clusterforge.render.yamlout import Template, dump, dump_ansible, load

words = st.sampled_from(["yes", "no", "on", "null", "~", "010", "0x1f", "1e3", "1.5", "12:30", "2026-01-01", "a: b",
                         "- x", "[x]", "#c", "x #c", "", " lead", "it's", 'say "hi"', "rack-01", "gpu:h100:8", "=",
                         "<<", "?", "@x", "a,b", "ünï", "tab\there", "line\nbreak"])
scalars = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
           | st.floats(allow_nan=False, allow_infinity=False) | words | st.text(max_size=12))
keys = words | st.text(min_size=1, max_size=10)
values = st.recursive(scalars | st.lists(scalars, max_size=5),
                      lambda inner: st.dictionaries(keys, inner, max_size=4)
                      | st.lists(st.dictionaries(keys, inner, min_size=1, max_size=3), min_size=1, max_size=3),
                      max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=5))
def test_round_trip(data: dict) -> None:
    assert yaml.safe_load(dump(data)) == data


def test_inventory_shape() -> None:
    data = {"all": {"children": {"pool_gpu": {"hosts": {"gpu-0001": {"rack": "a01", "rails": ["leaf-1", "leaf-2"],
                                                                        "rack_position": 1}}}}}}
    assert dump(data) == ("all:\n  children:\n    pool_gpu:\n      hosts:\n        gpu-0001:\n          rack: a01\n"
                          "          rails: [leaf-1, leaf-2]\n          rack_position: 1\n")


ansible_words = words | st.sampled_from([
    "{{ lookup('pipe', 'id') }}", "{% if true %}x{% endif %}", "{# c #}", "a {{ b", "{{", "22.05", "12.10", "true",
    "", "null", "2026-01-01", "=", "<<", "{{ x }}\nline"])


def ansible_load(text: str) -> Any:
    """Read `text` as Ansible reads an inventory or vars file (a file it trusts as a template source)."""
    from ansible.parsing.yaml.loader import AnsibleLoader
    from ansible.template import trust_as_template

    return yaml.load(trust_as_template(text), Loader=AnsibleLoader)


def templatable(data: Any) -> list[str]:
    """Every string in `data` that Ansible would evaluate if it held template syntax."""
    from ansible.template import is_trusted_as_template

    if isinstance(data, dict):
        return [s for v in data.values() for s in templatable(v)]
    if isinstance(data, list):
        return [s for v in data for s in templatable(v)]
    return [data] if isinstance(data, str) and is_trusted_as_template(data) else []


safe_keys = keys.filter(lambda k: "{" not in k)
ansible_values = st.recursive(scalars | ansible_words | st.lists(scalars | ansible_words, max_size=5),
                              lambda inner: st.dictionaries(safe_keys, inner, max_size=4)
                              | st.lists(st.dictionaries(safe_keys, inner, min_size=1, max_size=3), min_size=1,
                                         max_size=3),
                              max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys.filter(lambda k: "{" not in k), ansible_values, min_size=1, max_size=5))
def test_ansible_reads_back_the_data_and_can_evaluate_none_of_it(data: dict) -> None:
    text = dump_ansible(data)
    assert load(text) == data
    read = ansible_load(text)
    assert read == data  # the same types: '22.05' stays a string, not the float !unsafe would make of it
    assert [s for s in templatable(read) if "{" in s] == []


def test_only_a_template_stays_a_template() -> None:
    # a list of lists is a shape only PyYAML's dumper writes: the fallback keeps the same promises
    text = dump_ansible({"dir": Template("{{ inventory_dir }}/../slurm"), "text": "{{ inventory_dir }}",
                         "list": [["{% x %}"]], "version": "12.10", "n": 3})
    assert text.startswith("dir: '{{ inventory_dir }}/../slurm'\ntext: !unsafe '{{ inventory_dir }}'\n")
    assert [s for s in templatable(ansible_load(text)) if "{" in s] == ["{{ inventory_dir }}/../slurm"]
    assert "version: '12.10'" in text  # quoted, untagged: Ansible would read !unsafe 12.10 as the float 12.1


def test_a_list_of_mappings_is_a_block_sequence() -> None:
    # slurm_qos and slurm_accounts in group_vars: the direct writer, every string still !unsafe
    data = {"qos": [{"name": "high", "options": {"Priority": "1000", "Preempt": "{{ x }}"}, "users": ["a"]}],
            "n": 1}
    text = dump_ansible(data)
    assert text == ('qos:\n- name: !unsafe high\n  options:\n    Priority: "1000"\n    Preempt: !unsafe "{{ x }}"\n'
                    "  users: [!unsafe a]\nn: 1\n")
    assert load(text) == data and ansible_load(text) == data
    assert [s for s in templatable(ansible_load(text)) if "{" in s] == []


def test_a_key_with_template_syntax_is_refused() -> None:
    with pytest.raises(ClusterforgeError, match="cannot be written to an Ansible file"):
        dump_ansible({"hosts": {"{{ lookup('pipe', 'id') }}": {}}})
