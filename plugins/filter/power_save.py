"""Filters for the slurm role's power-save steps.

`controller_modules` is the list of clusterforge's files a controller gets to run the power-save programs, derived
from their imports by `clusterforge/powersave/payload.py` of the tree the role copies them from (loaded by path:
that tree is a checkout, the installed release's copy or the roles bundle on a baked node, none of which need be
importable here). So the role lists no module by hand, and a module split or added is copied without an edit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ansible.errors import AnsibleFilterError

PAYLOAD = "clusterforge/powersave/payload.py"


def controller_modules(source: str) -> list[str]:
    """The files under `source` (the folder holding clusterforge/) that the power-save programs need."""
    path = Path(source) / PAYLOAD
    if not path.is_file():
        raise AnsibleFilterError(
            f"slurm_power_save_source {source!r} holds no {PAYLOAD}: set it to the folder holding clusterforge/ "
            "(a checkout, or python3 -c 'import clusterforge, pathlib; print(pathlib.Path(clusterforge.__file__)"
            ".parents[1])' where clusterforge is installed)")
    spec = importlib.util.spec_from_file_location("clusterforge_power_save_payload", path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has a loader
        raise AnsibleFilterError(f"{path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.controller_modules(Path(source)))


class FilterModule:
    def filters(self) -> dict[str, object]:
        return {"controller_modules": controller_modules}
