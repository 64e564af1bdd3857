"""The foundations every layer stands on, importing nothing else of the package: the one exception and its problems
(`errors`), the bounds on untrusted input (`limits`), "did you mean" hints, located documents (`source`) and
pydantic's errors turned into located problems (`validation`), the constrained strings every schema shares (`text`,
`purchase`), SLURM hostlists, the paused cycle collector (`bulk`) and the package's version.

Controllers get this folder's `__init__`, `version`, `errors`, `hostlist` and `limits` without the rest
(`clusterforge.powersave.payload`): keep this file free of imports.
"""
