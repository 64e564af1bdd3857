"""`update --dry-run --format json`: what an update would change, as one stable document a program can read
(day2/update_plan.py). Stdout holds the document alone; the exit codes are the text view's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import EXAMPLES, floats

TOP_KEYS = ["format", "old", "new", "output", "would_apply", "refused", "diff", "steps", "in_place", "rolling",
            "settings"]


def pair(tmp_path: Path, change: dict[str, Any] | None = None) -> tuple[Path, Path]:
    data = yaml.safe_load((EXAMPLES / "onprem-dgx-h100.yaml").read_text())
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(data))
    for section, values in (change or {}).items():
        data.setdefault(section, {}).update(values)
    new.write_text(yaml.safe_dump(data))
    return old, new




def test_dry_run_json_lists_the_changes_steps_and_batches(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    old, new = pair(tmp_path, {"software": {"nvidia_driver": "595.71.05"}})
    result = cli("update", old, new, "-o", tmp_path / "out", "--dry-run", "--max-fraction", "0.2",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # stdout is the document and nothing else
    assert list(doc) == TOP_KEYS
    assert doc["format"] == "clusterforge-update-dry-run/1"
    assert (doc["old"], doc["new"], doc["output"]) == ("old.yaml", "new.yaml", "out")  # as given, relative
    assert doc["would_apply"] is True and doc["refused"] is None
    assert doc["diff"]["largest"] == "REBOOT"
    assert any(c["key"] == "nvidia_driver_version" and c["new"] == "595.71.05" for c in doc["diff"]["changes"])
    assert doc["steps"] == ["rolling"]  # every host reboots: none is changed in place
    assert doc["rolling"]["count"] == 16 and doc["in_place"] == {"count": 0, "hosts": []}
    assert [b["label"] for b in doc["rolling"]["batches"]] == [
        "rack a02", "rack a03", "rack b01", "rack b02", "rack b03", "rack a01"]
    assert doc["rolling"]["batches"][-1] == {"label": "rack a01", "hostlist": "gpu-[0001-0003]",
                                             "hosts": ["gpu-0001", "gpu-0002", "gpu-0003"]}
    assert doc["settings"]["unit"] == "rack" and doc["settings"]["max_fraction"] == 0.2
    assert all(round(f, 3) == f for f in floats(doc)), floats(doc)
    again = cli("update", old, new, "-o", tmp_path / "out", "--dry-run", "--max-fraction", "0.2", "-f", "json")
    assert again.stdout == result.stdout  # stable: the same inputs give the same bytes


def test_dry_run_json_with_nothing_to_change(cli, tmp_path: Path) -> None:
    old, new = pair(tmp_path)
    result = cli("update", old, new, "-o", tmp_path / "out", "--dry-run", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["would_apply"] is False and doc["refused"] is None and doc["diff"]["changes"] == []
    assert doc["steps"] == [] and doc["rolling"] == {"count": 0, "hosts": [], "batches": []}


def test_dry_run_json_says_a_change_that_loses_jobs_is_refused(cli, tmp_path: Path) -> None:
    old, new = pair(tmp_path, {"slurm": {"state_save_location": "/var/spool/slurmctld/state"}})
    result = cli("update", old, new, "-o", tmp_path / "out", "--dry-run", "--format", "json")
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["would_apply"] is False
    assert doc["refused"]["reason"] == "loses_jobs" and "--accept-job-loss" in doc["refused"]["hint"]
    assert "StateSaveLocation" in {c["key"] for c in doc["refused"]["changes"]}


def test_json_needs_dry_run(cli, tmp_path: Path) -> None:
    old, new = pair(tmp_path)
    result = cli("update", old, new, "-o", tmp_path / "out", "--format", "json")
    assert result.exit_code == 2 and "--dry-run" in result.output, result.output
    assert not (tmp_path / "out").exists()  # refused before anything is rendered
