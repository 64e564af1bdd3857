"""The builders' base designs pass cleanly: every rule test below changes one thing and expects one rule."""

from __future__ import annotations

from tests.policies.builders import aws, found, onprem


def test_onprem_base_passes_with_only_the_psu_warning() -> None:
    assert found(onprem(), level=None) == ["PWR-003"]


def test_aws_base_passes_clean() -> None:
    assert found(aws(), level=None) == []
