"""The rule reference's section on the CrossGuard pack (docs/policies.md, "At `pulumi preview`"): which rules also
run at `pulumi preview`, on what, and how the pack is configured. Target aws adds it to the page
(the target's `rules_reference.py`), as the pack is its own."""

from __future__ import annotations

from clusterforge.policies.reference import rules, table
from clusterforge.policies.stack_policy import BLUEPRINT_POLICY

PACK_CONFIG_EXAMPLE = """\
{
  "clusterforge-blueprint": {
    "blueprint": "../examples/aws-p5.yaml",
    "policyConfig": "../policy-config.yaml",
    "waivers": "../waivers.yaml"
  },
  "NET-006": "advisory"
}
"""

BLUEPRINT_ROW = (BLUEPRINT_POLICY, "the stack", "when configured with a `blueprint`, every rule over it; each unwaived "
                 "error is one violation, `file:line: ID: message`")


def crossguard() -> list[str]:
    rows = [(f"`{r.id}`", "mandatory" if r.level == "error" else "advisory",
             "the stack" if r.preview.scope == "stack" else ", ".join(f"`{t}`" for t in r.preview.types),
             r.preview.checks) for r in rules() if r.preview is not None]
    rows.append((f"`{BLUEPRINT_ROW[0]}`", "mandatory", *BLUEPRINT_ROW[1:]))
    return [
        "## At `pulumi preview`: the CrossGuard pack", "",
        "The same rule functions run as a Pulumi policy pack (`policy-pack/` in this repository), on the resources a "
        "stack is about to create:", "",
        "```sh", "pulumi preview --policy-pack policy-pack/ --policy-pack-config policy-pack-config.json", "```", "",
        *table(("Policy", "Enforcement", "Runs on", "Checks"), rows), "",
        "Pack config (`policy-pack-config.json`): relative paths start at the pack directory; an enforcement level "
        "per policy overrides the default:", "",
        "```json", *PACK_CONFIG_EXAMPLE.splitlines(), "```", "",
        "Props are read by their camelCase wire names and numbers may arrive as `32.0`. Values Pulumi does not know "
        "during preview (ids of resources not yet created) are skipped, or resolved through the engine's property "
        "dependencies; `pulumi up` checks them again once known.", "",
    ]
