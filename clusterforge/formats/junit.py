"""JUnit XML: one testcase per rule and target, so CI test reports list every check that ran.

Files are named relative to the working directory, never absolutely, and numbers in the text are rounded, as in
the JSON formats (files.paths.machine_path, formats.numbers)."""

from __future__ import annotations

from collections import defaultdict
from xml.etree import ElementTree as ET

from clusterforge.files.paths import machine_path
from clusterforge.formats.escape import xml_safe
from clusterforge.formats.input_errors import RULE_ID as INPUT_RULE
from clusterforge.formats.numbers import tidy_text
from clusterforge.policies import Finding, Verdict
from clusterforge.policies.config import LEVEL_RANK
from clusterforge.policies.registry import REGISTRY


def render(verdict: Verdict) -> str:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in (*verdict.findings, *verdict.waived):
        by_rule[f.id].append(f)
    suite = ET.Element("testsuite", name="clusterforge check")
    failures = skipped = tests = 0
    threshold = LEVEL_RANK[verdict.fail_level]
    for rule_id in [*verdict.rules_run, *[k for k in by_rule if k not in verdict.rules_run]]:
        domain = REGISTRY[rule_id].domain if rule_id in REGISTRY else "input" if rule_id == INPUT_RULE else "waivers"
        findings = by_rule.get(rule_id, [])
        if not findings:
            ET.SubElement(suite, "testcase", name=xml_safe(rule_id), classname=f"clusterforge.{domain}")
            tests += 1
            continue
        for f in findings:
            tests += 1
            file = machine_path(f.file)
            case = ET.SubElement(suite, "testcase", name=xml_safe(f"{f.id} {f.path or 'cluster'}"),
                                 classname=f"clusterforge.{domain}", file=xml_safe(file), line=str(max(1, f.line)))
            message = tidy_text(f.message)
            text = xml_safe(tidy_text(f"{file}:{f.line}: {f.message}" + (f" ({f.hint})" if f.hint else "")))
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
