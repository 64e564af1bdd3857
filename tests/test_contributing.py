"""docs/contributing.md's three recipes, performed: a throwaway rule, a hardware entry and a target.

Rules and targets are found at run time from their packages' `__path__`, so each recipe runs in a fresh
process that adds a temporary folder to that path, exactly as a new file in the package would be found.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "contributing.md"
EXAMPLE = ROOT / "examples" / "onprem-dgx-h100.yaml"

RUNNER = """\
import sys
import {package} as package
package.__path__.append(sys.argv[1])
sys.argv = ["clusterforge", *sys.argv[2:]]
from clusterforge.cli.main import main
main()
"""

THROWAWAY_RULE = '''\
"""A throwaway rule, written the way docs/contributing.md says."""

from collections.abc import Iterator
from typing import Any

from pydantic import Field

from clusterforge.policies.config import Settings
from clusterforge.policies.context import Context
from clusterforge.policies.findings import Draft
from clusterforge.policies.inputs import Inputs, Preview
from clusterforge.policies.registry import domain, rule

DOMAIN = domain("storage", "Storage", 50)


class PoolSettings(Settings):
    max_pools: int = Field(0, ge=0, description="most pools a blueprint may have (a test setting)")


def bucket_problems(props: Any, catalog: Any) -> list[str]:
    return ["throwaway: every bucket is refused"]


@rule("TST-001", "warning", DOMAIN, "Throwaway rule", "tests/test_contributing.py", PoolSettings,
      inputs=Inputs(("pools[].name",)),
      preview=Preview(("aws:s3/bucket:Bucket",), "clusterforge.policies.domains.zz_throwaway:bucket_problems",
                      "refuses every bucket"))
def too_many_pools(ctx: Context, settings: PoolSettings) -> Iterator[Draft]:
    """A blueprint has at most `max_pools` pools."""
    if len(ctx.cluster.pools) > settings.max_pools:
        yield Draft(("pools",), f"{len(ctx.cluster.pools)} pools, more than {settings.max_pools}", "merge pools")
'''


def run(package: str, extra: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh process with `extra` appended to `package`'s module search path."""
    return subprocess.run([sys.executable, "-c", RUNNER.format(package=package), str(extra), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(extra), "NO_COLOR": "1"})


def code_block(heading: str, language: str) -> str:
    """The first `language` code block under `## heading` of docs/contributing.md."""
    section = DOC.read_text(encoding="utf-8").split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block under {heading!r}"
    return match[1]


def test_a_throwaway_rule_appears_in_rules_docs_check_and_the_crossguard_pack(tmp_path: Path) -> None:
    (tmp_path / "zz_throwaway.py").write_text(THROWAWAY_RULE)
    domains = "clusterforge.policies.domains"

    listed = run(domains, tmp_path, "rules", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    [entry] = [r for r in json.loads(listed.stdout) if r["id"] == "TST-001"]
    assert entry["domain"] == "storage" and entry["inputs"] == ["pools[].name"]
    assert entry["crossguard"] == "CrossGuard policy `TST-001` (advisory), a resource policy on `aws:s3/bucket:Bucket`"
    assert [s["key"] for s in entry["settings"]] == ["level", "enabled", "max_pools"]

    page = run(domains, tmp_path, "rules", "--format", "markdown").stdout
    assert '<a id="tst-001"></a>TST-001: Throwaway rule' in page
    assert "| `TST-001` | advisory | `aws:s3/bucket:Bucket` | refuses every bucket |" in page
    storage = page.split("### Storage", 1)[1].split("\n### ", 1)[0]
    assert "TST-001" in storage  # under its domain's heading

    checked = run(domains, tmp_path, "check", str(EXAMPLE), "--format", "json", "--fail-level", "warning")
    assert checked.returncode == 1, checked.stderr
    assert [f["message"] for f in json.loads(checked.stdout)["findings"] if f["id"] == "TST-001"] == [
        "1 pools, more than 0"]

    pack = subprocess.run(
        [sys.executable, "-c", "import sys; import clusterforge.policies.domains as d; d.__path__.append(sys.argv[1]);"
         "from pathlib import Path; from clusterforge.policies.registry import coverage;"
         "from clusterforge.targets.aws.crossguard.pack import policies;"
         "print([p.name for p in policies(Path('.'))]); print(coverage()['TST-001'])", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert pack.returncode == 0, pack.stderr
    names, covered = pack.stdout.splitlines()
    assert "'TST-001'" in names and covered == "('aws:s3/bucket:Bucket',)"


def test_without_the_module_the_rule_is_gone(tmp_path: Path) -> None:
    """The recipe test above sees the rule only because the module is there (the test can fail)."""
    listed = run("clusterforge.policies.domains", tmp_path, "rules", "--format", "json")
    assert listed.returncode == 0 and "TST-001" not in listed.stdout


def test_the_hardware_recipe_entry_loads_and_a_blueprint_uses_it(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(code_block("Add a hardware entry", "yaml"))
    [key] = yaml.safe_load(site.read_text())["hardware"]
    shown = run("clusterforge.policies.domains", tmp_path, "catalog", "show", key, "--catalog", str(site),
                "--format", "json")
    assert shown.returncode == 0, shown.stderr
    blueprint = tmp_path / "cluster.yaml"
    blueprint.write_text(EXAMPLE.read_text().replace("hardware: dgx-h100", f"hardware: {key}"))
    checked = run("clusterforge.policies.domains", tmp_path, "check", str(blueprint), "--catalog", str(site),
                  "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr  # a verdict, not an input error
    assert json.loads(checked.stdout)["verdict"] in ("pass", "fail")
    without = run("clusterforge.policies.domains", tmp_path, "check", str(blueprint))
    assert without.returncode == 2 and f"unknown hardware '{key}'" in without.stderr.replace('"', "'")


def test_a_throwaway_target_registers_and_a_blueprint_can_name_it(tmp_path: Path) -> None:
    declaration = code_block("Add a target", "python")
    name = re.search(r'name="([a-z]+)"', declaration)
    assert name
    package = tmp_path / name[1]
    package.mkdir()
    (package / "__init__.py").write_text(declaration)
    blueprint = tmp_path / "cluster.yaml"
    text = EXAMPLE.read_text().replace("target: onprem", f"target: {name[1]}")
    blueprint.write_text(re.sub(r"\nsite:.*?(?=\nfabric:)", "", text, flags=re.S).replace(
        "hardware: dgx-h100", "hardware: p5.48xlarge").replace("fabric: {kind: infiniband, switch: qm9700, "
                                                              "oversubscription: 1.0, rail_optimized: true}",
                                                              "fabric: {kind: ethernet}"))
    targets = "clusterforge.targets"
    schema = run(targets, tmp_path, "schema")
    assert schema.returncode == 0, schema.stderr
    cluster = json.loads(schema.stdout)["$defs"]["Cluster"]
    assert cluster["properties"]["target"]["enum"] == sorted(["aws", "lab", "onprem", name[1]])
    valid = run(targets, tmp_path, "validate", str(blueprint))
    assert valid.returncode == 0, valid.stderr + valid.stdout
    assert f"target {name[1]}" in valid.stdout
    unknown = run(targets, tmp_path / "none", "validate", str(blueprint))
    assert unknown.returncode == 2 and f"unknown target '{name[1]}'" in unknown.stderr
