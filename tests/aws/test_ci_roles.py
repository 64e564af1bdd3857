"""The preview role docs/aws.md gives users, as written there: linted by parliament and asked the requests that
matter. It reads what `pulumi preview` needs and no cluster's secret, also beside AWS's ReadOnlyAccess, since any
branch pusher can run a job in the environment that holds it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.aws.conftest import ROOT
from tests.aws.iam_eval import Request, allowed

parliament = pytest.importorskip("parliament")

STATE = "acme-pulumi-state"
KEY = "arn:aws:kms:us-east-1:111122223333:key/aaaaaaaa-1111-2222-3333-444444444444"
OTHER_KEY = "arn:aws:kms:us-east-1:111122223333:key/bbbbbbbb-1111-2222-3333-444444444444"
MUNGE = "arn:aws:ssm:us-east-1:111122223333:parameter/clusterforge/nlp-p5/munge-key"
# AWS's ReadOnlyAccess, as far as secrets go: every parameter, every object, decryption through the services.
READ_ONLY_ACCESS = {"Statement": [{"Effect": "Allow", "Action": ["ssm:Get*", "s3:Get*", "s3:List*", "kms:Decrypt",
                                                                  "secretsmanager:GetSecretValue", "ec2:Describe*"],
                                   "Resource": "*"}]}


def preview_role() -> dict[str, Any]:
    """The JSON block under "**Preview role**" in docs/aws.md, its placeholders filled in."""
    text = (ROOT / "docs" / "aws.md").read_text()
    section = text[text.index("**Preview role**"):text.index("**Deploy role**")]
    block = re.search(r"```json\n(.*?)```", section, re.DOTALL)
    assert block, "docs/aws.md gives the preview role's policy as a JSON block"
    filled = block.group(1).replace("<state-bucket>", STATE).replace("<stack-secrets-key-arn>", KEY)
    assert "<" not in filled
    document: dict[str, Any] = json.loads(filled)
    return document


def test_the_documented_policy_passes_the_lint() -> None:
    found = parliament.analyze_policy_string(json.dumps(preview_role())).findings
    assert [f"{f.issue}: {f.detail}" for f in found if f.issue != "RESOURCE_STAR"] == []


@pytest.mark.parametrize("request_", [
    Request("ec2:DescribeImages", "*"),
    Request("ssm:GetParameter", "arn:aws:ssm:us-east-1::parameter/aws/service/deeplearning/ami/x86_64/base-oss"),
    Request("s3:GetObject", f"arn:aws:s3:::{STATE}/.pulumi/stacks/clusterforge-aws/nlp-p5.json"),
    Request("s3:ListBucket", f"arn:aws:s3:::{STATE}"),
    Request("s3:PutObject", f"arn:aws:s3:::{STATE}/.pulumi/locks/organization/clusterforge-aws/nlp-p5/x.json"),
    Request("kms:Decrypt", KEY),
])
def test_it_reads_what_a_preview_needs(request_: Request) -> None:
    assert allowed([preview_role()], request_)


@pytest.mark.parametrize("request_", [
    Request("ssm:GetParameter", MUNGE),
    Request("ssm:GetParametersByPath", "arn:aws:ssm:us-east-1:111122223333:parameter/clusterforge/nlp-p5"),
    Request("ssm:GetParameterHistory", MUNGE),
    Request("kms:Decrypt", OTHER_KEY),  # the key a SecureString or a bucket is encrypted with
    Request("secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:111122223333:secret:x"),
    Request("s3:GetObject", "arn:aws:s3:::nlp-p5-ckpt-20261121/step-1000/model.pt"),  # the cluster's data
    Request("s3:PutObject", f"arn:aws:s3:::{STATE}/.pulumi/stacks/clusterforge-aws/nlp-p5.json"),  # the state
])
def test_it_reads_no_secret_even_beside_read_only_access(request_: Request) -> None:
    assert not allowed([preview_role()], request_)
    assert not allowed([preview_role(), READ_ONLY_ACCESS], request_) or request_.action == "s3:PutObject"
    assert allowed([READ_ONLY_ACCESS], request_) or request_.action == "s3:PutObject"  # the deny is what holds
