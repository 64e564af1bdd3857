"""Golden files: `clusterforge render` on the example blueprints must reproduce tests/golden/<example>/ exactly.

After an intended change, regenerate them and review the diff (see tests/golden/README.md):
    CLUSTERFORGE_UPDATE_GOLDEN=1 python -m pytest tests/test_render_golden.py
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ["onprem-dgx-h100", "aws-p5"]
UPDATE = os.environ.get("CLUSTERFORGE_UPDATE_GOLDEN") == "1"


def files_under(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.startswith(".")}


@pytest.mark.parametrize("example", EXAMPLES)
def test_render_matches_golden(example: str, cli, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # headers and the stack's blueprint path name the example as a user would type it
    out = tmp_path / "out"
    result = cli("render", f"examples/{example}.yaml", "-o", out)
    assert result.exit_code == 0, result.output
    rendered = files_under(out)
    golden_dir = GOLDEN / example
    if UPDATE:
        shutil.rmtree(golden_dir, ignore_errors=True)
        shutil.copytree(out, golden_dir, ignore=shutil.ignore_patterns(".*"))
    golden = files_under(golden_dir)
    assert sorted(rendered) == sorted(golden), "rendered files differ from the golden set"
    for name, text in rendered.items():
        if text != golden[name]:
            diff = "".join(difflib.unified_diff(golden[name].splitlines(True), text.splitlines(True),
                                                f"golden/{example}/{name}", f"rendered/{name}"))
            pytest.fail(f"{name} differs from its golden file (CLUSTERFORGE_UPDATE_GOLDEN=1 to accept):\n{diff}")
