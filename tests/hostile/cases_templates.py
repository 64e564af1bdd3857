"""`new`: template parameters are untrusted (`--set` from anyone, templates from a folder in a pull request)."""

from __future__ import annotations

from tests.hostile.harness import Case

REFUSED = {"*": frozenset({2})}
OUT = ["-o", "{out}/x.yaml"]

BODY = "apiVersion: clusterforge/v1\nkind: Cluster\nname: {{ name }}\ntarget: onprem\n" \
       "pools: [{name: gpu, hardware: dgx-h100, count: {{ nodes }}}]\n"
PARAMS = "description: test\nparams:\n" \
         "  name: {type: str, default: t, pattern: '^[a-z][a-z0-9-]{0,39}$', help: name}\n" \
         "  nodes: {type: int, default: 2, ge: 1, le: 8, help: nodes}\n"

CASES = [
    Case("templates-mgs-nid-quote", "a quote in lustre_mgs_nid adds keys to the generated blueprint", {},
         argv=[["new", "dgx-h100-superpod", "--set",
                'lustre_mgs_nid=10.0.0.10@o2ib", fsname: x}\nslurm: {partitions: []}\n#', *OUT]],
         exits=REFUSED, says={"new#0": "parameter lustre_mgs_nid="}),
    Case("templates-name-newline", "a newline in a string parameter", {},
         argv=[["new", "onprem-dev", "--set", "name=dev\nteam: evil", *OUT]],
         exits=REFUSED, says={"new#0": "not of the allowed form"}),
    Case("templates-float-nan", "nan for a float parameter", {},
         argv=[["new", "dgx-h100-superpod", "--set", "max_inlet_c=nan", *OUT]],
         exits=REFUSED, says={"new#0": "parameter max_inlet_c='nan'"}),
    Case("templates-default-out-of-range", "a template whose own default is outside its range",
         {"tpl/t/params.yaml": PARAMS.replace("default: 2,", "default: 99,"), "tpl/t/blueprint.yaml.j2": BODY},
         argv=[["new", "t", "--templates", "{tree}/tpl", *OUT]],
         exits=REFUSED, says={"new#0": "params.nodes.default: the default of nodes"}),
    Case("templates-string-without-pattern", "a string parameter without a pattern",
         {"tpl/t/params.yaml": PARAMS.replace(" pattern: '^[a-z][a-z0-9-]{0,39}$',", ""),
          "tpl/t/blueprint.yaml.j2": BODY},
         argv=[["new", "t", "--templates", "{tree}/tpl", "--set", "name=x", *OUT]],
         exits=REFUSED, says={"new#0": "a str parameter needs a pattern"}),
]
