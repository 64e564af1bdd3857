"""docs/aws.md's Pulumi lines stay true: the CLI it tells readers to install is the version the shipped workflow
pins, and the pytest commands it gives for the stack's mock tests name files that exist and collect tests.

test_docs_commands.py runs the docs' `clusterforge` lines but reads no `pulumi` or `pytest` line (they need a
cloud, or are the tests themselves); these are held here instead."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "aws.md"
WORKFLOW = ROOT / ".github" / "workflows" / "pulumi-aws.yml"
# A command line of a shell block, or a code span of the prose.
PYTEST_LINE = re.compile(r"(?:^|`)\.venv/bin/python -m pytest ([^`\n#]+?)\s*(?:#.*)?(?:`|$)", re.MULTILINE)


def _pinned() -> str:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return str(workflow["env"]["PULUMI_VERSION"])


def test_the_doc_installs_the_cli_version_the_workflow_pins() -> None:
    text = DOC.read_text()
    pinned = _pinned()
    installs = re.findall(r"get\.pulumi\.com \| sh -s -- --version (\S+)", text)
    archives = re.findall(r"get\.pulumi\.com/releases/sdk/pulumi-v([\d.]+)-", text)
    assert installs == [pinned], (installs, pinned)
    assert archives and set(archives) == {pinned}, (archives, pinned)
    assert f"pulumi version                                                    # v{pinned}" in text


def test_the_workflow_pin_is_at_or_above_the_locked_sdk() -> None:
    """The doc and the workflow say the CLI must not be older than the SDK the program imports."""
    locked = re.search(r"^pulumi==([\d.]+)$", (ROOT / "requirements" / "lock.txt").read_text(), re.MULTILINE)
    assert locked is not None

    def version(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split("."))

    assert version(_pinned()) >= version(locked.group(1))


def test_the_documented_mock_test_commands_run() -> None:
    """Each `.venv/bin/python -m pytest ...` line of the doc names paths that exist, and collects tests (the
    whole run is the tests of tests/aws themselves)."""
    commands = [shlex.split(m) for m in PYTEST_LINE.findall(DOC.read_text())]
    assert ["-q", "tests/aws"] in commands and len(commands) > 1, commands
    for args in commands:
        paths = [a for a in args if not a.startswith("-")]
        assert paths and all((ROOT / p).exists() for p in paths), args
        collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider",
                                    *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
        assert re.search(r"\b[1-9]\d* tests? collected", collected.stdout), collected.stdout[-500:]
