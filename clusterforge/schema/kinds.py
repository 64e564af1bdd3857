"""The model each kind of file is loaded with, as the loader reads it (clusterforge/blueprint/load.py,
compose/shared_site.py, policies/config_file.py, policies/waivers.py, catalog/loader.py; the blueprint and the
catalog with every registered target's parts).

A Site file is the `site:` section of a blueprint, written once and included (`site: !include site-dc1.yaml`):
the include drops its `apiVersion` and `kind`, so its model is the Site's plus those two. A policy config's
`rules:` sections are checked against each rule's own settings (policies/registry.py), so its model names every
registered rule with that rule's settings.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

API_VERSION = "clusterforge/v1"


def _site_file() -> type[BaseModel]:
    from clusterforge.model import Site

    return create_model("SiteFile", __base__=Site, __doc__=Site.__doc__,
                        apiVersion=(Literal["clusterforge/v1"], API_VERSION), kind=(Literal["Site"], ...))


def _rules() -> type[BaseModel]:
    """`rules:` of a policy config: each registered rule id, with its settings; no other key."""
    from clusterforge.policies.discovery import load_rules
    from clusterforge.policies.registry import REGISTRY

    load_rules()
    fields: dict[str, Any] = {
        f"rule_{i}": (rule.settings | None, Field(None, alias=rule.id))
        for i, rule in enumerate(sorted(REGISTRY.values(), key=lambda r: r.id))}
    return create_model("Rules", __config__=ConfigDict(extra="forbid"), **fields)


def _policy_config() -> type[BaseModel]:
    from clusterforge.policies.config import PolicyConfig

    return create_model("PolicyConfigFile", __base__=PolicyConfig, __doc__=PolicyConfig.__doc__,
                        rules=(_rules(), None))


def kind_models() -> dict[str, type[BaseModel]]:
    """Each kind (the value of `kind:`) and the model of a file of that kind, Cluster first."""
    from clusterforge.catalog.parts import file_model
    from clusterforge.policies.waivers import WaiverFile
    from clusterforge.target_kernel import blueprint_model, catalog_parts

    return {"Cluster": blueprint_model(), "Site": _site_file(), "PolicyConfig": _policy_config(),
            "Waivers": WaiverFile, "Catalog": file_model(catalog_parts())}


def kind_optional(model: type[BaseModel]) -> bool:
    """Whether the loader takes a file of this kind without `kind:` (its model has a default for it)."""
    return not model.model_fields["kind"].is_required()
