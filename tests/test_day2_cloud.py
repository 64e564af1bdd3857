"""`diff` classes cloud changes as it does slurm.conf keys: what the AWS stack builds (pulumi/resources.yaml) compared
resource by resource, each setting's effect from the provider's documented behaviour (data/cloud-changes.yaml). An
FSx resize is in place, a deployment type replaces the file system and loses its data (the largest action, which
`update` refuses without --accept-data-loss), an instance type rolls the pool's nodes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from clusterforge.day2.changes import Diff
from clusterforge.render.change_classes import UNCLASSIFIED, Action
from clusterforge.render.manifest import Case, Classed, direction
from clusterforge.render.resource_file import Resource, read
from clusterforge.targets.aws.cloud_changes import ACTIONS, load, table
from clusterforge.targets.aws.cloud_resources import RESOURCES_FILE
from tests.conftest import EXAMPLES
from tests.test_day2_diff import diff_of, edited

AWS = EXAMPLES / "aws-p5.yaml"  # 64 p5.48xlarge on a Capacity Block, FSx PERSISTENT_2 50,400 GiB at 250 MB/s/TiB
FSX = "capacity_gib: 50400, deployment_type: PERSISTENT_2, throughput_mb_s_per_tib: 250"
GPU = [f"gpu-{n:04d}" for n in range(1, 65)]
REPO = Path(__file__).resolve().parents[1]


def changed(write, *edits: tuple[str, str], name: str = "new.yaml") -> Path:
    return write(edited(AWS, *edits), name)


def cloud(diff: Diff) -> dict[str, tuple[Action, tuple[str, ...], str | None, str | None]]:
    """The changes of the resources file by key: action, hosts, old and new value."""
    return {c.key: (c.action, c.hosts, c.old, c.new) for c in diff.changes if c.file == "resources"}


def test_an_fsx_resize_is_listed_in_place(write, cli) -> None:
    new = changed(write, ("capacity_gib: 50400", "capacity_gib: 60000"))
    diff = diff_of(AWS, new)
    assert cloud(diff) == {"fsx.storage_capacity_gib": (Action.NONE, (), "50400", "60000")}
    [change] = [c for c in diff.changes if c.file == "resources"]
    assert "grown in place" in change.why and "managing-storage-capacity" in change.why
    assert diff.largest == Action.NONE and not diff.loses_data
    result = cli("diff", AWS, new)
    assert result.exit_code == 0, result.output
    assert re.search(r"^  NONE +no host: grown in place", result.stdout, re.M), result.stdout
    assert "    resources: fsx.storage_capacity_gib: 50400 -> 60000" in result.stdout.splitlines()


def test_an_fsx_shrink_replaces_it_and_loses_its_data(write) -> None:
    diff = diff_of(AWS, changed(write, ("capacity_gib: 50400", "capacity_gib: 48000")))
    assert cloud(diff)["fsx.storage_capacity_gib"][0] == Action.LOSE_DATA and diff.loses_data


def test_a_deployment_type_change_loses_the_file_systems_data_and_is_the_largest_action(write, cli) -> None:
    new = changed(write, (FSX, "capacity_gib: 50400, deployment_type: SCRATCH_2"))
    diff = diff_of(AWS, new)
    found = cloud(diff)
    action, hosts, old, after = found["fsx.deployment_type"]
    assert (action, old, after) == (Action.LOSE_DATA, "PERSISTENT_2", "SCRATCH_2")
    assert set(hosts) == {*GPU, "controller-0001"}  # every node mounts it
    # the settings that go with the new file system are listed with its replacement, not as changes in place
    assert {key: value[0] for key, value in found.items()} == {
        "fsx.deployment_type": Action.LOSE_DATA, "fsx.throughput_mb_s_per_tib": Action.LOSE_DATA,
        "fsx.metadata_mode": Action.LOSE_DATA}
    assert diff.largest == Action.LOSE_DATA > Action.LOSE_JOBS and diff.loses_data and diff.disruptive
    result = cli("diff", AWS, new)
    assert result.exit_code == 1, result.output
    assert re.search(r"^  LOSE_DATA +65 hosts .*: another deployment type is another file", result.stdout, re.M)
    verdict = " ".join(result.stdout.split("\nloses data: ", 1)[1].split())
    assert verdict.startswith("the provider replaces or deletes a file system, and every byte on it is lost")
    assert verdict.endswith("(largest action: LOSE_DATA): fsx.deployment_type")
    data = json.loads(cli("diff", AWS, new, "-f", "json").stdout)
    assert data["largest"] == "LOSE_DATA" and data["loses_data"] is True and data["disruptive"] is True
    assert any(c["key"] == "fsx.deployment_type" and "ForceNew: true" in c["why"] for c in data["changes"])
    body = cli("diff", AWS, new, "-f", "markdown").stdout
    assert "**loses data: the provider replaces or deletes a file system" in body
    assert re.search(r"^\| LOSE_DATA \| 65: .*`resources: fsx.deployment_type`", body, re.M), body


def test_an_instance_type_change_is_a_rolling_replacement_of_that_pool(write, cli) -> None:
    new = changed(write, ("hardware: p5.48xlarge", "hardware: p5e.48xlarge"))
    diff = diff_of(AWS, new)
    action, hosts, old, after = cloud(diff)["pool gpu.instance_type"]
    assert (action, hosts, old, after) == (Action.REIMAGE, tuple(GPU), "p5.48xlarge", "p5e.48xlarge")
    assert "controller-0001" not in hosts and diff.interrupted == tuple(GPU)
    result = cli("diff", AWS, new)
    assert result.exit_code == 1
    assert re.search(r"^  REIMAGE +64 hosts gpu-\[0001-0064\]: the template gets a new version", result.stdout,
                     re.M), result.stdout
    assert "(a rolling replacement of the pool)" in result.stdout.replace("\n               ", " ")


@pytest.mark.parametrize(("edit", "key", "says"), [
    (("cr-0123456789abcdef0", "cr-0fedcba9876543210"), "pool gpu.capacity_reservation", "capacity it was launched"),
    (("type: capacity-block", "type: odcr"), "pool gpu.capacity", "capacity it was launched"),
    (("role: compute,", "role: compute, placement: none,"), "pool gpu.placement_group", "placement group only"),
    (("role: compute,", "role: compute, efa_interfaces: 16,"), "pool gpu.efa_interfaces", "running instance"),
])
def test_capacity_placement_and_efa_changes_roll_the_pool(write, edit: tuple[str, str], key: str, says: str) -> None:
    diff = diff_of(AWS, changed(write, edit))
    action, hosts, _, _ = cloud(diff)[key]
    assert (action, hosts) == (Action.REIMAGE, tuple(GPU))
    assert says in next(c.why for c in diff.changes if c.key == key)


def test_growing_the_pool_is_in_place_and_interrupts_no_running_node(write) -> None:
    diff = diff_of(AWS, changed(write, ("count: 64", "count: 96")))
    assert cloud(diff) == {"pool gpu.count": (Action.NONE, (), "64", "96")}
    assert diff.interrupted == () and not diff.disruptive


def test_the_s3_link_of_persistent_2_is_in_place_and_of_other_types_replaces(write) -> None:
    old = changed(write, ("vpc_cidr: 10.0.0.0/16", "vpc_cidr: 10.0.0.0/16\n  data_bucket: s3://team-a/x"),
                  name="old.yaml")
    new = changed(write, ("vpc_cidr: 10.0.0.0/16", "vpc_cidr: 10.0.0.0/16\n  data_bucket: s3://team-b/x"))
    assert cloud(diff_of(old, new))["fsx data.data_repository_path"][0] == Action.NONE
    removed = cloud(diff_of(old, AWS))
    assert removed["fsx data"][:4:2] == (Action.NONE, "fsx-data-repository-association")


def test_removing_the_file_system_loses_its_data_and_adding_one_does_not(write) -> None:
    without = changed(write, (f"storage:\n  lustre: {{mount: /fsx, {FSX}}}\n", ""), name="without.yaml")
    assert cloud(diff_of(AWS, without))["fsx"][0] == Action.LOSE_DATA
    assert cloud(diff_of(without, AWS))["fsx"][0] == Action.NONE


def test_update_refuses_a_change_that_loses_data_unless_accepted(write, cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    new = changed(write, (FSX, "capacity_gib: 50400, deployment_type: SCRATCH_2"))
    result = cli("update", AWS, new, "-o", tmp_path / "out", "--dry-run", "-f", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["would_apply"] is False and doc["refused"]["reason"] == "loses_data"
    assert "--accept-data-loss" in doc["refused"]["hint"] and doc["diff"]["loses_data"] is True
    assert "fsx.deployment_type" in {c["key"] for c in doc["refused"]["changes"]}
    assert "update refused: copy what must survive" in result.stderr
    accepted = cli("update", AWS, new, "-o", tmp_path / "out", "--dry-run", "-f", "json", "--accept-data-loss")
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(accepted.stdout)["refused"] is None


def test_update_names_the_launched_nodes_it_does_not_roll(write, cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    new = changed(write, ("hardware: p5.48xlarge", "hardware: p5e.48xlarge"))
    result = cli("update", AWS, new, "-o", tmp_path / "out", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "not rolled by update: 64 node(s) slurmctld launches (gpu-[0001-0064])" in " ".join(result.stdout.split())


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml") if "aws:" in p.read_text()))
def test_every_key_of_every_resources_file_has_a_cited_class(example: str, cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    result = cli("render", EXAMPLES / example, "-o", tmp_path / "out")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / RESOURCES_FILE).read_text()
    found = read(text, RESOURCES_FILE)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["files"][RESOURCES_FILE]
    assert manifest["compared"] == "resources"
    wanted = {*found, *(f"{name}.{setting}" for name, r in found.items() for setting in r.settings)}
    assert wanted - set(manifest["keys"]) == set()
    for key in wanted:
        for effect in manifest["keys"][key]["effects"]:
            assert effect["why"] != UNCLASSIFIED.why and re.search(r'\(.+: ".{20,}"\)$', effect["why"]), key


def test_a_scratch_1_file_system_cannot_be_resized() -> None:
    scratch = Resource("fsx-lustre", "n-1", {"deployment_type": "SCRATCH_1", "storage_capacity_gib": 3600})
    persistent = Resource("fsx-lustre", "n-1", {"deployment_type": "PERSISTENT_2", "storage_capacity_gib": 2400})
    key = "fsx.storage_capacity_gib"
    assert table().classes({"fsx": scratch})[key].for_values("3600", "7200")[0].action == Action.LOSE_DATA
    assert table().classes({"fsx": persistent})[key].for_values("2400", "4800")[0].action == Action.NONE
    assert table().classes({"fsx": persistent})[key].for_values("4800", "2400")[0].action == Action.LOSE_DATA


@pytest.mark.parametrize(("old", "new", "way"), [
    ("50400", "60000", None), ("60000", "50400", "smaller"), ("2.15", "2.12", "smaller"), ("2.12", "2.15", None),
    ("12000", "1500", "smaller"), (None, "1", "added"), ("1", None, "removed"), ("SSD", "HDD", None),
    ("2.15", "1500", None), ("nan", "1", None)])
def test_the_direction_of_a_change(old: str | None, new: str | None, way: str | None) -> None:
    assert direction(old, new) == way


def test_a_lower_lustre_version_replaces_the_file_system() -> None:
    classed = table().classes({"fsx": Resource("fsx-lustre", "", {"lustre_version": "2.15"})})["fsx.lustre_version"]
    assert classed.for_values("2.12", "2.15")[0].action == Action.NONE
    assert classed.for_values("2.15", "2.12")[0].action == Action.LOSE_DATA


def test_every_action_of_the_table_is_one_of_the_diffs() -> None:
    assert {action for action, _ in ACTIONS.values()} == {Action.NONE, Action.REIMAGE, Action.LOSE_DATA}
    rows = [row for kind in table().kinds.values() for row in (*kind.settings.values(), kind.added, kind.removed)]
    assert {row.action for row in rows} == set(ACTIONS)


def _quotes(source: str) -> list[str]:
    data = yaml.safe_load((REPO / "clusterforge/targets/aws/data/cloud-changes.yaml").read_text())
    rows = []
    for kind in data["kinds"].values():
        for row in (kind["added"], kind["removed"], kind.get("rebuilt"), *kind["settings"].values()):
            rows += [r for r in (row, (row or {}).get("smaller"), *((row or {}).get("where") or ())) if r]
    return [" ".join(r["quote"].split()) for r in rows if r["source"].startswith(source)]


def test_the_quotes_of_this_projects_documents_are_word_for_word() -> None:
    docs = " ".join((REPO / "docs" / "aws.md").read_text().split())
    quotes = _quotes("docs/aws.md")
    assert len(quotes) >= 3 and [q for q in quotes if q not in docs] == []


def test_the_quotes_of_the_pulumi_aws_docstrings_are_word_for_word() -> None:
    pulumi_aws = pytest.importorskip("pulumi_aws")
    folder = Path(pulumi_aws.__file__).parent / "fsx"
    text = " ".join(" ".join(f.read_text().split()) for f in (folder / "lustre_file_system.py",
                                                             folder / "data_repository_association.py"))
    quotes = _quotes("pulumi-aws")
    assert len(quotes) >= 3 and [q for q in quotes if q not in text] == []


def test_a_row_without_its_quote_is_refused() -> None:
    text = (REPO / "clusterforge/targets/aws/data/cloud-changes.yaml").read_text()
    row = '        quote: "Changing this value to a higher version triggers an in-place upgrade."\n'
    broken = text.replace(row, "", 1)
    assert broken != text
    with pytest.raises(Exception, match="quote"):
        load(broken, "cloud-changes.yaml")


def test_a_case_reads_back_from_a_manifest_and_a_bad_one_is_input(tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    assert cli("render", AWS, "-o", out).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    entry = manifest["files"][RESOURCES_FILE]["keys"]["fsx.storage_capacity_gib"]
    assert [case["when"] for case in entry["cases"]] == ["smaller"]
    entry["cases"][0]["when"] = "bigger"
    (out / "manifest.json").write_text(json.dumps(manifest))
    result = cli("diff", out, AWS)
    assert result.exit_code == 2 and "not a case {when: added | removed | smaller, effects}" in result.output


def test_a_resources_file_of_another_shape_is_input(tmp_path: Path, cli) -> None:
    out = tmp_path / "out"
    assert cli("render", AWS, "-o", out).exit_code == 0
    (out / RESOURCES_FILE).write_text("resources:\n  fsx: {kind: fsx-lustre, zone: [a, b]}\n")
    result = cli("diff", out, AWS)
    assert result.exit_code == 2 and "pulumi/resources.yaml: resources.fsx.zone: a setting is" in result.output


def test_a_classed_key_without_cases_takes_its_effects_either_way() -> None:
    effects = table().kinds["launch-template-pool"].settings["instance_type"].classed(Resource("x")).effects
    assert Classed(effects, "t").for_values("a", None) == effects
    assert Classed(effects, "t", cases=(Case("removed", ()),)).for_values("a", None) == ()
