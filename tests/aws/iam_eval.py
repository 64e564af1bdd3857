"""A request against identity-based IAM policy documents, decided as AWS's policy evaluation logic documents it,
for the operators the stack's documents use: an explicit Deny wins, then an Allow, else the implicit deny.

Covered: Action, Resource and NotResource with `*`/`?` wildcards (actions case-insensitively), StringEquals,
StringNotEquals, StringLike, Bool and their `ForAllValues:`/`ForAnyValue:` forms, and Null; a condition key absent
from the request fails a positive operator and passes a negated one (StringNotEquals), `ForAllValues` over no values
passes and `ForAnyValue` over none fails, `Null` "true" holds when the key is absent and "false" when present, and a
Condition holds when all its operators do, as AWS's "Condition operators" and "multivalued context keys" pages say.
Anything else raises, so a document using an operator this does not know is never judged by a guess. parliament
(tests/aws/test_iam_documents.py) checks the documents' actions, ARNs and condition keys against AWS's own tables;
this checks what they allow.

No library evaluates conditions offline (moto's access control ignores them), hence this small one.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Context = Mapping[str, str | Sequence[str]]


@dataclass(frozen=True)
class Request:
    action: str
    resource: str
    context: Context = field(default_factory=dict)


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _matches(patterns: Any, value: str, case: bool = True) -> bool:
    if not case:
        return any(fnmatch.fnmatchcase(value.lower(), p.lower()) for p in _listed(patterns))
    return any(fnmatch.fnmatchcase(value, p) for p in _listed(patterns))


def _compare(operator: str, wanted: list[str], actual: str) -> bool:
    if operator == "StringEquals":
        return actual in wanted
    if operator == "StringNotEquals":
        return actual not in wanted
    if operator == "StringLike":
        return _matches(wanted, actual)
    if operator == "Bool":
        return actual.lower() in [w.lower() for w in wanted]
    raise NotImplementedError(operator)


def _condition(block: Mapping[str, Mapping[str, Any]], context: Context) -> bool:
    for qualified, pairs in block.items():
        qualifier, _, operator = qualified.rpartition(":")
        negated = operator.startswith("StringNot")
        for key, wanted in pairs.items():
            present = key in context
            values = _listed(context[key]) if present else []
            if operator == "Null":
                if qualifier:
                    raise NotImplementedError(qualified)
                ok = _compare("Bool", _listed(wanted), str(not present))
            elif qualifier == "ForAllValues":
                ok = all(_compare(operator, _listed(wanted), v) for v in values)
            elif qualifier == "ForAnyValue":
                ok = any(_compare(operator, _listed(wanted), v) for v in values)
            elif qualifier:
                raise NotImplementedError(qualified)
            elif not present:
                ok = negated
            else:
                [value] = values
                ok = _compare(operator, _listed(wanted), value)
            if not ok:
                return False
    return True


def _applies(statement: Mapping[str, Any], request: Request) -> bool:
    if "NotResource" in statement:
        resource = not _matches(statement["NotResource"], request.resource)
    else:
        resource = _matches(statement["Resource"], request.resource)
    return (_matches(statement["Action"], request.action, case=False) and resource
            and _condition(statement.get("Condition", {}), request.context))


def allowed(documents: Sequence[Mapping[str, Any]], request: Request) -> bool:
    statements = [s for doc in documents for s in doc["Statement"]]
    if any(s["Effect"] == "Deny" and _applies(s, request) for s in statements):
        return False
    return any(s["Effect"] == "Allow" and _applies(s, request) for s in statements)
