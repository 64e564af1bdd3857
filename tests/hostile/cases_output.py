"""Outputs: `-o` never replaces an input, a device, a FIFO or a link (nor what a link points to), and the
formats CI publishes stay parseable and unforgeable whatever a file name or a waiver says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from tests.hostile.cases_basic import VALID
from tests.hostile.harness import Case, Fifo, Link

TWO = frozenset({2})
BP = "{tree}/cluster.yaml"

# A waiver whose free text tries to end its line: the loader may refuse it (exit 2) or the formats escape it.
FORGING_WAIVERS = """\
waivers:
  - rule: PWR-002
    cluster: tiny
    target: "x\\n::error file=forged.py,line=1::forged %0A"
    reason: "because\\x01\\x02\\x1b[31m reasons\\v\\f\\r\\n::error file=forged.py::forged ]]> <&"
    expires: 2030-01-01
"""
NEWLINE_NAME = "a\n::error file=forged.py,line=1::forged\x1b[31m.yaml"


def _no_forged_line(text: str, where: str) -> None:
    for line in text.splitlines():
        assert not line.startswith("::error file=forged"), f"{where}: a forged workflow command: {line!r}"
        assert re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line) is None, f"{where}: a raw control character: {line!r}"


def _formats_parse(tree: Path, out: Path) -> None:
    """Whatever each run wrote under out/ is what its reader parses."""
    for path in out.iterdir():
        data = path.read_bytes()
        text = data.decode("utf-8")
        if path.suffix in (".json", ".sarif"):
            json.loads(data)
        elif path.suffix == ".xml":
            ET.fromstring(data)
        _no_forged_line(text, path.name)


CASES = [
    Case("output-is-an-input", "-o names the blueprint, the waivers, or a render folder holding the blueprint",
         {"cluster.yaml": VALID, "waivers.yaml": "waivers: []\n", ".clusterforge-render": "# a render's folder\n"},
         argv=[["check", BP, "-o", BP],
               ["check", BP, "--waivers", "{tree}/waivers.yaml", "-f", "junit", "-o", "{tree}/waivers.yaml"],
               ["check", BP, "-o", "{tree}/../tree/./cluster.yaml"],
               ["report", BP, "-o", BP],
               ["render", BP, "-o", "{tree}"],
               ["render", BP, "--waivers", "{tree}/waivers.yaml", "-o", "{tree}"]],
         exits={"*": TWO}),
    Case("output-is-a-special-file", "-o names a FIFO, a link to a secret, a link to a folder outside",
         {"cluster.yaml": VALID, "pipe": Fifo(), "link": Link("{outside}/secret.yaml"), "dirlink": Link("{outside}"),
          "dangling": Link("{outside}/new-file")},
         argv=[["check", BP, "-o", "{tree}/pipe"],
               ["schema", "-o", "{tree}/pipe"],
               ["check", BP, "-f", "json", "-o", "{tree}/link"],
               ["report", BP, "-o", "{tree}/link"],
               ["new", "dgx-h100-superpod", "-o", "{tree}/link"],
               ["schema", "-o", "{tree}/dangling"],
               ["render", BP, "-o", "{tree}/dirlink"],
               ["render", BP, "-o", "{tree}/pipe"]],  # devices: tests/test_output_targets.py (never a real one)
         exits={"*": TWO}),
    Case("waiver-text-forges-ci-output", "control characters and workflow commands in a waiver's target and reason",
         {"cluster.yaml": VALID, "waivers.yaml": FORGING_WAIVERS},
         argv=[["check", BP, "--waivers", "{tree}/waivers.yaml", "-f", fmt, "-o", "{out}/check" + suffix]
               for fmt, suffix in (("github", ".txt"), ("junit", ".xml"), ("sarif", ".sarif"), ("json", ".json"),
                                   ("text", ".log"), ("markdown", ".md"))],
         exits={"*": frozenset({0, 2})}, check=_formats_parse),
    Case("file-name-forges-ci-output", "a blueprint whose file name holds a newline, a workflow command and ESC",
         {NEWLINE_NAME: VALID},
         argv=[["check", "{tree}/" + NEWLINE_NAME, "-f", fmt, "-o", "{out}/check" + suffix]
               for fmt, suffix in (("github", ".txt"), ("junit", ".xml"), ("sarif", ".sarif"), ("json", ".json"),
                                   ("text", ".log"), ("markdown", ".md"))],
         exits={"*": frozenset({0})}, check=_formats_parse),
    Case("output-cannot-be-written", "-o with an over-long file name, and under a parent that is a file: exit 2 "
         "naming the path (full disks and read-only folders: tests/test_output_targets.py)",
         {"cluster.yaml": VALID},
         argv=[["check", BP, "-o", "{out}/" + "x" * 300],
               ["report", BP, "-o", "{out}/" + "x" * 300 + ".html"],
               ["render", BP, "-o", "{out}/" + "x" * 300],
               ["new", "onprem-dev", "-o", "{out}/" + "x" * 300],
               ["check", BP, "-o", BP + "/check.txt"],
               ["render", BP, "-o", BP + "/out"]],
         exits={"*": TWO}, says={"check#0": "cannot write", "check#4": "cannot write"}),
]
