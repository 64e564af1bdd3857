"""The render manifest: every file a render writes, and every key of it, has a declared day-two effect, read from
one declaration beside what produced it; `diff` reads effects from the manifest only. A file or key without a
declaration fails here, not a user (who would otherwise meet "treated as needing idle nodes")."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from click.testing import CliRunner

from clusterforge.cli.main import app
from clusterforge.day2.diff import compare
from clusterforge.day2.rendered import GROUP_VARS_FILE, HOSTS_FILE, Rendered
from clusterforge.render import MANIFEST, OUTPUTS
from clusterforge.render.change_classes import NAMED_LINES, Action, config_table
from clusterforge.render.conf_parse import conf_entries
from clusterforge.render.manifest import from_json
from clusterforge.render.yamlout import load
from tests.conftest import EXAMPLES
from tests.test_role_contract import SOURCES, STACK_SOURCES, render_source

MEMBERSHIP = {"added", "removed", "groups", "groups-controller", "hardware"}
RENDERED = [source for source in SOURCES if source not in STACK_SOURCES or source == "render --from-stack"]


def undeclared(rendered: Rendered) -> Iterator[str]:
    """Every file and key of a render its manifest gives no class."""
    manifest = rendered.manifest
    for path, text in rendered.files.items():
        if path == MANIFEST:
            continue
        entry = manifest.entry(path)
        if entry is None:
            yield f"{path}: no declaration (declare it in its renderer's DAY_TWO)"
            continue
        if path.startswith("slurm/") and path.endswith(".conf"):
            if path == "slurm/slurm.conf":
                missing = set(conf_entries(text, NAMED_LINES).entries) - set(entry.keys)
                yield from (f"{path}: {key}: no class" for key in sorted(missing))
                yield from (f"{path}: NodeName lines: no `{n}` class" for n in ("joins", "changed")
                            if n not in entry.nodes)
            elif entry.whole is None:
                yield f"{path}: no class for the file"
        elif path == HOSTS_FILE:
            top = (load(text) or {}).get("all") or {}
            yield from (f"{path}: {key} (all vars): no class" for key in sorted(set(top.get("vars") or {})
                                                                                 - set(entry.keys)))
            per_host = {key for host in rendered.hosts.values() for key in host.vars}
            yield from (f"{path}: {key} (per host or pool): no class" for key in sorted(per_host
                                                                                         - set(entry.host_keys)))
            yield from (f"{path}: hosts {what}: no class" for what in sorted(MEMBERSHIP - set(entry.hosts)))
        elif path.startswith("inventory/group_vars/"):
            written = set(load(text) or {})
            table = entry.keys if path == GROUP_VARS_FILE else entry.host_keys
            yield from (f"{path}: {key}: no class" for key in sorted(written - set(table)))
        elif (target := config_table(path)) is not None and target.config_entries is not None:
            settings = {k for k in target.config_entries(text) if target.config is not None and target.config(k)}
            yield from (f"{path}: {key}: no class" for key in sorted(settings - set(entry.keys)))
        elif entry.whole is None:
            yield f"{path}: no class for the file"


@pytest.mark.parametrize("source", RENDERED)
def test_every_rendered_file_and_key_has_a_declared_effect(source: str, tmp_path: Path) -> None:
    render_source(source, tmp_path)
    rendered = Rendered.from_directory(tmp_path / "out")
    assert MANIFEST in rendered.files, "render writes its manifest"
    assert list(undeclared(rendered)) == []


def _render(blueprint: Path, out: Path) -> Rendered:
    result = CliRunner().invoke(app, ["render", str(blueprint), "-o", str(out), "--force"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Rendered.from_directory(out)


def test_a_file_no_renderer_declares_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new renderer without `DAY_TWO`: its file has no entry, and the check above names it."""
    extra = ModuleType("clusterforge.render.extra_conf")
    extra.render = lambda ctx: {"slurm/extra.conf": "Extra=1\n"}  # type: ignore[attr-defined]
    monkeypatch.setattr("clusterforge.render.OUTPUTS", (*OUTPUTS, extra))
    rendered = _render(EXAMPLES / "onprem-dgx-h100.yaml", tmp_path / "out")
    assert "slurm/extra.conf" in rendered.files
    assert list(undeclared(rendered)) == ["slurm/extra.conf: no declaration (declare it in its renderer's DAY_TWO)"]
    extra.DAY_TWO = {"slurm/extra.conf": OUTPUTS[-1].DAY_TWO[next(iter(OUTPUTS[-1].DAY_TWO))]}  # type: ignore
    assert list(undeclared(_render(EXAMPLES / "onprem-dgx-h100.yaml", tmp_path / "again"))) == []


def test_a_var_nothing_declares_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterforge.render import group_vars

    written = group_vars.group_vars
    monkeypatch.setattr(group_vars, "group_vars", lambda ctx: written(ctx) | {"nobody_reads_this": 1})
    rendered = _render(EXAMPLES / "onprem-dgx-h100.yaml", tmp_path / "out")
    assert list(undeclared(rendered)) == [f"{GROUP_VARS_FILE}: nobody_reads_this: no class"]


