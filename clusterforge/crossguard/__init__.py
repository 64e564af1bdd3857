"""The policy rules at `pulumi preview`: the same checks over Pulumi resource props instead of a blueprint.

Each submodule is a pure function of props (importable and testable without the Pulumi engine);
`crossguard.pack` wraps them in pulumi_policy objects, and `policies/__main__.py` only builds the
PolicyPack, because constructing one starts the gRPC analyzer server.
"""

from clusterforge.crossguard.tokens import BLUEPRINT_POLICY, COVERAGE, PACK_NAME

__all__ = ["BLUEPRINT_POLICY", "COVERAGE", "PACK_NAME"]
