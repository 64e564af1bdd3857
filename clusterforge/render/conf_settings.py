"""A blueprint's pass-through parameters (`slurm.settings`, `slurm.cgroup_settings`) merged over rendered lines.

A key clusterforge renders takes the blueprint's value in its place; a new key is appended. Some keys hold lists
of options clusterforge needs (`enable_configless`, `Contain`, `nohold_on_prolog_fail`, `cred_expire=`): there
the blueprint's items are added, an item with an option name clusterforge wrote (`sched_interval=20`) replacing
its own, so a site can add scheduler options without switching configless nodes or job containment off. Keys are
compared as SLURM reads them, ignoring case.
"""

from __future__ import annotations

from collections.abc import Mapping

from clusterforge.core.errors import ClusterforgeError
from clusterforge.model.slurm_references import STRUCTURAL, owned
from clusterforge.render.context import RenderContext

Pairs = list[tuple[str, str]]
LISTS = frozenset({"slurmctldparameters", "prologflags", "schedulerparameters", "authinfo", "communicationparameters"})


def merge(ctx: RenderContext, pairs: Pairs, settings: Mapping[str, str], field: str, *, conf: bool = True) -> Pairs:
    """`pairs` with `settings` (the blueprint's `slurm.<field>`) merged over them. Keys the model refuses are
    refused here too (`conf`: slurm.conf's rules), so a plan built past the model cannot write them."""
    out = list(pairs)
    refused = {key.lower() for key in (*STRUCTURAL, *owned())}
    index = {key.lower(): i for i, (key, _) in enumerate(out)}
    for key, value in settings.items():
        path = ("slurm", field, key)
        name, word = ctx.conf(key, path), ctx.conf(value, path, setting=True)
        folded = name.lower()
        if conf and folded in refused:
            raise ClusterforgeError(ctx.loaded.source.problem(path, f"{name} cannot be set in slurm.{field}"))
        at = index.get(folded)
        if at is None:
            index[folded] = len(out)
            out.append((name, word))
        elif folded in LISTS:
            out[at] = (out[at][0], merged_options(out[at][1], word))
        else:
            out[at] = (out[at][0], word)
    return out


def merged_options(ours: str, theirs: str) -> str:
    """Comma-separated options, theirs over ours: a bare option is added once, `name=value` replaces our `name=`."""
    items = ours.split(",")
    for item in theirs.split(","):
        name = item.split("=", 1)[0].lower()
        at = next((i for i, have in enumerate(items) if have.split("=", 1)[0].lower() == name), None)
        if at is None:
            items.append(item)
        elif "=" in item:
            items[at] = item
    return ",".join(items)


def lines(pairs: Pairs) -> list[str]:
    return [f"{key}={value}" for key, value in pairs]
