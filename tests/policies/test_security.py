"""Security rules: each override of the stack's secure defaults is reported where the blueprint makes it."""

from __future__ import annotations

import pytest

from tests.policies.builders import aws, found


def secured(**security: object) -> dict:
    data = aws()
    data["aws"]["security"] = security
    return data


@pytest.mark.parametrize(("security", "errors", "warnings"), [
    ({}, [], []),
    ({"imds_tokens": "required"}, [], []),
    ({"imds_tokens": "optional"}, ["SEC-001"], []),
    ({"encrypt_root_volumes": False}, ["SEC-002"], []),
    ({"ingress": [{"cidr": "10.20.0.0/16", "from_port": 22, "to_port": 22}]}, [], []),
    ({"ingress": [{"cidr": "0.0.0.0/0", "from_port": 22, "to_port": 22}]}, ["SEC-003"], []),
    ({"ingress": [{"cidr": "::/0", "from_port": 443, "to_port": 443}]}, ["SEC-003"], []),
    ({"node_policies": ["arn:aws:iam::aws:policy/AdministratorAccess"]}, ["SEC-004"], []),
    ({"node_policies": ["arn:aws:iam::aws:policy/AmazonS3FullAccess"]}, ["SEC-004"], []),
    ({"node_policies": ["arn:aws:iam::123456789012:policy/read-datasets"]}, [], ["SEC-004"]),
])
def test_security_overrides(security: dict, errors: list[str], warnings: list[str]) -> None:
    data = secured(**security)
    assert found(data) == errors
    assert found(data, level="warning") == warnings


def test_rules_do_not_apply_on_prem() -> None:
    from tests.policies.builders import onprem

    assert not [f for f in found(onprem(), level=None) if f.startswith("SEC")]
