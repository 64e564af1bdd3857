"""Each role's `min_ansible_version` is the ansible-core it really needs, and the one the project installs.

Galaxy and ansible-lint read `galaxy_info.min_ansible_version` as the oldest ansible-core a role runs on. The
roles end early with `meta: end_role` (new in ansible-core 2.18) and are played together by site.yml, so the
honest floor is the `ansible` extra's ansible-core floor in pyproject.toml, which the lock file must meet.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ROLES = sorted(p.parent.parent for p in (ROOT / "roles").glob("*/meta/main.yml"))
END_ROLE = "2.18"  # ansible-core's changelog: `meta: end_role` added in 2.18


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".")[:2])


def extra_floor() -> str:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    [spec] = [d for d in extras["ansible"] if d.startswith("ansible-core")]
    match = re.search(r">=\s*([\d.]+)", spec)
    assert match, spec
    return match.group(1)


def min_version(role: Path) -> str:
    meta = yaml.safe_load((role / "meta" / "main.yml").read_text(encoding="utf-8"))
    return str(meta["galaxy_info"]["min_ansible_version"])


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_min_ansible_version_is_the_installed_floor(role: Path) -> None:
    assert version(min_version(role)) == version(extra_floor())


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_a_role_that_ends_early_declares_2_18(role: Path) -> None:
    uses = any("end_role" in f.read_text(encoding="utf-8") for f in role.rglob("*.yml"))
    if uses:
        assert version(min_version(role)) >= version(END_ROLE)


def test_the_lock_meets_the_floor() -> None:
    locked = re.search(r"^ansible-core==([\d.]+)$", (ROOT / "requirements" / "lock.txt").read_text(), re.M)
    assert locked and version(locked.group(1)) >= version(extra_floor())
