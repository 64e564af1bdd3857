"""Every hostile case through every command it applies to (see harness.py for what must always hold).

The cases are independent (each in its own folder) and each command is its own process, so the selected cases
run side by side, one per CPU, the first time any of them is asked for; every test then reports its own case.
The commands of one case still run one after another: the harness compares the tree before and after each.

A case held to the project's 2-second target (ALONE_S or less) runs after the others, alone: the target is a
command's time on the machine to itself (benchmarks/hostile.py measures it so). Beside another case's command on
a 2-CPU machine its wall time measured the neighbour too, and a case near its bound failed or passed by which case
ran beside it (limits-aliased-unknown-key in CI).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.hostile.harness import Case, all_cases, exercise

CASES = all_cases()
ALONE_S = 2.0
BY_NAME = {case.name: case for case in CASES}


def selected(session: pytest.Session) -> list[Case]:
    """The cases this run collected (all of them, or those a -k or a node id picked)."""
    names = [item.callspec.id for item in session.items
             if isinstance(item, pytest.Function) and item.originalname == "test_hostile_case"]
    return [BY_NAME[name] for name in names if name in BY_NAME]


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Each selected case's broken guarantees: run in parallel (CPU count workers; threads only wait on
    processes), then the cases held to the 2-second target one at a time."""
    cases = selected(request.session)
    workers = max(1, min(len(cases), os.cpu_count() or 1))

    tmp_path_factory.getbasetemp()  # made once here: two threads making it at once race (with --basetemp)

    def one(case: Case) -> tuple[str, list[str]]:
        return case.name, exercise(case, tmp_path_factory.mktemp(case.name[:40]))

    side_by_side = [case for case in cases if case.seconds > ALONE_S]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        found = dict(pool.map(one, side_by_side))
    return found | dict(one(case) for case in cases if case.seconds <= ALONE_S)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(case: Case, outcomes: dict[str, list[str]]) -> None:
    broken = outcomes[case.name]
    assert not broken, f"{case.problem}:\n" + "\n".join(broken)
