"""The rule reference: `clusterforge rules`, and docs/policies.md generated from the registry and never stale."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from clusterforge.catalog import Instance, Server, Switch
from clusterforge.policies import load_policy_config, load_waivers
from clusterforge.policies.reference import (
    POLICY_CONFIG_EXAMPLE,
    REGENERATE,
    WAIVERS_EXAMPLE,
    page,
    rules,
    section_docs,
    setting_docs,
)
from clusterforge.policies.registry import REGISTRY
from clusterforge.target_kernel import blueprint_model, catalog_parts
from clusterforge.targets.aws.crossguard.blueprint import CONFIG_KEYS
from clusterforge.targets.aws.crossguard.reference import PACK_CONFIG_EXAMPLE
from tests.conftest import ROOT

DOC = ROOT / "docs" / "policies.md"
SHARED_POLICIES = ROOT.parent / "shared" / "POLICIES.md"


def test_docs_page_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == page(), f"docs/policies.md is stale: run `{REGENERATE}`"


def policies_md_ids() -> list[str]:
    if not SHARED_POLICIES.is_file():
        pytest.skip(f"{SHARED_POLICIES} is not present")
    rows = re.findall(r"^\|\s*([A-Z]{2,4}-\d{3})\s*\|", SHARED_POLICIES.read_text(encoding="utf-8"), re.MULTILINE)
    assert len(rows) >= 30, "the POLICIES.md tables were not parsed"
    return rows


# Rules this project adds beyond POLICIES.md: the security defaults of the AWS stack (reliability issue), the
# production SLURM rules, NIC against switch port speed (Ethernet fabrics and split ports), and the software
# stack against the accelerators' vendor (AMD Instinct, Trainium), and room in the racks for the fabric's
# switches (issue 17) and every node in a rack, the switch's and NICs' protocol, FSx metadata IOPS, and the
# EC2 launch rate and fleet sizes at 12,500 nodes, power providers and one site per partition (issue 33), and unit
# slips in any figure of the blueprint (UNIT-001).
ADDITIONS = ("SEC-001", "SEC-002", "SEC-003", "SEC-004", "SW-003", "SW-004",
             "SLM-003", "SLM-004", "SLM-005", "SLM-006", "SLM-007", "NET-007", "RCK-007", "RCK-008",
             "NET-008", "NET-009", "STO-004", "SW-005", "COST-001", "COST-002", "COST-003", "PWR-008", "FLT-001",
             "FLT-002", "FLT-003", "FLT-004", "SLM-008", "SLM-009", "UNIT-001")


def test_every_policies_md_id_is_registered_and_documented() -> None:
    ids = policies_md_ids()
    text = DOC.read_text(encoding="utf-8")
    rules()  # registers
    for rule_id in ids:
        assert rule_id in REGISTRY, f"{rule_id} is in POLICIES.md but not registered"
        assert f'<a id="{rule_id.lower()}"></a>{rule_id}: {REGISTRY[rule_id].title}' in text, rule_id
    extra = sorted(set(REGISTRY) - set(ids))
    assert extra == sorted(ADDITIONS), f"rules beyond POLICIES.md must be listed in ADDITIONS: {extra}"
    for rule_id in ADDITIONS:
        assert f'<a id="{rule_id.lower()}"></a>{rule_id}: {REGISTRY[rule_id].title}' in text, rule_id


def test_rules_follow_policies_md_order() -> None:
    ids = policies_md_ids()
    assert [r.id for r in rules() if r.id not in ADDITIONS] == ids


def test_every_rule_lists_its_inputs() -> None:
    assert all(r.inputs.fields for r in rules())


def _expand(path: str) -> list[str]:
    """`a[].{b,c}` → `a[].b`, `a[].c`."""
    match = re.fullmatch(r"(.*)\.\{([^}]*)\}", path)
    return [f"{match[1]}.{leaf}" for leaf in match[2].split(",")] if match else [path]


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models a field can hold: through lists, optionals, unions and Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models(arg)]


def blueprint_field_exists(path: str) -> bool:
    models: list[type[BaseModel]] = [blueprint_model()]  # with every target's section and pool fields
    for segment in path.split("."):
        name = segment.removesuffix("[]")
        fields = [m.model_fields[name] for m in models if name in m.model_fields]
        if not fields:
            return False
        models = [sub for field in fields for sub in _models(field.annotation)]
    return True


def test_listed_inputs_are_real_blueprint_fields_and_catalog_figures() -> None:
    kinds = [Server, Instance, Switch, *(part.instance for part in catalog_parts() if part.instance is not None)]
    figures = {name for kind in kinds for name in kind.model_fields}  # the targets' kinds of instance type too
    for rule_id, inputs in ((r.id, r.inputs) for r in rules()):
        for path in (p for listed in inputs.fields for p in _expand(listed)):
            assert blueprint_field_exists(path), f"{rule_id}: {path} is not a blueprint field"
        assert set(inputs.catalog) <= figures, f"{rule_id}: {set(inputs.catalog) - figures} are not catalog figures"
        assert set(inputs.shared) <= {"electrical", "cooling"}, rule_id


def test_field_check_rejects_made_up_fields() -> None:
    assert blueprint_field_exists("site.rows[].racks[].cooling.liquid_kw")  # one variant of a union has it
    assert not blueprint_field_exists("site.rows[].racks[].feeds[].volts")
    assert not blueprint_field_exists("pools[].count.value")


def test_every_threshold_documents_its_default() -> None:
    for rule in rules():
        for setting in setting_docs(rule)[2:]:
            assert setting.description, f"{rule.id}.{setting.key} has no description (the source of its default)"


def _leaves(model: type[BaseModel], prefix: str) -> dict[str, Any]:
    """The leaf keys of a policy-config section and their defaults, walked here apart from the reference's walk."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            out |= _leaves(field.annotation, f"{prefix}.{name}")
        else:
            out[f"{prefix}.{name}"] = field.default
    return out


