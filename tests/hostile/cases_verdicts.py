"""Verdicts an author cannot flip from the side: a teammate on the same site, a waiver written for another
cluster, nodes the planner cannot rack, a waiver target that would make a regex backtrack, invisible text."""

from __future__ import annotations

import re

from tests.conftest import EXAMPLES
from tests.hostile.harness import BLUEPRINT_COMMANDS, Case

ONE, TWO = frozenset({1}), frozenset({2})
DGX = (EXAMPLES / "onprem-dgx-h100.yaml").read_text(encoding="utf-8")
SHARED = EXAMPLES / "shared-site"

# The vision team on a site whose contract its 4 DGX H100 (40.8 kW) and its one QM9700 leaf (1.72 kW) exceed.
SITE = (SHARED / "site-dc1.yaml").read_text(encoding="utf-8").replace("contracted_it_kw: 300", "contracted_it_kw: 42")
VISION = (SHARED / "team-vision.yaml").read_text(encoding="utf-8")
# A one-node teammate with no fabric: together the facility carries more, never less.
TEAMMATE = """\
apiVersion: clusterforge/v1
kind: Cluster
name: ops
team: ops
target: onprem
site: !include site-dc1.yaml
pools:
  - {name: login, hardware: cpu-1u, count: 1, role: login}
placement:
  - {rack: a04, pool: login, count: 1}
"""

# The DGX example with its racks' devices removed (the planner places them) and feeds derated to half: 4 nodes
# find no rack.
AUTO = re.sub(r", devices: \[\{pool: gpu, count: 2\}\]", "",
              DGX.replace("          devices: [{pool: gpu, count: 3}]\n", ""))
HALF = "electrical: {derate: 0.5}\n"


def _waiver(cluster: str, target: str = "pools[0].hardware", reason: str = "four of six PSUs suffice here",
            approver: str = "facilities@example.com") -> str:
    scope = f"    cluster: {cluster}\n" if cluster else ""
    return (f"apiVersion: clusterforge/v1\nkind: Waivers\nwaivers:\n  - rule: PWR-003\n{scope}"
            f"    target: \"{target}\"\n    reason: \"{reason}\"\n    expires: 2099-01-01\n"
            f"    approver: \"{approver}\"\n")


BETA = DGX.replace("name: vision-h100", "name: beta")
WAIVED = ["--waivers", "{tree}/waivers.yaml", "--fail-level", "warning"]

CASES = [
    Case("verdict-teammate-lowers-load", "a one-node teammate on the same site drops the team's fabric switches "
         "from the facility load, so PWR-007 passes together where it fails alone",
         {"site-dc1.yaml": SITE, "team-vision.yaml": VISION, "team-ops.yaml": TEAMMATE},
         argv=[["check", "{tree}/team-vision.yaml"],
               ["check", "{tree}/team-vision.yaml", "{tree}/team-ops.yaml"],
               ["check", "{tree}/team-ops.yaml", "{tree}/team-vision.yaml", "-f", "json"]],
         exits={"*": ONE}, says={"check#1": "PWR-007", "check#2": "PWR-007"}, seconds=8, rss_mib=200),
    Case("verdict-waiver-crosses-clusters", "a waiver approved for cluster vision-h100 also waives cluster beta's "
         "finding when both are checked in one run",
         {"cluster.yaml": DGX, "beta.yaml": BETA, "waivers.yaml": _waiver("vision-h100")},
         argv=[["check", "{tree}/cluster.yaml", *WAIVED],
               ["check", "{tree}/cluster.yaml", "{tree}/beta.yaml", *WAIVED],
               ["check", "{tree}/beta.yaml", *WAIVED, "-f", "json"]],
         exits={"check#0": frozenset({0}), "check#1": ONE, "check#2": ONE},
         says={"check#1": "beta.yaml", "check#2": "WVR-002"}, seconds=8, rss_mib=200),
    Case("verdict-waiver-without-cluster", "a waiver file written before waivers named their cluster would apply "
         "to every cluster: refused with what to add, never silently dropped",
         {"cluster.yaml": DGX, "waivers.yaml": _waiver("")},
         argv=[["check", "{tree}/cluster.yaml", "--waivers", "{tree}/waivers.yaml"],
               ["render", "{tree}/cluster.yaml", "--waivers", "{tree}/waivers.yaml", "-o", "{out}/render"]],
         exits={"*": TWO}, says={"check#0": "add `cluster: <name>`", "render#1": "missing required key 'cluster'"},
         seconds=5, rss_mib=200),
    Case("verdict-nodes-fit-in-no-rack", "with auto placement and feeds derated to half, 4 nodes fit in no rack: "
         "plan said so, while check passed and render wrote the files",
         {"cluster.yaml": AUTO, "policy.yaml": HALF},
         argv=[[*recipe, "--policy-config", "{tree}/policy.yaml"] for recipe in (
             ["check", "{tree}/cluster.yaml"], ["check", "{tree}/cluster.yaml", "-f", "sarif"],
             ["check", "{tree}/cluster.yaml", "-f", "github"], ["check", "{tree}/cluster.yaml", "-f", "junit"],
             ["check", "{tree}/cluster.yaml", "-f", "json"], ["plan", "{tree}/cluster.yaml"],
             ["render", "{tree}/cluster.yaml", "-o", "{out}/render"],
             ["report", "{tree}/cluster.yaml", "-o", "{out}/report.html"])],
         exits={"*": ONE, "report#7": frozenset({0})},  # a report is written whatever it says; it says FAIL
         says={"check#0": "RCK-008", "check#4": "4 node(s) of pool gpu fit in no rack", "render#6": "RCK-008",
               "report#7": "FAIL: 1 error,"},
         seconds=8, rss_mib=200),
    Case("verdict-waiver-target-backtracks", "a waiver target of 299 '*' and an 'x' compiled into a regex "
         "backtracks for hours against a finding's path",
         {"cluster.yaml": DGX, "waivers.yaml": _waiver("vision-h100", "*" * 299 + "x")},
         argv=[["check", "{tree}/cluster.yaml", "--waivers", "{tree}/waivers.yaml"],
               ["check", "{tree}/cluster.yaml", "--waivers", "{tree}/waivers.yaml", "-f", "sarif"]],
         exits={"*": frozenset({0})}, says={"check#0": "WVR-002"}, seconds=5, rss_mib=200),
    Case("verdict-invisible-waiver-text", "bidi overrides and zero-width characters in a waiver's reason and "
         "approver make a CI annotation read other than it is",
         {"cluster.yaml": DGX,
          "waivers.yaml": _waiver("vision-h100", reason="approved\u202e.devres-ton\u202c by ops",
                                  approver="ops\u200b@example.com")},
         argv=[["check", "{tree}/cluster.yaml", "--waivers", "{tree}/waivers.yaml", "-f", "github"]],
         exits={"*": TWO}, says={"check#0": "no control, format or invisible characters"}, seconds=5, rss_mib=200),
    Case("verdict-invisible-description", "a right-to-left isolate and a BOM in the free-text description",
         {"cluster.yaml": DGX.replace("target: onprem", "description: \"GPU \u2067cluster\u2069 \ufeffok\"\n"
                                      "target: onprem")},
         commands=BLUEPRINT_COMMANDS, exits={"*": TWO}, says={"validate": "one line of text"}, seconds=5,
         rss_mib=200),
]
