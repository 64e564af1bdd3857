"""SARIF 2.1.0 for GitHub code scanning: ruleId = rule id, partialFingerprints so alerts do not duplicate.

Locations are relative to %SRCROOT%, the directory clusterforge ran in (the repository's root in CI), whose
absolute path the log leaves out (files.paths.machine_path); numbers are rounded (formats.numbers); each rule
links its section of docs/policies.md where the project names its repository (formats.rule_links)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from clusterforge.core.version import __version__
from clusterforge.files.paths import machine_path
from clusterforge.formats.json_text import dumps
from clusterforge.formats.numbers import tidy, tidy_text
from clusterforge.formats.rule_links import help_uri
from clusterforge.policies import Finding, Verdict

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
_ROOT_DESCRIPTION = "The directory clusterforge ran in: the repository's root in CI."


def _rules() -> list[dict[str, Any]]:
    from clusterforge.policies.discovery import load_rules

    rules: list[dict[str, Any]] = []
    for r in load_rules():
        rule: dict[str, Any] = {
            "id": r.id, "name": r.title.replace(" ", ""),
            "shortDescription": {"text": r.title}, "fullDescription": {"text": r.doc},
            "help": {"text": f"{r.doc}\nSource: {r.source}"},
            "defaultConfiguration": {"level": _LEVEL[r.level]},
            "properties": {"domain": r.domain, "source": r.source},
        }
        link = help_uri(r.id)
        if link:
            rule["helpUri"] = link
        rules.append(rule)
    return rules


def _fingerprint(f: Finding) -> str:
    return hashlib.sha256(f"{f.id}|{machine_path(f.file)}|{f.path}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


@lru_cache(maxsize=256)
def _uri(file: str) -> str:
    """The file as a relative URI reference: spaces, newlines and the like percent-encoded (a file name that
    is not UTF-8 keeps its bytes)."""
    try:
        raw = file.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = file.encode("utf-8", "backslashreplace")
    return quote(raw, safe="/")


def _justification(waiver: dict[str, Any]) -> str:
    """The waiver's reason, prefixed by the cluster it was granted for (`nlp`, `site:dc1`)."""
    reason, cluster = waiver.get("reason", ""), waiver.get("cluster", "")
    return f"{cluster}: {reason}" if cluster else reason


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.id,
        "level": _LEVEL[f.level],
        "message": {"text": tidy_text(f.message + (f" Fix: {f.hint}" if f.hint else ""))},
        "locations": [{
            "physicalLocation": {"artifactLocation": {"uri": _uri(machine_path(f.file)), "uriBaseId": SRCROOT},
                                 "region": {"startLine": max(1, f.line)}},
            "logicalLocations": [{"fullyQualifiedName": f.path or "cluster", "kind": "object"}],
        }],
        "partialFingerprints": {"clusterforgeFinding/v1": _fingerprint(f)},
    }
    if f.id in index:
        result["ruleIndex"] = index[f.id]
    if f.measured is not None:
        result["properties"] = {"measured": tidy(f.measured), "limit": tidy(f.limit), "unit": f.unit}
    if f.waiver is not None:  # a waiver holds for one cluster only: the dismissal says which
        result["suppressions"] = [{"kind": "external", "status": "accepted", "justification": _justification(f.waiver)}]
    return result


def render(verdict: Verdict) -> str:
    from clusterforge.formats.input_errors import RULE_ID, sarif_rule

    rules = _rules()
    if any(f.id == RULE_ID for f in verdict.findings):  # input that could not be checked (formats.input_errors)
        rules.append(sarif_rule())
    index = {r["id"]: i for i, r in enumerate(rules)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "clusterforge", "version": __version__,
                                "informationUri": "https://github.com/clusterforge/clusterforge", "rules": rules}},
            "originalUriBaseIds": {SRCROOT: {"description": {"text": _ROOT_DESCRIPTION}}},
            "results": [_result(f, index) for f in (*verdict.findings, *verdict.waived)],
        }],
    }
    return dumps(log, depth=4) + "\n"  # one result a line
