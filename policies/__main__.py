"""The clusterforge CrossGuard pack: `pulumi preview --policy-pack policies/`.

Only builds the PolicyPack (which starts the analyzer's gRPC server); the policies themselves live in
`clusterforge.crossguard`, importable and tested without the Pulumi engine.
"""

from pathlib import Path

from pulumi_policy import PolicyPack

from clusterforge.crossguard import PACK_NAME
from clusterforge.crossguard.pack import policies

PolicyPack(name=PACK_NAME, policies=policies(base=Path(__file__).resolve().parent))
