"""What a render directory may ask for once multiplied out: NodeName lines joined per node (shared, not copied,
and bounded), the nodes its SLURM files name together, and group vars copied into hosts (counted first).

The hostile versions (a 64 KB slurm.conf asking for 3.1 GB, a 52 KB hosts.yml asking for 700 MB) run as
processes in tests/hostile/cases_day2.py (`day2-render-node-lines`, `-conf-files`, `-group-vars`); these pin the
behaviour and the messages in-process.
"""

from __future__ import annotations

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.day2.rendered import HOSTS_FILE, Rendered, conf_entries


def _joined_one_by_one(text: str) -> dict[str, str]:
    """The node texts as conf_entries made them before sharing: every node's lines joined for that node."""
    from clusterforge.core.hostlist import expand

    nodes: dict[str, str] = {}
    for raw in text.splitlines():
        line = " ".join(raw.split("#", 1)[0].split())
        word, _, rest = line.partition(" ")
        key, equals, value = word.partition("=")
        if key.lower() == "nodename" and equals and value.lower() != "default":
            for node in expand(value):
                nodes[node] = f"{nodes[node]}; {rest}" if node in nodes else rest
    return nodes


CONFS = [
    "NodeName=gpu-[1-3] A=1\nNodeName=gpu-[1-3] B=2\n",
    "NodeName=gpu-[1-4] A=1\nNodeName=gpu-[2-3] B=2\nNodeName=gpu-[3-4] C=3  # a comment\nNodeName=gpu-1 A=1\n",
    "NodeName=n[1-2],n1 A=1\nNodeName=DEFAULT X=1\nNodeName=n[1-2] A=1\nNodeName=m1\nNodeName=m1 Z=9\n",
    "NodeName=a A=1\nNodeName=b A=1\nNodeName=a B=2\nNodeName=b B=2\n",  # equal texts from different lines
]


@pytest.mark.parametrize("text", CONFS)
def test_node_texts_are_what_joining_each_node_s_lines_gives(text: str) -> None:
    assert conf_entries(text, frozenset()).nodes == _joined_one_by_one(text)


def test_nodes_the_same_lines_name_share_one_joined_text() -> None:
    conf = conf_entries("NodeName=gpu-[1-3] A=1\nNodeName=gpu-[1-3] B=2\nNodeName=gpu-9 A=1\n", frozenset())
    assert conf.nodes["gpu-1"] == "A=1; B=2" and conf.nodes["gpu-9"] == "A=1"
    assert conf.nodes["gpu-1"] is conf.nodes["gpu-2"] is conf.nodes["gpu-3"]
    assert conf.named == 7


def test_the_joins_that_are_made_stay_within_the_input_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "NodeName=n[1-50] " + "x" * 100 + "\n" + "".join(f"NodeName=n{i} W={i}\n" for i in range(1, 51))
    monkeypatch.setenv("CLUSTERFORGE_MAX_INPUT_BYTES", "1000")
    with pytest.raises(ClusterforgeError) as exc:
        conf_entries(text, frozenset(), "out/slurm/slurm.conf")
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.path) == ("out/slurm/slurm.conf", 11, "NodeName")
    assert "join into 1,051 characters" in problem.message and "CLUSTERFORGE_MAX_INPUT_BYTES" in problem.hint
    monkeypatch.setenv("CLUSTERFORGE_MAX_INPUT_BYTES", "6000")
    assert len(conf_entries(text, frozenset()).nodes) == 50


def test_a_render_s_slurm_files_name_at_most_four_times_the_node_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {HOSTS_FILE: "all: {}\n", **{f"slurm/x{i}.conf": "NodeName=n[01-10] A=1\n" for i in range(5)}}
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "10")
    with pytest.raises(ClusterforgeError) as exc:
        Rendered.from_files(files, origin="out")
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.path) == ("out/slurm/x4.conf", 1, "NodeName")
    assert "name 50 nodes up to here, over 40" in problem.message and "CLUSTERFORGE_MAX_NODES" in problem.hint
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "13")
    Rendered.from_files(files, origin="out")


POOL_VARS = ", ".join(f"v{i}: {i}" for i in range(30))
HOSTS = f"""\
all:
  children:
    small:
      vars: {{a: 1}}
      hosts: {{s1: {{x: 1}}}}
    pool:
      vars: {{{POOL_VARS}}}
      hosts:
        h1: {{x: 1}}
        h2:
        h3: {{}}
""" + "".join(f"        h{i}:\n" for i in range(4, 31))  # about 140 YAML values


def test_group_vars_copied_into_hosts_are_counted_before_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLUSTERFORGE_MAX_YAML_NODES", "200")  # four times: 800 host vars; these make 2 + 901
    with pytest.raises(ClusterforgeError) as exc:
        Rendered.from_files({HOSTS_FILE: HOSTS}, origin="out")
    problem = exc.value.problems[0]
    assert (problem.file, problem.line, problem.path) == (f"out/{HOSTS_FILE}", 6, "all.children.pool")
    assert "makes 903 host vars up to here, over 800" in problem.message
    assert "CLUSTERFORGE_MAX_YAML_NODES" in problem.hint
    monkeypatch.setenv("CLUSTERFORGE_MAX_YAML_NODES", "226")
    hosts = Rendered.from_files({HOSTS_FILE: HOSTS}).hosts
    pool = {f"v{i}": i for i in range(30)}
    assert hosts["h1"].vars == {**pool, "x": 1} and hosts["h2"].vars == pool == hosts["h30"].vars
    assert hosts["s1"].vars == {"a": 1, "x": 1} and hosts["h2"].vars is not hosts["h3"].vars


def test_a_host_s_vars_that_are_no_mapping_are_still_said_at_the_host() -> None:
    with pytest.raises(ClusterforgeError, match=r"all\.children\.pool\.hosts\.h2: is not a mapping"):
        Rendered.from_files({HOSTS_FILE: HOSTS.replace("h2:\n", "h2: [1]\n")})
