"""The name of the deploy-time policy that runs every rule over the blueprint a stack reads: declared here, below
the targets, so the rule reference documents it and a target's policy pack registers it under one name."""

from __future__ import annotations

BLUEPRINT_POLICY = "clusterforge-blueprint"
