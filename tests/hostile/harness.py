"""Run one hostile input through every command as a separate process and check what must always hold.

A case is a small file tree (the blueprint and anything it includes, links, FIFOs) plus what each command
must answer. Whatever a case asks, every run must: exit 0, 1 or 2 (or the case's own set), print no
traceback, stay under the memory ceiling and the hang timeout, leave every file outside its output untouched,
and carry no byte of the secret planted outside the blueprint's tree in any output.

Each case states its target: `seconds` (the time one command may take, default HANG_S) and `rss_mib` (peak
resident memory, default MAX_RSS_MIB). The memory bound is held as it is. The time is held on the command's own
CPU time (user and system, its children's included), at GUARD times the target: what a hostile input can do is
make the work blow up (an alias expanded a hundred thousand times, a quadratic walk: ten times the target and
more), and a command's CPU time measures its work whatever runs beside it. Wall time measured the neighbours and
the machine: the same 1.4-s validate took 2.2 s a few minutes later on an idle machine here, and 2.6 s in CI. The
target itself is measured in `benchmarks/hostile.py`, on a machine to itself, from the times recorded here
(`RUNS`). A command still running after HANG_S (wall) has hung, whatever its CPU time: a read that blocks uses
none. Every command also runs under a hard address-space limit (`HARD_LIMIT_MIB`, RLIMIT_AS), so a memory bomb
that slips through fails its case with a MemoryError instead of exhausting the machine CI runs on.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import stat
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.hostile import forked

SECRET = "CLUSTERFORGE-SECRET-0f3a9c"  # planted outside the tree: must never appear in any output
MAX_RSS_MIB = 256
HANG_S = 30  # a run still going after this has hung: the case fails
GUARD = 2.0  # a command's CPU time past this many times its case's target fails the case (see above)
HARD_LIMIT_MIB = 2048  # address space of one command: past it allocation fails instead of the machine swapping

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Link:
    """A symbolic link; `{outside}` in the target stands for the folder holding the secret."""

    target: str


@dataclass(frozen=True)
class Fifo:
    """A named pipe (reading it would block forever)."""


Entry = str | bytes | Link | Fifo

# Command recipes: name -> argv after `clusterforge`, given the entry file and the output folder.
Recipe = Callable[[str, Path], list[str]]
RECIPES: dict[str, Recipe] = {
    "validate": lambda f, out: ["validate", f],
    "check": lambda f, out: ["check", f],
    "check-json": lambda f, out: ["check", f, "-f", "json", "-o", str(out / "check.json")],
    "check-sarif": lambda f, out: ["check", f, "-f", "sarif", "-o", str(out / "check.sarif")],
    "check-junit": lambda f, out: ["check", f, "-f", "junit", "-o", str(out / "check.xml")],
    "check-github": lambda f, out: ["check", f, "-f", "github"],
    "plan": lambda f, out: ["plan", f],
    "plan-json": lambda f, out: ["plan", f, "-f", "json"],
    "render": lambda f, out: ["render", f, "-o", str(out / "render")],
    "report": lambda f, out: ["report", f, "-o", str(out / "report.html")],
}
BLUEPRINT_COMMANDS = tuple(RECIPES)


@dataclass(frozen=True)
class Case:
    """One hostile input and what the commands must answer.

    `exits` maps a recipe name (or "*" for the rest) to the exit codes allowed; `says` maps a recipe name to
    text its output must contain. `argv` replaces the recipes for commands that take no blueprint (`new`,
    `inventory`): a list of argument lists with `{tree}` and `{out}` placeholders.
    """

    name: str
    problem: str  # the attack, in a few words
    files: Mapping[str, Entry] = field(default_factory=dict)
    entry: str = "cluster.yaml"  # relative to the tree, or an absolute path such as /dev/zero
    commands: Sequence[str] = BLUEPRINT_COMMANDS
    exits: Mapping[str, frozenset[int]] = field(default_factory=dict)
    says: Mapping[str, str] = field(default_factory=dict)
    argv: Sequence[Sequence[str]] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    check: Callable[[Path, Path], None] | None = None  # extra assertions on (tree, out) after every run
    prepare: Callable[[Path], None] | None = None  # extra set-up of the tree (e.g. a git history) before any run
    seconds: float = HANG_S  # the time each command of the case should take (target; the test holds GUARD times it)
    rss_mib: float = MAX_RSS_MIB  # the peak-memory bound each command of the case must keep

    @property
    def hang_s(self) -> float:
        """The wall time after which a command of this case has hung and is stopped."""
        return max(HANG_S, self.seconds)


@dataclass
class Run:
    case: str
    command: str
    exit: int
    seconds: float  # wall time
    cpu_seconds: float  # the command's own user and system time
    rss_mib: float
    output: str


RUNS: list[Run] = []


def build(case: Case, base: Path) -> tuple[Path, Path, Path]:
    """Materialise the case: tree/ (the blueprint's folder), outside/ (the secret), out/ (outputs)."""
    tree, outside, out = base / "tree", base / "outside", base / "out"
    for folder in (tree, outside, out):
        folder.mkdir(parents=True, exist_ok=True)
    (outside / "secret.yaml").write_text(f"{SECRET}: {SECRET}\n")
    (outside / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    for relative, entry in case.files.items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(entry, Link):
            path.symlink_to(entry.target.replace("{outside}", str(outside)))
        elif isinstance(entry, Fifo):
            os.mkfifo(path)
        elif isinstance(entry, bytes):
            path.write_bytes(entry)
        else:
            path.write_text(entry, encoding="utf-8", errors="surrogatepass")
    if case.prepare is not None:
        case.prepare(tree)
    return tree, outside, out


def snapshot(*folders: Path) -> dict[str, tuple[int, int, str]]:
    """Every path below the folders with its mode, size and (regular files) content hash; never opens a FIFO."""
    seen: dict[str, tuple[int, int, str]] = {}
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                info = path.lstat()
                digest = ""
                if stat.S_ISREG(info.st_mode):
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                seen[str(path)] = (info.st_mode, info.st_size, digest)
    return seen


# The command runs as the grandchild of the test: a small launcher (started fresh, a few MiB) caps the address
# space, forks and waits for it, and reports the grandchild's own peak RSS and CPU time (forked.report_and_exit).
# Measured on the direct child, the RSS would include the test process's memory, which the kernel counts for a
# child forked from it.
LAUNCHER = f"""
import os, resource, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.hostile.forked import report_and_exit
limit, report = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-m", "clusterforge", *sys.argv[3:]])
report_and_exit(pid, report)
"""

FRESH = False  # True: every command a new interpreter (benchmarks/hostile.py); False: forked (forked.py)


def run(case: Case, argv: list[str], command: str, cwd: Path) -> Run:
    """One command in its own process group: exit code, wall time, and the CPU time and peak RSS of the command
    alone."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "COLUMNS": "120", **case.env}
    log, report = cwd / f".log-{command}", cwd / f".rss-{command}"
    limit = HARD_LIMIT_MIB * 1024 * 1024
    timeout = case.hang_s
    start = time.monotonic()
    if FRESH:
        exit_code = _fresh(argv, cwd, env, log, report, limit, timeout)
    else:
        exit_code = _forked(argv, cwd, env, log, report, limit, timeout)
    seconds = time.monotonic() - start
    output = log.read_bytes().decode("utf-8", "replace")
    log.unlink()
    # a launcher killed at the hang timeout may leave the report empty: no figures then (the hang is reported), and
    # the exit code is the launcher's (its signal)
    figures = (report.read_text() if report.is_file() else "").split()
    rss_mib = int(figures[0]) / 1024 if len(figures) == 3 else 0.0
    cpu_seconds = float(figures[1]) if len(figures) == 3 else 0.0
    exit_code = int(figures[2]) if len(figures) == 3 else exit_code
    report.unlink(missing_ok=True)
    result = Run(case.name, command, exit_code, seconds, cpu_seconds, rss_mib, output)
    RUNS.append(result)
    return result


def _fresh(argv: list[str], cwd: Path, env: dict[str, str], log: Path, report: Path, limit: int,
           timeout: float) -> int:
    """`python -m clusterforge ARGV` started anew, under LAUNCHER."""
    with open(log, "wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(limit), str(report), *argv], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def _forked(argv: list[str], cwd: Path, env: dict[str, str], log: Path, report: Path, limit: int,
            timeout: float) -> int:
    """The command forked from the fork server (forked.py): the same process, streams and figures, without
    importing the package again. The exit code returned is the forked process's, which run() reads from the
    report instead whenever there is one (forked.report_and_exit says why)."""
    proc = forked.context().Process(target=forked.command, args=(argv, str(cwd), env, str(log), str(report), limit))
    proc.start()
    proc.join(timeout)
    if proc.exitcode is None:  # hung: its session is its process group (forked.command)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.join()
    exit_code = proc.exitcode
    proc.close()
    assert exit_code is not None
    return exit_code


def outputs_text(out: Path) -> str:
    """Everything the commands wrote below out/, as text, for the secret search."""
    parts = []
    for path in sorted(out.rglob("*")):
        if path.is_file() and not path.is_symlink():
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def commands_of(case: Case, tree: Path, out: Path) -> list[tuple[str, list[str]]]:
    if case.argv:
        return [(" ".join(a[:1]) + f"#{i}", [s.replace("{tree}", str(tree)).replace("{out}", str(out)) for s in a])
                for i, a in enumerate(case.argv)]
    entry = case.entry if os.path.isabs(case.entry) else str(tree / case.entry)
    return [(name, RECIPES[name](entry, out)) for name in case.commands]


def exercise(case: Case, base: Path) -> list[str]:
    """Run every command of the case; returns the broken guarantees (empty when all hold). The harness failing on
    one case (an exception, not a broken guarantee) is that case's failure with its traceback, never every case's:
    the cases share one fixture."""
    try:
        return _exercise(case, base)
    except Exception:  # reported as this case's failure, with the traceback
        return [f"{case.name}: the harness failed on this case:\n{traceback.format_exc()[-3000:]}"]


def _exercise(case: Case, base: Path) -> list[str]:
    tree, outside, out = build(case, base)
    broken: list[str] = []
    for command, argv in commands_of(case, tree, out):
        before = snapshot(tree, outside)
        result = run(case, argv, command, base)
        allowed = case.exits.get(command, case.exits.get("*", frozenset({0, 1, 2})))
        where = f"{case.name} / {command}"
        if result.seconds >= case.hang_s:
            broken.append(f"{where}: still running after {case.hang_s:g} s")
        elif result.cpu_seconds > GUARD * case.seconds:
            broken.append(f"{where}: used {result.cpu_seconds:.1f} s of CPU, over {GUARD:g} times its target of "
                          f"{case.seconds} s")
        if result.exit not in allowed:
            broken.append(f"{where}: exit {result.exit}, expected one of {sorted(allowed)}\n{result.output[-2000:]}")
        if "Traceback (most recent call last)" in result.output:
            broken.append(f"{where}: printed a traceback\n{result.output[-2000:]}")
        if result.rss_mib > case.rss_mib:
            broken.append(f"{where}: peak RSS {result.rss_mib:.0f} MiB > {case.rss_mib} MiB")
        if SECRET in result.output or SECRET in outputs_text(out):
            broken.append(f"{where}: a byte of a file outside the blueprint's tree reached the output")
        if "BEGIN OPENSSH" in result.output:
            broken.append(f"{where}: echoed a private key's first line")
        if command in case.says and case.says[command] not in result.output:
            broken.append(f"{where}: output lacks {case.says[command]!r}\n{result.output[-2000:]}")
        after = snapshot(tree, outside)
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            broken.append(f"{where}: touched files outside its output: {[c[0] for c in changed][:5]}")
        if case.check is not None:
            try:
                case.check(tree, out)
            except AssertionError as exc:
                broken.append(f"{where}: {exc}")
    return broken


def all_cases() -> list[Case]:
    """Every CASES list of the tests/hostile/cases_*.py modules."""
    import importlib

    found: list[Case] = []
    for module_file in sorted(Path(__file__).parent.glob("cases_*.py")):
        module = importlib.import_module(f"tests.hostile.{module_file.stem}")
        found.extend(module.CASES)
    names = [c.name for c in found]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"hostile case names must be unique: {sorted(duplicates)}"
    return found
