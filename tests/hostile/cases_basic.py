"""Baseline cases: a valid blueprint (so the harness itself is known to pass) and free text with a template."""

from __future__ import annotations

from tests.hostile.harness import Case

VALID = """\
apiVersion: clusterforge/v1
kind: Cluster
name: tiny
target: onprem
pools:
  - {name: gpu, hardware: dgx-h100, count: 2, role: compute, partition: train}
slurm:
  partitions: [{name: train, pools: [gpu], default: true}]
"""

CASES = [
    Case("valid-baseline", "nothing hostile: every command succeeds", {"cluster.yaml": VALID},
         exits={"*": frozenset({0})}),
    Case("description-template", "Ansible template syntax in free text is accepted as text",
         {"cluster.yaml": VALID.replace("target:", "description: \"{{ lookup('pipe', 'id > /tmp/x') }}\"\ntarget:")},
         exits={"*": frozenset({0})}),
]