def test_the_page_lists_every_health_threshold_with_its_default_and_meaning() -> None:
    from clusterforge.policies.config import HealthSettings

    text = DOC.read_text(encoding="utf-8")
    keys = _leaves(HealthSettings, "health")
    assert {"health.perf.fleet_tolerance", "health.perf.gemm_floor", "health.perf.hbm_floor"} <= set(keys)
    for key, default in keys.items():
        row = re.search(rf"^\| `{re.escape(key)}` \| `{default:g}` \| (.+) \|$", text, re.MULTILINE)
        assert row and len(row.group(1)) > 20, f"{key} (default {default:g}) is not on the page with its meaning"
    assert "`health.perf`: How far below its fleet or its datasheet" in text


def test_a_threshold_added_to_the_model_appears_by_itself(monkeypatch) -> None:
    from pydantic import Field, create_model

    from clusterforge.policies import config, reference

    perf = create_model("Perf", __base__=config.PerfTolerances, allreduce_floor=(float, Field(
        0.7, gt=0, lt=1, description="a node is slow below this fraction of its fabric's all-reduce bandwidth")))
    health = create_model("Health", __base__=config.HealthSettings, perf=(perf, perf()))
    monkeypatch.setattr(reference, "PolicyConfig", create_model(
        "Config", __base__=config.PolicyConfig, health=(health, health())))
    rows = {row.key: row for row in section_docs("health")}
    assert rows["health.perf.allreduce_floor"].default == "0.7"
    assert rows["health.perf.allreduce_floor"].description == (
        "a node is slow below this fraction of its fabric's all-reduce bandwidth (> 0, < 1)")
    assert "| `health.perf.allreduce_floor` | `0.7` |" in page()


def test_policy_config_example_loads_and_takes_effect(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY_CONFIG_EXAMPLE)
    config = load_policy_config(path)
    rules()
    assert REGISTRY["PWR-002"].settings_for(config).model_dump()["warn_fraction"] == 0.85  # a threshold
    assert REGISTRY["PWR-005"].settings_for(config).level == "error"  # a level
    assert REGISTRY["RCK-006"].settings_for(config).enabled is False
    assert config.health.perf.fleet_tolerance == 0.05  # a section no rule reads


def test_waiver_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVERS_EXAMPLE)
    [waiver] = load_waivers(path)
    assert waiver.matches("PWR-002", "site.rows[0].racks[3].feeds", "vision-h100")
    assert not waiver.matches("PWR-002", "site.rows[1].racks[3].feeds", "vision-h100")
    assert not waiver.matches("PWR-002", "site.rows[0].racks[3].feeds", "nlp-p5")


def test_pack_config_example_names_real_policies_and_keys() -> None:
    from clusterforge.policies.registry import coverage
    from clusterforge.targets.aws.crossguard import BLUEPRINT_POLICY

    rules()
    config = json.loads(PACK_CONFIG_EXAMPLE)
    assert set(config) <= {*coverage(), BLUEPRINT_POLICY}
    assert set(config[BLUEPRINT_POLICY]) <= set(CONFIG_KEYS)


def test_rules_lists_every_rule(cli) -> None:
    result = cli("rules")
    assert result.exit_code == 0
    for rule in rules():
        assert rule.id in result.stdout


def test_rules_markdown_prints_the_page(cli) -> None:
    result = cli("rules", "--format", "markdown")
    assert result.exit_code == 0 and result.stdout == page()


def test_rules_json(cli) -> None:
    data = json.loads(cli("rules", "--format", "json").stdout)
    assert [r["id"] for r in data] == [r.id for r in rules()]
    [net005] = [r for r in data if r["id"] == "NET-005"]
    assert "aws:ec2/launchTemplate:LaunchTemplate" in net005["crossguard"]


def test_rules_show_gives_doc_level_source_and_settings(cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: whole table rows and lines, as matched below
    result = cli("rules", "show", "PWR-002")
    assert result.exit_code == 0
    out = result.stdout
    assert "either side alone must carry the whole rack" in out  # the docstring
    assert "level:      error (default)" in out
    assert "NVIDIA DGX SuperPOD RA" in out  # the source
    assert re.search(r"warn_fraction\s+0\.9\s+warn when a rack uses this share of one side", out)


def test_rules_show_unknown_id(cli) -> None:
    result = cli("rules", "show", "PWR-02")
    assert result.exit_code == 2
    assert "did you mean PWR-002?" in result.stderr
