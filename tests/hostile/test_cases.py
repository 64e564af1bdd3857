"""Every hostile case through every command it applies to (see harness.py for what must always hold).

The cases are independent (each in its own folder) and each command is its own process, so the selected cases
run side by side, one per CPU, the first time any of them is asked for; every test then reports its own case.
The commands of one case still run one after another: the harness compares the tree before and after each. A
command's time is held on its own CPU time (harness.py), which whatever runs beside it does not add to: the cases
need not run alone, nor the suite apart from other work.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.hostile.harness import Case, all_cases, exercise

CASES = all_cases()
BY_NAME = {case.name: case for case in CASES}


def selected(session: pytest.Session) -> list[Case]:
    """The cases this run collected (all of them, or those a -k or a node id picked)."""
    names = [item.callspec.id for item in session.items
             if isinstance(item, pytest.Function) and item.originalname == "test_hostile_case"]
    return [BY_NAME[name] for name in names if name in BY_NAME]


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Each selected case's broken guarantees: run in parallel (CPU count workers; threads only wait on
    processes)."""
    cases = selected(request.session)
    workers = max(1, min(len(cases), os.cpu_count() or 1))

    tmp_path_factory.getbasetemp()  # made once here: two threads making it at once race (with --basetemp)

    def one(case: Case) -> tuple[str, list[str]]:
        return case.name, exercise(case, tmp_path_factory.mktemp(case.name[:40]))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, cases))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case: Case, outcomes: dict[str, list[str]]) -> None:
    broken = outcomes[case.name]
    assert not broken, f"{case.problem}:\n" + "\n".join(broken)
