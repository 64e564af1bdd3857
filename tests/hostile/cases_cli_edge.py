"""The command line's edge as CI drives it: file names that look like options or workflow commands, and
included files named as reports must name them (relative to the working directory, never the runner's path).

The harness runs each command from the folder above the tree (`tree/...` names are relative to it); `prepare`
puts files there when a case needs a bare name such as `-ho.cluster.yaml`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES
from tests.hostile.cases_basic import VALID
from tests.hostile.harness import Case

ONE, TWO = frozenset({1}), frozenset({2})
OPTION_NAME = "-ho.cluster.yaml"  # `-h -o .cluster.yaml` to a parser that takes it for options
COMMAND_NAME = "::warning file=x.yaml::forged.yaml"
OLD_COMMAND_NAME = "x ##[error]forged.yaml"


def _broken_hall() -> str:
    """The example hall with rack a02 on 208 V feeds: PWR-002, a policy failure (exit 1)."""
    hall = (EXAMPLES / "onprem-dgx-h100.yaml").read_text()
    broken = hall.replace("voltage: 415, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 415",
                          "voltage: 208, amps: 60, phase: 3}, {name: a02-b, side: B, voltage: 208")
    assert broken != hall
    return broken


def _beside_the_tree(*names: str, text: str) -> Callable[[Path], None]:
    def prepare(tree: Path) -> None:
        for name in names:
            (tree.parent / name).write_text(text)
    return prepare


def _shared_site() -> dict[str, str]:
    """Two teams on one included site file, together over rack a02's feeds: PWR-002 located in site-dc1.yaml."""
    files = {name: (EXAMPLES / "shared-site" / name).read_text()
             for name in ("site-dc1.yaml", "team-nlp.yaml", "team-vision.yaml")}
    files["team-nlp.yaml"] = (files["team-nlp.yaml"]
                              .replace("{rack: a02, pool: gpu, count: 1}", "{rack: a02, pool: gpu, count: 2}")
                              .replace("count: 3, partition", "count: 4, partition"))
    return files


CASES = [
    Case("edge-option-named-file", "a blueprint named `-ho.cluster.yaml` beside a failing one: after `--` it is "
         "a file, and the failing one still fails the check", {"broken.yaml": _broken_hall()},
         argv=[["check", "--", OPTION_NAME, "tree/broken.yaml"],
               ["check", "-f", "github", "--", OPTION_NAME, "tree/broken.yaml"],
               ["check", "-f", "sarif", "-o", "{out}/check.sarif", "--", OPTION_NAME, "tree/broken.yaml"]],
         prepare=_beside_the_tree(OPTION_NAME, text=VALID),
         exits={"*": ONE}, says={"check#1": "::error file=tree/broken.yaml,"}, seconds=10, rss_mib=200),
    Case("edge-exit2-line-forges-annotation", "an unreadable blueprint named like a workflow command: its "
         "`file:line: message` line must not become one", {},
         argv=[["check", "-f", "github", "--", COMMAND_NAME], ["check", "--", COMMAND_NAME],
               ["validate", "--", COMMAND_NAME], ["check", "-f", "github", "--", OLD_COMMAND_NAME]],
         prepare=_beside_the_tree(COMMAND_NAME, OLD_COMMAND_NAME, text="a: [\n"),
         exits={"*": TWO}, says={"check#0": f"./{COMMAND_NAME}:2:", "check#1": f"./{COMMAND_NAME}:2:",
                                 "validate#2": f"./{COMMAND_NAME}:2:", "check#3": "x ##\\x5b"},
         seconds=10, rss_mib=200),
    Case("edge-included-file-absolute-path", "a finding in an included site file: annotations and SARIF name "
         "it relative to the working directory, not by the runner's absolute path", _shared_site(),
         argv=[["check", "-f", "github", "tree/team-nlp.yaml", "tree/team-vision.yaml"],
               ["check", "-f", "sarif", "-o", "{out}/check.sarif", "tree/team-nlp.yaml", "tree/team-vision.yaml"]],
         exits={"*": ONE}, says={"check#0": "::error file=tree/site-dc1.yaml,"},
         check=lambda tree, out: _relative_in_sarif(tree, out), seconds=10, rss_mib=200),
]


def _relative_in_sarif(tree: Path, out: Path) -> None:
    sarif = out / "check.sarif"
    if sarif.exists():
        text = sarif.read_text()
        assert '"uri": "tree/site-dc1.yaml"' in text and str(tree) not in text, "SARIF names the absolute path"
