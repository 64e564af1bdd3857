"""Every hostile case through every command it applies to (see harness.py for what must always hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hostile.harness import Case, all_cases, exercise

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case: Case, tmp_path: Path) -> None:
    broken = exercise(case, tmp_path)
    assert not broken, f"{case.problem}:\n" + "\n".join(broken)