def _blueprint(tmp_path: Path, name: str, pool: dict[str, object]) -> Path:
    data = yaml.safe_load((EXAMPLES / "aws-p5.yaml").read_text())
    data["pools"][0] |= pool
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize(("before", "after", "added"), [
    ({"count": 64}, {"count": 96}, "gpu-[0065-0096]"),
    ({"count": 16, "max_count": 32}, {"count": 16, "max_count": 40}, "gpu-[0033-0040]"),
])
def test_growing_an_elastic_pool_is_a_reconfigure_that_names_the_nodes(tmp_path: Path, before: dict[str, object],
                                                                       after: dict[str, object], added: str) -> None:
    """The AWS example's nodes are power-saved (State=CLOUD): a bigger pool is new NodeName lines and a new
    power-save file, which the programs read at their next call: nothing to drain."""
    old, new = _blueprint(tmp_path, "old", before), _blueprint(tmp_path, "new", after)
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "-f", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["largest"] in ("NONE", "RECONFIGURE") and not data["disruptive"]
    from clusterforge.core.hostlist import compress

    assert compress(data["powered_added"]) == added and data["added"] == []
    powersave = [c for c in data["changes"] if c["file"] == "clusterforge-powersave.json"]
    assert powersave and {c["action"] for c in powersave} == {"NONE"}
    text = CliRunner().invoke(app, ["diff", str(old), str(new)], catch_exceptions=False).output
    assert f"added    {len(data['powered_added'])}: {added}" in text
    assert "none added" not in text, "the nodes section must not say nothing was added beside the added nodes"
    assert "only in the new" in text and "lines differ -> " not in text
    dry = CliRunner().invoke(app, ["update", str(old), str(new), "--dry-run", "-o", str(tmp_path / "out")],
                             catch_exceptions=False).output
    if "update refused: fix the design" in dry:  # the example's Capacity Block holds 64: the gate stops update
        assert "holds at most 64" in dry
    else:
        assert f"{len(data['powered_added'])} power-saved node(s) added ({added})" in dry


def test_a_directorys_own_manifest_is_checked_and_said_never_trusted(tmp_path: Path) -> None:
    """A render directory may come from a pull request: a manifest.json that understates a change (a power-save
    file classed as a reboot here, to be seen) is compared and said; this version's declarations decide, since
    this checkout's roles apply the change."""
    old_dir, new_dir = tmp_path / "old", tmp_path / "new"
    _render(_blueprint(tmp_path, "old", {"count": 16, "max_count": 32}), old_dir)
    _render(_blueprint(tmp_path, "new", {"count": 16, "max_count": 40}), new_dir)
    manifest = json.loads((new_dir / MANIFEST).read_text())
    entry = manifest["files"]["slurm/clusterforge-powersave.json"]["whole"]
    entry["effects"][0] |= {"action": "reboot", "hosts": "all", "why": "as this manifest says"}
    (new_dir / MANIFEST).write_text(json.dumps(manifest))
    new = Rendered.from_directory(new_dir)
    assert new.manifest_differs == ("slurm/clusterforge-powersave.json",)
    [change] = [c for c in compare(Rendered.from_directory(old_dir), new).changes
                if c.file == "clusterforge-powersave.json"]
    assert change.action == Action.NONE
    result = CliRunner().invoke(app, ["diff", str(old_dir), str(new_dir)], catch_exceptions=False)
    assert result.exit_code == 0
    assert (f"{new_dir}: its manifest.json classes 1 file(s) otherwise than this version "
            "(slurm/clusterforge-powersave.json)") in result.stderr


def test_the_written_manifest_is_what_this_version_declares(tmp_path: Path) -> None:
    """What render writes is what a diff builds from the same files: a directory without its manifest (written
    before manifests) is classed the same, and the written one reads back equal."""
    out = tmp_path / "out"
    with_manifest = _render(EXAMPLES / "aws-p5.yaml", out)
    assert with_manifest.manifest_differs == ()
    written = from_json((out / MANIFEST).read_text())
    assert written.cluster == "nlp-p5" and dict(written.files) == dict(with_manifest.manifest.files)
    (out / MANIFEST).unlink()
    assert Rendered.from_directory(out).manifest.files == with_manifest.manifest.files


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2", "is not JSON"),
    ('{"kind": "Other", "files": {}}', "is not a RenderManifest"),
    ('{"kind": "RenderManifest", "files": {"x": {"declared_by": "y", "compared": "lines", '
     '"whole": {"declared_by": "z", "effects": [{"action": "explode", "hosts": "all", "why": "w"}]}}}}',
     "unknown action or daemon"),
    ("[" * 100_000, "is not JSON"),
])
def test_a_manifest_from_a_pull_request_is_input_checked(tmp_path: Path, text: str, message: str) -> None:
    out = tmp_path / "out"
    _render(EXAMPLES / "onprem-dgx-h100.yaml", out)
    other = tmp_path / "other"
    shutil.copytree(out, other)
    (other / MANIFEST).write_text(text)
    result = CliRunner().invoke(app, ["diff", str(out), str(other)], catch_exceptions=False)
    assert result.exit_code == 2 and message in result.output, result.output
