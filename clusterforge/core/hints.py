"""Bounded "did you mean" hints and bounded problem lists: the one place that suggests names and trims lists.

Input is untrusted and aliases let a few kilobytes repeat one unknown name a hundred thousand times, so:
- a hint names at most a few candidates, never the whole list of known names;
- a search is memoized (a name repeated through an alias is looked up once), looks at a bounded number of
  known names and words of bounded length, and all searches of one process share a budget of comparisons,
  past which hints fall back to naming a few known names;
- a list of problems keeps at most `PER_KIND` of one kind (the message with its quoted values taken out) and
  ends with one "... and N more" line, in one linear pass;
- the work a problem needs beyond its message (its line, its hint) is done only for the problems a list will
  keep (`Kinds`): a hundred thousand repeats of one unknown name cost a count each, not a search each.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from itertools import islice
from typing import TypeVar

MAX_WORD = 64  # longer words are not names anyone mistyped
MAX_CHOICES = 1_000  # known names a search looks at
SHOWN = 5  # known names a hint lists
PER_KIND = 20  # problems of one kind kept in a list
FINDINGS_PER_KIND = 20_000  # findings of one kind from one rule: above the rack limit, so one per rack is never cut
BUDGET = 500_000  # comparisons all searches of one process may make (about a second of difflib)
_MEMO_SIZE = 4_096

T = TypeVar("T")


class _Known:
    """The known names of one search target and the answers found in them (a name repeated through an alias is
    looked up once). Held by the identity of the caller's list while it is in use: callers pass the same list
    for each unknown name of a kind, and neither hashing nor copying it again is then needed."""

    def __init__(self, choices: Iterable[str]) -> None:
        names = tuple(islice(choices, MAX_CHOICES))
        self.names = [name for name in names if len(name) <= MAX_WORD]
        self.answers: dict[str, str | None] = {}


_held: dict[int, tuple[Sized, int, _Known]] = {}  # id(choices) -> (choices, its length then, its names)
_HELD = 64
_spent = 0


def _known_of(choices: Iterable[str]) -> _Known:
    if not isinstance(choices, Sized):
        return _Known(choices)
    held = _held.get(id(choices))
    if held is not None and held[0] is choices and held[1] == len(choices):
        return held[2]
    if len(_held) >= _HELD:
        _held.clear()
    found = _Known(choices)
    _held[id(choices)] = (choices, len(choices), found)
    return found


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The most similar known name, or None: bounded in the word's length, the names looked at and the work
    of the whole process (a search past the budget finds nothing)."""
    global _spent
    if not word or len(word) > MAX_WORD:
        return None
    known_names = _known_of(choices)
    if word in known_names.answers:
        return known_names.answers[word]
    if _spent + len(known_names.names) > BUDGET:
        return None
    _spent += len(known_names.names)
    matches = difflib.get_close_matches(word, known_names.names, n=1, cutoff=0.6)
    if len(known_names.answers) >= _MEMO_SIZE:
        known_names.answers.clear()
    known_names.answers[word] = found = matches[0] if matches else None
    return found


def known(choices: Sequence[str], limit: int = SHOWN) -> str:
    """A few known names for a hint: 'a, b, c and 12 more'."""
    shown = ", ".join(choices[:limit])
    return f"{shown} and {len(choices) - limit:,} more" if len(choices) > limit else shown


def did_you_mean(word: str, choices: Sequence[str], otherwise: str | None = None) -> str:
    """'did you mean X?' for the closest known name; else `otherwise`, or 'known: a, b, ...' when it is None."""
    suggestion = closest(word, choices)
    if suggestion is not None:
        return f"did you mean {suggestion}?"
    if otherwise is not None:
        return otherwise
    return f"known: {known(choices)}" if choices else ""


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|\d[\d,.]*")


@functools.lru_cache(maxsize=_MEMO_SIZE)  # a name repeated through an alias repeats its message
def kind_of(message: str) -> str:
    """A message with its quoted values and numbers taken out: problems of one kind share it."""
    return _QUOTED.sub("…", message)


class Kinds:
    """Which problems of a list are kept, known while the list is made: the first `per_kind` of each kind, as
    `capped` keeps them. A producer asks before it makes a problem and makes only the kept ones (their line,
    their hint); the others are counted here and never made, so the work and the memory stay bounded per kind of
    problem however often an alias repeats one. Ask in the order the problems are added to the list (problems
    added without asking are counted by `capped` as usual), then cap the list with `Kinds.capped`."""

    def __init__(self, per_kind: int = PER_KIND) -> None:
        self.per_kind = per_kind
        self._seen: dict[str, int] = {}
        self.left_out: dict[str, int] = {}  # kind -> problems counted but never made

    def kept(self, message: str) -> bool:
        """Count a problem with this message; whether the list keeps it (so it is worth making at all)."""
        kind = kind_of(message)
        seen = self._seen[kind] = self._seen.get(kind, 0) + 1
        if seen <= self.per_kind:
            return True
        self.left_out[kind] = self.left_out.get(kind, 0) + 1
        return False

    def capped(self, items: Iterable[T], message: Callable[[T], str], more: Callable[[T, int], T]) -> list[T]:
        """`capped` over the problems made, counting those left out with the rest of their kind."""
        return capped(items, message, more, self.per_kind, self.left_out)


def capped(items: Iterable[T], message: Callable[[T], str], more: Callable[[T, int], T],
           per_kind: int = PER_KIND, left_out: Mapping[str, int] | None = None) -> list[T]:
    """At most `per_kind` items of one kind, in order; each kind that had more ends with `more(last, n)`, an
    item saying n more were left out (placed after the last one kept). `left_out`: items of a kind counted
    before they were made (Kinds), which the n includes."""
    kept: list[T] = []
    counts: dict[str, int] = {}
    last: dict[str, int] = {}
    for item in items:
        kind = kind_of(message(item))
        seen = counts[kind] = counts.get(kind, 0) + 1
        if seen <= per_kind:
            last[kind] = len(kept)
            kept.append(item)
    extra = {last[kind]: max(n - per_kind, 0) + (left_out or {}).get(kind, 0) for kind, n in counts.items()}
    extra = {at: n for at, n in extra.items() if n}
    if not extra:
        return kept
    out: list[T] = []
    for i, item in enumerate(kept):
        out.append(item)
        if i in extra:
            out.append(more(item, extra[i]))
    return out


def and_more(message: str, count: int) -> str:
    """The message of the line that ends a trimmed kind."""
    return f"... and {count:,} more like this ({kind_of(message)})"
