"""JUnit XML: one testcase per rule and target, so CI test reports list every check that ran.

Files are named relative to the working directory, never absolutely, and numbers in the text are rounded, as in
the JSON formats (files.paths.machine_path, formats.numbers)."""

from __future__ import annotations

from collections import defaultdict
from xml.etree import ElementTree as ET

from clusterforge.core.errors import NO_FILE
from clusterforge.files.paths import machine_path
from clusterforge.formats.escape import xml_safe
from clusterforge.formats.input_errors import RULE_ID as INPUT_RULE
from clusterforge.formats.numbers import tidy_text
from clusterforge.policies import Finding, Verdict
from clusterforge.policies.config import LEVEL_RANK
from clusterforge.policies.registry import REGISTRY
from clusterforge.policies.waivers import EXPIRED_ID, UNUSED_ID

# The ids that are no registered rule, and the class that names what failed: the input itself (unreadable or
# invalid, exit 2) or the waivers file. Anything else unregistered is still a policy's finding.
_PSEUDO_DOMAINS = {INPUT_RULE: "input", EXPIRED_ID: "waivers", UNUSED_ID: "waivers"}


def classname(rule_id: str) -> str:
    """`clusterforge.<domain>`: test reports group cases by it, so it must say what kind of check failed."""
    domain = REGISTRY[rule_id].domain if rule_id in REGISTRY else _PSEUDO_DOMAINS.get(rule_id, "policy")
    return f"clusterforge.{domain}"


def _where(f: Finding) -> str:
    """`file:line: ` before a case's text; `file: ` without a line; nothing for a problem of no file."""
    if f.file in ("", NO_FILE):
        return ""
    file = machine_path(f.file)
    return f"{file}:{f.line}: " if f.line > 0 else f"{file}: "


def render(verdict: Verdict) -> str:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in (*verdict.findings, *verdict.waived):
        by_rule[f.id].append(f)
    suite = ET.Element("testsuite", name="clusterforge check")
    failures = skipped = tests = 0
    threshold = LEVEL_RANK[verdict.fail_level]
    for rule_id in [*verdict.rules_run, *[k for k in by_rule if k not in verdict.rules_run]]:
        findings = by_rule.get(rule_id, [])
        if not findings:
            ET.SubElement(suite, "testcase", name=xml_safe(rule_id), classname=classname(rule_id))
            tests += 1
            continue
        for f in findings:
            tests += 1
            case = ET.SubElement(suite, "testcase", name=xml_safe(f"{f.id} {f.path or 'cluster'}"),
                                 classname=classname(f.id))
            if f.file not in ("", NO_FILE):
                case.set("file", xml_safe(machine_path(f.file)))
                case.set("line", str(max(1, f.line)))
            message = tidy_text(f.message)
            text = xml_safe(tidy_text(f"{_where(f)}{f.message}" + (f" ({f.hint})" if f.hint else "")))
            if f.waiver is not None:
                skipped += 1
                reason = xml_safe(f"waived: {f.waiver.get('reason', '')}")
                ET.SubElement(case, "skipped", message=reason).text = text
            elif LEVEL_RANK[f.level] >= threshold:
                failures += 1
                ET.SubElement(case, "failure", message=xml_safe(message), type=f.level).text = text
            else:
                ET.SubElement(case, "system-out").text = f"{f.level}: {text}"
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    suite.set("errors", "0")
    root = ET.Element("testsuites", name="clusterforge", tests=str(tests), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
