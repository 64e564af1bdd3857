"""One definition of a character of one line of free text serves every field: no control, separator or format
character gets through, in pydantic's regex engine or in `re`."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest
from pydantic import TypeAdapter, ValidationError

from clusterforge.core.text import LINE_CHAR, FreeText

REFUSED = ("Cc", "Cf", "Zl", "Zp")
INVISIBLE = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in REFUSED]


def test_every_control_separator_and_format_character_is_refused_by_re() -> None:
    line_char = re.compile(LINE_CHAR)
    assert [hex(ord(c)) for c in INVISIBLE if line_char.fullmatch(c)] == []


def test_every_control_separator_and_format_character_is_refused_by_the_model() -> None:
    text = TypeAdapter(FreeText)
    accepted = []
    for char in INVISIBLE:
        try:
            text.validate_python(f"GPU {char}cluster")
            accepted.append(hex(ord(char)))
        except ValidationError:
            pass
    assert accepted == []


@pytest.mark.parametrize("text", ["Vision team — 16× DGX H100", "équipe vision 日本語 ✓", "a/b (c) [d] {e}"])
def test_ordinary_text_still_passes(text: str) -> None:
    assert TypeAdapter(FreeText).validate_python(text) == text


CASES = ["", "a", "abcde", "abcdef", "ab\n", "\nab", "a\u202eb", "日本語", "a b", "x" * 4 + "\u2028", " " * 5]


@pytest.mark.parametrize("text", CASES)
def test_a_one_line_field_accepts_what_its_pattern_does_in_pydantics_engine(text: str) -> None:
    """OneLine checks in Python what its pattern says (pydantic's own engine compiles that pattern 10 to 40 ms per
    model): each value is accepted or refused exactly as a field with `pattern=` would, with the same error."""
    from typing import Annotated

    from pydantic import StringConstraints

    from clusterforge.core.text import OneLine

    line = OneLine(1, 5)
    ours = TypeAdapter(Annotated[str, line])
    theirs = TypeAdapter(Annotated[str, StringConstraints(pattern=line.pattern)])

    def outcome(adapter: TypeAdapter[str]) -> tuple[str, str] | str:
        try:
            return adapter.validate_python(text)
        except ValidationError as error:
            (found,) = error.errors()
            return found["type"], str(found.get("ctx", {}).get("pattern"))

    assert outcome(ours) == outcome(theirs)
    assert ours.json_schema()["pattern"] == theirs.json_schema()["pattern"] == line.pattern
