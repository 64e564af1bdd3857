"""The clusterforge CrossGuard pack: `pulumi preview --policy-pack policy-pack/`.

Only builds the PolicyPack (which starts the analyzer's gRPC server); the policies themselves live in
`clusterforge.targets.aws.crossguard`, importable and tested without the Pulumi engine.
"""

from pathlib import Path

from pulumi_policy import PolicyPack

from clusterforge.targets.aws.crossguard import PACK_NAME
from clusterforge.targets.aws.crossguard.pack import policies

PolicyPack(name=PACK_NAME, policies=policies(base=Path(__file__).resolve().parent))
