"""The policy rules at `pulumi preview`: the same checks over Pulumi resource props instead of a blueprint.

Each submodule is a pure function of props (importable and testable without the Pulumi engine);
`crossguard.pack` wraps them in pulumi_policy objects, one per rule that declares a `Preview`, and
`policy-pack/__main__.py` only builds the PolicyPack, because constructing one starts the gRPC analyzer server.
"""

from clusterforge.targets.aws.crossguard.tokens import BLUEPRINT_POLICY, PACK_NAME

__all__ = ["BLUEPRINT_POLICY", "PACK_NAME"]
