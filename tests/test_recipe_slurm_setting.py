"""docs/contributing.md's "Add a SLURM setting", performed where it needs no edit of the repository: the recipe's
row, added to a copy of the change table, is what classes a change of its key in a day-two diff of two renders
that differ in `slurm.settings`, and a role whose restart keys lack the key is caught by the consistency test.

The model field, the rendered line and `OWNED` are edits of the package itself; the settings pass-through renders
the key here instead, which is the path a blueprint takes until the field exists.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import tests.test_day2_diff as day2_tests
from clusterforge.catalog import slurm_changes
from clusterforge.day2.diff import Action, Diff, compare
from clusterforge.day2.rendered import Rendered
from clusterforge.files.checkout import project_root
from clusterforge.pipeline.analysis import PolicyInputs
from tests.conftest import EXAMPLES
from tests.test_recipe_accelerator import code_block

BLUEPRINT = EXAMPLES / "onprem-dgx-h100.yaml"  # gpu-0001 is also the controller
SLURM = "slurm:\n"


def recipe_row() -> tuple[str, dict[str, Any]]:
    """The recipe's row: (key, fields)."""
    [(key, fields)] = yaml.safe_load(code_block("Add a SLURM setting", "yaml")).items()
    return key, fields


def use_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the packaged table with the recipe's row added, read in its place from now on."""
    key, fields = recipe_row()
    data = yaml.safe_load(slurm_changes.packaged().read_text(encoding="utf-8"))
    assert key.lower() not in {name.lower() for name in data["keys"]}  # the recipe adds a row, it edits none
    data["keys"][key] = fields
    copy = tmp_path / "slurm-changes.yaml"
    copy.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    monkeypatch.setattr(slurm_changes, "packaged", lambda: copy)
    slurm_changes.changes.cache_clear()
    return copy


@pytest.fixture(autouse=True)
def _packaged_table_again() -> Any:
    """Every other test reads the packaged table."""
    yield
    slurm_changes.changes.cache_clear()


def with_setting(tmp_path: Path, key: str, value: str) -> Path:
    """The example blueprint with `slurm.settings: {key: value}`."""
    text = BLUEPRINT.read_text(encoding="utf-8")
    assert text.count(SLURM) == 1
    path = tmp_path / f"{value.replace(',', '-').lower()}.yaml"
    path.write_text(text.replace(SLURM, f"{SLURM}  settings: {{{key}: '{value}'}}\n"), encoding="utf-8")
    return path


def classes(diff: Diff, key: str) -> set[tuple[Action, frozenset[str], str | None]]:
    return {(c.action, frozenset(c.hosts), c.daemon) for c in diff.changes if c.file == "slurm.conf" and c.key == key}


def test_the_row_loads_from_a_copy_of_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key, fields = recipe_row()
    table = slurm_changes.read(use_row(tmp_path, monkeypatch))
    row = table.row(key.upper())  # SLURM reads keys ignoring case
    assert row is not table.default
    assert (row.action, row.daemons, row.page, row.section) == (
        fields["action"], tuple(fields["daemons"]), fields["page"], fields["section"])
    assert slurm_changes.changes() == table  # what day two reads from now on


def test_a_diff_of_two_renders_classes_the_key_as_the_row_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    key, fields = recipe_row()
    monkeypatch.chdir(EXAMPLES.parent)
    old = Rendered.from_blueprint(with_setting(tmp_path, key, "EnableIPv6"), PolicyInputs())
    new = Rendered.from_blueprint(with_setting(tmp_path, key, "EnableIPv6,NoInAddrAny"), PolicyInputs())
    assert f"{key}=EnableIPv6,NoInAddrAny" in new.files["slurm/slurm.conf"].splitlines()
    controller, computes = frozenset({"gpu-0001"}), frozenset(f"gpu-{n:04d}" for n in range(1, 17))

    # without the row: the man page's general rule, a reconfigure
    assert classes(compare(old, new), key) == {(Action.RECONFIGURE, controller, "slurmctld")}

    use_row(tmp_path, monkeypatch)  # the row classes the key in renders made from now on (their manifests)
    old = Rendered.from_blueprint(with_setting(tmp_path, key, "EnableIPv6"), PolicyInputs())
    new = Rendered.from_blueprint(with_setting(tmp_path, key, "EnableIPv6,NoInAddrAny"), PolicyInputs())
    diff = compare(old, new)
    assert fields["action"] == "restart" and fields["daemons"] == ["slurmctld", "slurmd"]
    assert classes(diff, key) == {(Action.RESTART, controller, "slurmctld"), (Action.RESTART, computes, "slurmd")}
    assert all(fields["quote"] in c.why and fields["why"] in c.why for c in diff.changes if c.key == key)


def test_a_role_without_the_key_among_its_restart_keys_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    key, _ = recipe_row()
    use_row(tmp_path, monkeypatch)
    with pytest.raises(AssertionError) as caught:
        day2_tests.test_the_slurm_role_restarts_exactly_the_keys_above_reconfigure(tmp_path / "a", monkeypatch)
    assert key.lower() in str(caught.value)

    # the recipe's last step, on a copy of the role: the key joins slurm_restart_keys
    checkout = tmp_path / "checkout"
    for part in ("defaults", "vars"):
        (checkout / "roles" / "slurm" / part).mkdir(parents=True)
        shutil.copy(project_root() / "roles" / "slurm" / part / "main.yml", checkout / "roles" / "slurm" / part)
    (checkout / "site.yml").write_text("---\n")
    defaults = checkout / "roles" / "slurm" / "defaults" / "main.yml"
    text = defaults.read_text(encoding="utf-8")
    assert text.count("slurm_restart_keys: [") == 1
    defaults.write_text(text.replace("slurm_restart_keys: [", f"slurm_restart_keys: [{key}, "), encoding="utf-8")
    monkeypatch.setenv("CLUSTERFORGE_ANSIBLE_DIR", str(checkout))
    day2_tests.test_the_slurm_role_restarts_exactly_the_keys_above_reconfigure(tmp_path / "b", monkeypatch)
