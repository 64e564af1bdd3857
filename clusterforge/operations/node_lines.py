"""What each node's task printed into a job's output, told apart by SLURM's own label, never by what was printed.

`health diag` and `health perf` run one task per node as one srun (operations/srun.py: `--label
--distribution=arbitrary --nodelist=LIST --ntasks=N`). The node a line came from is SLURM's word, in two parts:
- srun writes `N: ` before every line task N printed (srun(1), `--label`: "prepend task number to lines of
  stdout/err"). srun adds it itself, when it writes the line out: a task that prints `3: {...}` shows as
  `0: 3: {...}`, and a newline in its output only starts another line with its own label, so a task cannot
  make its text pass for another task's;
- the arbitrary distribution runs task N on the N-th node of LIST (SLURM's FAQ, "How do I run specific tasks on
  certain nodes in my allocation?": `srun -n5 -m arbitrary -w tux[0,0,1,0,0]`), and clusterforge writes LIST.
The `node` field a result carries is only the node's claim: one node's task can print lines naming any node, and
reading results by that field let one node hide another's wrong answer and name a healthy one in its place. Here a
result counts for the node whose task printed it; the field is only checked against it (perf_run.py, diag.py).

srun sends a task's output in messages of at most 1,024 bytes (SLURM_IO_MAX_MSG_LEN) and, labelling, ends a message
that does not end a line with a newline of its own: a longer line (a perf result of 8 GPUs is ~1.6 KB) arrives as
several labelled pieces, other tasks' lines possibly between them. A task's object is put back together from its
own pieces, in order: from a piece that starts with `{` until its braces close, the pieces joined as they came
(a linear scan of braces, brackets, strings and escapes; srun's added newlines fall inside the object and are
dropped). Anything else a task prints is stray output, passed over; lines without a label are srun's,
slurmstepd's or ssh's own, passed over too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from clusterforge.operations.bounds import MAX_LINE_BYTES

KEPT = 16  # objects read per task: one is expected; past this many the rest of its output is not read
_LABEL_WIDTH = 12  # srun pads the task number to the widest one's digits: ` 7: ` of 64 tasks
_TOKENS = re.compile(r'[{}\[\]"\\]')  # one character at a time: linear, no backtracking
_NOT_SPACE = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class Printed:
    """One object a task printed: its text as printed, or why it is not whole (`cut`: the output ended inside it,
    or it ran past MAX_LINE_BYTES)."""

    text: str
    cut: str = ""


@dataclass(slots=True)
class TaskOutput:
    """What one task printed: its objects, at most KEPT (`count` KEPT + 1: it printed more, and the rest of its
    output was not read, so a task flooding tiny objects costs no more than one printing a few)."""

    objects: list[Printed] = field(default_factory=list)
    count: int = 0
    pieces: list[str] = field(default_factory=list)
    size: int = 0
    depth: int = 0
    in_string: bool = False
    escaped: bool = False
    flooded: bool = False

    def _keep(self, printed: Printed) -> None:
        self.count += 1
        if len(self.objects) < KEPT:
            self.objects.append(printed)
        else:
            self.flooded = True  # KEPT + 1 objects: more than any verdict needs to fail it

    def _scan(self, piece: str, start: int) -> int | None:
        """Follow the object through piece[start:]; the index just past its closing brace, or None when it goes on.
        A backslash in a string escapes the next character, in this piece or the next."""
        escape_at = start if self.escaped else None
        for token in _TOKENS.finditer(piece, start):
            at = token.start()
            if escape_at is not None:
                escaped, escape_at = at == escape_at, None
                if escaped:
                    continue  # the character a backslash escapes: `\"` does not end the string
            char = piece[at]
            if self.in_string:
                if char == "\\":
                    escape_at = at + 1
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            else:
                self.depth -= 1
                if self.depth <= 0:
                    self.depth = 0
                    self.escaped = False
                    return at + 1
        self.escaped = escape_at is not None and escape_at >= len(piece)
        return None

    def feed(self, piece: str) -> None:
        """One labelled line of this task (without srun's label and newline)."""
        at = 0
        while not self.flooded:
            if self.depth == 0:
                begins = _NOT_SPACE.search(piece, at)
                if begins is None or begins.group() != "{":
                    return  # stray output: not a result
                at = begins.start()
                self.pieces, self.size, self.in_string, self.escaped = [], 0, False, False
            end = self._scan(piece, at)
            part = piece[at:len(piece) if end is None else end]
            self.size += len(part)
            if self.size > MAX_LINE_BYTES:
                self._keep(Printed("", f"longer than {MAX_LINE_BYTES >> 20} MiB"))
                self.flooded, self.pieces, self.depth = True, [], 0  # the rest of its output is not read
                return
            self.pieces.append(part)
            if end is None:
                return
            self._keep(Printed("".join(self.pieces)))
            self.pieces, at = [], end

    def close(self) -> None:
        """The output ended: an object still open was cut off."""
        if self.depth and not self.flooded:
            self._keep(Printed("".join(self.pieces), "the output ended inside it"))
        self.pieces, self.depth = [], 0


def label(line: str) -> tuple[int, str] | None:
    """(task, what it printed) of a line srun labelled `  N: text`, or None for a line without a label."""
    colon = line.find(": ", 0, _LABEL_WIDTH)
    head = line[:colon].lstrip(" ") if colon > 0 else ""
    if not head or not head.isascii() or not head.isdigit():
        return None
    return int(head), line[colon + 2:].rstrip("\n")


def by_task(lines: Iterable[str], tasks: int) -> dict[int, TaskOutput]:
    """What each task 0..TASKS-1 printed, from srun's labelled output (a label past the task count, which srun does
    not write, is passed over like an unlabelled line)."""
    found: dict[int, TaskOutput] = {}
    for line in lines:
        labelled = label(line)
        if labelled is None or labelled[0] >= tasks:
            continue
        task, text = labelled
        found.setdefault(task, TaskOutput()).feed(text)
    for output in found.values():
        output.close()
    return found


def by_node(output: str, nodes: Sequence[str]) -> dict[str, TaskOutput]:
    """What each node's task printed: task N ran on NODES[N] (the order srun was given, operations/srun.py). Lines
    end at a newline only, where srun starts its labels: a task's `\\r` or U+2028 (which str.splitlines also
    breaks at) must not start a line that reads as another task's."""
    return {nodes[task]: printed for task, printed in by_task(output.split("\n"), len(nodes)).items()
            if printed.count}
