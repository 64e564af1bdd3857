"""The `clusterforge` command lines of README.md and docs/*.md run as written, on a fresh checkout.

Each doc's shell blocks are read top to bottom and every `clusterforge ...` line is run in-process (click's
runner, so the whole set takes seconds), in a scratch copy of the checkout (links to its files, without build
output; a line that would write through a link into the checkout fails): files a command writes (`-o out/`,
`-o hall.yaml`) land there and later lines of the same doc may read them, as a reader's would. A line runs
with its `# comment` removed, its shell globs expanded and its `[optional parts]` left out (a synopsis runs
in its shortest form). It must exit 0, or the code its comment names (`# exit 1`, as a doc that shows a
failing check says).

`cluster.yaml` is the docs' name for the reader's own blueprint: the scratch copy holds the onprem example
under that name (committed on a branch `main`, so `main:cluster.yaml` resolves as in the reader's repository)
until a doc makes its own (`clusterforge new ... -o cluster.yaml`). A YAML block whose first line is a comment
naming a file (`# waivers.yaml`, `# site-software.yaml: ...`) is that file: it is written before the doc's lines
run. Every other file a line names must exist in the checkout or be made by an earlier line.

Lines of these kinds are not run, each for the reason in SKIPPED: they need containers, SSH to a running
cluster, a cloud account, or minutes of image building. Lines of other programs (`pulumi`, `aws`,
`ansible-playbook`, `./scripts/demo`) are not read: they need a cloud, hosts or root.
"""

from __future__ import annotations

import glob
import itertools
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from clusterforge.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
READER_BLUEPRINT = ROOT / "examples" / "onprem-dgx-h100.yaml"

# (pattern on the argument list, why it is not run here). Small on purpose: everything else runs.
SKIPPED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^lab\b"), "starts podman containers (tests/lab runs the lab)"),
    (re.compile(r"^provision\b"), "runs site.yml over SSH against real hosts"),
    (re.compile(r"^image build\b(?!.*--dry-run)"), "bakes node images with podman (minutes; --dry-run lines run)"),
    (re.compile(r"^health\b.*--ssh\b"), "runs through SSH on a real cluster"),
    (re.compile(r"^update\b(?!.*--dry-run)"), "drains and reboots nodes of a running cluster over SSH"),
    (re.compile(r"--from-outputs\b"), "reads `pulumi stack output` of a deployed AWS stack"),
    (re.compile(r"^power\b(?!.*--help)"), "drives real BMCs (tests/test_bmc_power.py runs it on the Redfish emulator)"),
)
SHELL_LANGS = {"sh", "bash", "shell", "console", ""}
COMMAND = re.compile(r"^\s*(?:\$\s+)?clusterforge\s+(.*)$")
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
EXIT = re.compile(r"#\s*exit (\d)\b|\(exit (\d)\)")  # `# exit 1: ...` or `... (exit 1)` in the comment
EXIT_IF = re.compile(r"#.*\bexit (\d) (?:if|when)\b")  # `# ...; exit 1 if disruptive`: 0 or that code
# Files a scratch copy leaves out: build output and caches (a fresh checkout has none).
NOT_COPIED = {".git", ".venv", "out", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "node_modules",
              "clusterforge.egg-info"}


@dataclass(frozen=True)
class Line:
    doc: Path
    number: int
    text: str
    args: tuple[str, ...]
    expected: frozenset[int]

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.number}"


def command_lines(doc: Path) -> list[Line]:
    """The `clusterforge` lines of a doc's shell blocks (backslash continuations joined)."""
    lines: list[Line] = []
    fence: str | None = None
    lang = ""
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(raw)
        if match:
            fence, lang = (None, "") if fence else (match.group(1), match.group(2).lower())
            continue
        if fence is None or lang not in SHELL_LANGS:
            continue
        if pending:
            pending = (pending[0], pending[1] + " " + raw.strip())
        else:
            command = COMMAND.match(raw)
            if not command:
                continue
            pending = (number, command.group(1))
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1])
            continue
        start, text = pending
        pending = None
        exit_code, exit_if = EXIT.search(text), EXIT_IF.search(text)
        expected = ({int(exit_code.group(1) or exit_code.group(2))} if exit_code
                    else {0, int(exit_if.group(1))} if exit_if else {0})
        synopsis = re.sub(r"\s\[[^\]]*\]", "", text)
        args = tuple(shlex.split(synopsis, comments=True))
        lines.append(Line(doc, start, "clusterforge " + text.split(" #")[0].strip(), args, frozenset(expected)))
    return lines


NAMED_BLOCK = re.compile(r"^#\s*([\w.-]+\.(?:ya?ml|txt))\b")


def named_blocks(doc: Path) -> dict[str, str]:
    """The YAML and text blocks a doc names as files (first line `# NAME.yaml` or `# NAME.txt`), by name."""
    blocks: dict[str, str] = {}
    fence: str | None = None
    body: list[str] = []
    for raw in doc.read_text(encoding="utf-8").splitlines():
        match = FENCE.match(raw)
        if match and fence is None:
            fence, body = match.group(2).lower(), []
        elif match:
            name = NAMED_BLOCK.match(body[0].strip()) if fence in {"yaml", "yml", "text"} and body else None
            if name:
                indent = len(body[0]) - len(body[0].lstrip())
                blocks[name.group(1)] = "\n".join(line[indent:] for line in body) + "\n"
            fence = None
        elif fence is not None:
            body.append(raw)
    return blocks


