"""A blueprint's pass-through parameters (`slurm.settings`, `slurm.cgroup_settings`) merged over rendered lines.

A key clusterforge renders takes the blueprint's value in its place; a new key is appended. Two keys hold lists
clusterforge needs items of (`enable_configless`, `Contain`): there the blueprint's items are added, so a site
can add scheduler options without switching configless nodes or job containment off. Keys are compared as
SLURM reads them, ignoring case.
"""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.errors import ClusterforgeError
from clusterforge.model.slurm_references import OWNED, STRUCTURAL
from clusterforge.render.context import RenderContext

Pairs = list[tuple[str, str]]
LISTS = frozenset({"slurmctldparameters", "prologflags"})
_REFUSED = {key.lower() for key in (*STRUCTURAL, *OWNED)}


def merge(ctx: RenderContext, pairs: Pairs, settings: Mapping[str, str], field: str, *, conf: bool = True) -> Pairs:
    """`pairs` with `settings` (the blueprint's `slurm.<field>`) merged over them. Keys the model refuses are
    refused here too (`conf`: slurm.conf's rules), so a plan built past the model cannot write them."""
    out = list(pairs)
    index = {key.lower(): i for i, (key, _) in enumerate(out)}
    for key, value in settings.items():
        path = ("slurm", field, key)
        name, word = ctx.conf(key, path), ctx.conf(value, path, setting=True)
        folded = name.lower()
        if conf and folded in _REFUSED:
            raise ClusterforgeError(ctx.loaded.source.problem(path, f"{name} cannot be set in slurm.{field}"))
        at = index.get(folded)
        if at is None:
            index[folded] = len(out)
            out.append((name, word))
        elif folded in LISTS:
            ours = out[at][1].split(",")
            have = {item.lower() for item in ours}
            out[at] = (out[at][0], ",".join(ours + [item for item in word.split(",") if item.lower() not in have]))
        else:
            out[at] = (out[at][0], word)
    return out


def lines(pairs: Pairs) -> list[str]:
    return [f"{key}={value}" for key, value in pairs]
