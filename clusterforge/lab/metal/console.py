"""A server's serial console log, read as it grows: each look reads only what was written since the last one, so
watching a boot costs the same each second however long the log (a boot phase's failure prints its playbook's
error there; a kernel's first seconds are hundreds of lines), and a server that boots again (libvirt starts its
log anew) is read from the start.

What the console says is the server's, not ours: it is only searched for fixed markers, and what is shown of it is
bounded (one failure line and the few lines after it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CARRY = 4096  # what is kept of the text already read: a marker or a failure's line split across two reads
READ_MAX = 1 << 20  # at most this much of the new text is read at each look; the rest at the next
SHOWN_LINES = 40  # a failure's line and the lines after it (the playbook's `fatal:` message, the check's output)
SHOWN_CHARS = 4000
TAIL_BYTES = 4096  # what `tail` reads of a console's end


@dataclass
class Console:
    """One console log followed from its start."""

    path: Path
    offset: int = 0
    text: str = ""  # what the last look read, after the carried end of what came before it

    def look(self) -> str:
        """Read what was written since the last look; the text to search (the new text after a carried tail)."""
        try:
            with self.path.open("rb") as log:
                size = log.seek(0, 2)
                if size < self.offset:  # written anew: the server booted again
                    self.offset, self.text = 0, ""
                log.seek(self.offset)
                new = log.read(READ_MAX)
        except FileNotFoundError:
            return self.text
        self.offset += len(new)
        self.text = self.text[-CARRY:] + new.decode("utf-8", errors="replace")
        return self.text

    def failure(self, markers: tuple[str, ...]) -> str | None:
        """The text from the first of `markers` found (in `markers`' order) to the end of its line, and the few
        lines after it (bounded), once its line is complete; None when there is none."""
        for marker in markers:
            at = self.text.find(marker)
            if at >= 0 and "\n" in self.text[at:]:
                lines = self.text[at:].splitlines()[:SHOWN_LINES]
                return "\n".join(line.rstrip() for line in lines).strip()[:SHOWN_CHARS]
        return None


def tail(path: Path, lines: int = 12) -> str:
    """The console's last few lines (from its last 4 KB, unprintable characters dropped), or "" when it has none:
    where a server stood when a wait ended without a failure line (a stalled fetch, a kernel that stopped)."""
    try:
        with path.open("rb") as log:
            size = log.seek(0, 2)
            log.seek(max(0, size - TAIL_BYTES))
            end = log.read(TAIL_BYTES).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    kept = ["".join(c for c in line if c.isprintable()).rstrip() for line in end.splitlines()[-lines:]]
    return "\n".join(line for line in kept if line)