def skip_reason(line: Line) -> str | None:
    joined = " ".join(line.args)
    return next((why for pattern, why in SKIPPED if pattern.search(joined)), None)


def scratch_checkout(where: Path) -> Path:
    """A copy of the checkout as a fresh clone has it, plus the reader's `cluster.yaml` on a git branch `main`."""
    work = where / "checkout"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in NOT_COPIED:
            continue
        (work / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    shutil.copyfile(READER_BLUEPRINT, work / "cluster.yaml")
    git = ["git", "-c", "user.name=docs", "-c", "user.email=docs@example.invalid", "-c", "init.defaultBranch=main"]
    for step in (["init", "-q"], ["add", "cluster.yaml"], ["commit", "-q", "-m", "the reader's blueprint"]):
        subprocess.run([*git, *step], cwd=work, check=True, capture_output=True)
    return work


def expand(args: tuple[str, ...], cwd: Path) -> list[str]:
    """Shell globs as the shell expands them: sorted matches, or the word itself when nothing matches."""
    out: list[str] = []
    for arg in args:
        matches = sorted(glob.glob(arg, root_dir=cwd)) if any(c in arg for c in "*?[") else []
        out += matches or [arg]
    return out


DOC_LINES = [(doc, command_lines(doc)) for doc in DOCS]
# Docs with a line known not to run, and why; strict, so the entry must go when the doc is fixed.
KNOWN_BROKEN: dict[str, str] = {}  # doc -> why its commands cannot run as written yet (an xfail, strict)


def doc_params() -> list[object]:
    return [pytest.param(doc, id=str(doc.relative_to(ROOT)), marks=[pytest.mark.xfail(
                strict=True, reason=KNOWN_BROKEN[str(doc.relative_to(ROOT))])]
                if str(doc.relative_to(ROOT)) in KNOWN_BROKEN else [])
            for doc, lines in DOC_LINES if lines]


@pytest.mark.parametrize("doc", doc_params())
def test_doc_commands_run_as_written(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = scratch_checkout(tmp_path)
    for name, text in named_blocks(doc).items():
        if (work / name).is_symlink():  # a file of the checkout by that name: the reader's own replaces it here
            (work / name).unlink()
        (work / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    runner = CliRunner()
    failures: list[str] = []
    for line in command_lines(doc):
        if skip_reason(line):
            continue
        args = expand(line.args, work)
        leaks = [a for o, a in itertools.pairwise(args) if o in {"-o", "--output"}
                 and ROOT in (work / a).resolve().parents]
        assert not leaks, f"{line.where}: would write into the checkout through a link: {leaks}"
        result = runner.invoke(app, args, input="\n" * 64, catch_exceptions=True)
        if result.exit_code not in line.expected:
            said = (result.output or "").strip().splitlines()[-3:]
            failures.append(f"{line.where}: `{line.text}` exited {result.exit_code}, the doc expects "
                            f"{sorted(line.expected)}: {' | '.join(said) or repr(result.exception)}")
    assert failures == []


def test_every_doc_command_is_run_or_skipped_for_a_listed_reason() -> None:
    """The skip list stays small: most lines run, and each skipped one matches a kind named in SKIPPED."""
    lines = [line for _, doc_lines in DOC_LINES for line in doc_lines]
    skipped = [line for line in lines if skip_reason(line)]
    assert len(lines) >= 30
    assert len(skipped) < len(lines) / 2


@pytest.mark.parametrize(("text", "args", "expected"), [
    ("clusterforge check a.yaml   # the verdict", ("check", "a.yaml"), {0}),
    ("clusterforge check bad.yaml  # exit 1: RCK-001 fails", ("check", "bad.yaml"), {1}),
    ("clusterforge check a.yaml --fail-level warning  # warnings fail too (exit 1)",
     ("check", "a.yaml", "--fail-level", "warning"), {1}),
    ("clusterforge diff main:a.yaml a.yaml  # the delta; exit 1 if disruptive", ("diff", "main:a.yaml", "a.yaml"),
     {0, 1}),
    ("clusterforge lab up [--nodes 9] [--bare]   # render", ("lab", "up"), {0}),
    ("clusterforge check \\\n  a.yaml", ("check", "a.yaml"), {0}),
])
def test_lines_are_read_as_a_shell_would(tmp_path: Path, text: str, args: tuple[str, ...], expected: set[int]) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(f"```sh\n{text}\n```\n\n```yaml\nclusterforge: no\n```\n", encoding="utf-8")
    lines = command_lines(doc)
    assert [(line.args, line.expected) for line in lines] == [(args, expected)]


def test_skips_are_the_listed_kinds() -> None:
    def reason(args: str) -> str | None:
        return skip_reason(Line(ROOT, 1, args, tuple(args.split()), frozenset({0})))

    assert reason("lab up") and reason("provision out/") and reason("image build c.yaml")
    assert reason("update a b -o out/") and reason("render c.yaml --from-outputs o.json")
    assert reason("power on gpu-0001 --bmcs bmcs.yaml") and not reason("power --help")
    assert not reason("image build c.yaml --dry-run") and not reason("update a b -o out/ --dry-run")
    assert not reason("check c.yaml") and not reason("health diag --help")
