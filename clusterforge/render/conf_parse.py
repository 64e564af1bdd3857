"""The SLURM files of a render read as data (`conf_entries`): the render manifest classes slurm.conf's keys from
it, and day2's diff, rolling and update modules read slurm.conf, gres.conf and the like through it, with or
without a whole `Rendered`.

Every line is keyed by what it sets, and the NodeName lines by node, so a diff compares nodes rather than
hostlist expressions that grow with the cluster. The files can come from an untrusted render directory, so
what they ask for is bounded before it is built: the NodeName lines of one file name at most limits.NODES
nodes, those of all a render's SLURM files total_named_nodes(); a node that several NodeName lines name shares
the joined text with every node those same lines name (one string, not one copy per node), and the joined
text that is made at all stays within limits.INPUT_BYTES.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.core.hostlist import count, expand


def total_named_nodes() -> int:
    """The nodes the NodeName lines of a render's SLURM files may name together: four times the node limit, as
    slurm.conf and gres.conf each name every node. Each name costs its expansion, so without this bound the
    MAX_FILES files of a render directory (rendered.py) could each name limits.NODES nodes (seconds of work
    from a few kilobytes)."""
    return 4 * limits.NODES.value


@dataclass(frozen=True)
class Conf:
    """A SLURM config file as data: every entry by key (`MaxJobCount`, `PartitionName=debug`, `SlurmctldHost#2`
    for a key's second line) and every node named by a NodeName line with the rest of its line(s)."""

    entries: dict[str, str]
    nodes: dict[str, str]
    named: int = 0  # the nodes its NodeName lines name, a node named twice counted twice


def conf_entries(text: str, named: frozenset[str], file: str = "slurm.conf", named_before: int = 0) -> Conf:
    """Parse a SLURM config file: comments and blank lines dropped; lines whose first key is in `named`
    (lowercase) keyed `Key=Name`; NodeName lines (but NodeName=DEFAULT) by node; a line without '=' by itself.
    The NodeName lines together may name at most limits.NODES nodes, and with the `named_before` of a render's
    other files at most total_named_nodes() (`file` names the file in those messages).

    A node named by several lines gets their texts joined. The nodes that the same lines name share one joined
    string (made once, by the text so far and the line that extends it), so two lines naming 49,000 nodes cost
    one join rather than 49,000 copies of both lines; the joins that are made (nodes named by different lines)
    may hold at most limits.INPUT_BYTES characters together."""
    entries: dict[str, str] = {}
    nodes: dict[str, str] = {}
    joined: dict[tuple[str, int], str] = {}  # (a node's text so far, line number) -> that text with the line's
    made, text_bound = 0, limits.INPUT_BYTES.value
    seen: Counter[str] = Counter()
    named_so_far, bound, total_bound = 0, limits.NODES.value, total_named_nodes()
    for number, raw in enumerate(text.splitlines(), 1):
        line = " ".join(raw.split("#", 1)[0].split())
        if not line:
            continue
        word, _, rest = line.partition(" ")
        key, equals, value = word.partition("=")
        if key.lower() == "nodename" and equals and value.lower() != "default":
            try:
                named_so_far += count(value)
                if named_so_far > bound:
                    raise ClusterforgeError(Problem(f"the NodeName lines name {named_so_far:,} nodes up to here, over "
                                                    f"the limit of {bound:,}", hint=limits.NODES.hint()))
                if named_before + named_so_far > total_bound:
                    raise ClusterforgeError(Problem(
                        f"the NodeName lines of this render's SLURM files name {named_before + named_so_far:,} nodes "
                        f"up to here, over {total_bound:,} (four times the node limit)", hint=limits.NODES.hint()))
                names = expand(value, bound)
            except ClusterforgeError as exc:
                raise ClusterforgeError([replace(p, file=file, line=number, path=key) for p in exc.problems]) from None
            for node in names:
                before = nodes.get(node)
                if before is None:
                    nodes[node] = rest
                    continue
                after = joined.get((before, number))
                if after is None:
                    made += len(before) + 2 + len(rest)
                    if made > text_bound:
                        raise ClusterforgeError(Problem(
                            f"the NodeName lines that name the same nodes join into {made:,} characters of node "
                            f"settings up to here, over {text_bound:,} (the input limit)", file, number, key,
                            limits.INPUT_BYTES.hint()))
                    after = joined[(before, number)] = f"{before}; {rest}"
                nodes[node] = after
            continue
        if not equals:
            key, value = line, ""
        elif key.lower() in named or key.lower() == "nodename":
            key, value = word, rest
        else:
            value = line[len(key) + 1:]
        seen[key] += 1
        entries[key if seen[key] == 1 else f"{key}#{seen[key]}"] = value
    return Conf(entries, nodes, named_so_far)
