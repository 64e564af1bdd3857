"""Differential fuzzing: thousands of generated documents through both parse paths, which must agree exactly.

The fast path (rapidyaml) must give PyYAML's data, the line of every path and the same errors, or decline.
The generator is seeded (reproducible) and aims at where the two parsers could differ: anchors, aliases and
merges in every order, reserved indicators, escapes and surrogates, tags, YAML 1.1 scalars, duplicate keys and
anchors, block scalars, comments, flow and block styles.
"""

from __future__ import annotations

import contextlib
import random
import re

import pytest

from clusterforge.core.errors import ClusterforgeError
from clusterforge.files.fastyaml import RymlLines, parse_fast
from clusterforge.files.yamlsource import Source, parse_text

DOCUMENTS = 2400
SEED = 20260131

WORDS = ["gpu", "rack-a01", "dgx-h100", "a b", "x.y", "10.0.0.10@o2ib", "it's", "50 %", "a#b", "a: b", "é",
         "日本", "emoji😀", "-x", "?x", "x:y", "https://x", "a,b", "[x]", "{x}"]
YAML11 = ["yes", "no", "on", "off", "True", "~", "null", "0x1F", "010", "0o17", "1e3", "1.5e3", "1.5e+3", "1_000",
          ".inf", "-.inf", ".nan", "2027-01-31", "2026-13-45", "2027-01-31 10:00:00", "1:30", "+5", "-0", "0.5",
          "12", "-7", "3.", ".5", "=", "<<"]
RESERVED = ["@x", "`x`", "%x", "!x", "!!str 5", "!!int 7", "!!bool maybe", "!!float x", "!!int ''", "!foo x",
            "!!binary aGk=", "!!python/object:os.system x", "|", ">", "* x", "& x", "! x", "%"]
PLAIN = ["12", "-7", "0.5", "true", "false", "null", "'12'", '"yes"', "'it''s'", '"a #b"', '""', "'x: y'"]
QUOTED = ['"plain"', '"a\\"b"', '"\\ud83d\\ude00"', '"\\0"', '"\\x41"', '"\\u00e9"', '"\\t"', '"\\e"', '"line\\nnext"',
          "'it''s'", "'@x'", '"yes"', "'12'", '""', "''", '"a #b"', '"\\U0001F600"', '"\\ud800"', '"\\x85"']


class Generator:
    """One random document: block or flow collections, anchors and aliases, merges, awkward scalars."""

    def __init__(self, rng: random.Random, kind: int) -> None:
        self.rng = rng
        self.plain = kind == 0  # text the fast path takes: words, numbers, quotes without escapes
        self.special = kind == 2  # anchors, merges, tags and reserved characters
        self.anchors: list[str] = []
        self.maps: list[str] = []  # anchors of mappings (what a merge may name)

    def scalar(self) -> str:
        rng = self.rng
        pools = [WORDS[:6], PLAIN] if self.plain else [WORDS, YAML11, QUOTED] + ([RESERVED] * 2 if self.special else [])
        if self.special and self.anchors and rng.random() < 0.2:
            return "*" + rng.choice(self.anchors)
        value = rng.choice(rng.choice(pools))
        return rng.choice(["", "x", str(rng.randint(0, 99))]) if rng.random() < 0.1 else value

    def key(self) -> str:
        rng = self.rng
        if self.plain or rng.random() < 0.85:
            return rng.choice(["a", "b", "c", "name", "count", "k1", "k2", "long_key-name"])
        return rng.choice(YAML11 + QUOTED[:6] + ["'a'", '"b"', "? c"])

    def anchor(self, mapping: bool) -> str:
        if not self.special or self.rng.random() > 0.3:
            return ""
        name = self.rng.choice(["a", "b", "c", "d"]) if self.rng.random() < 0.1 else f"n{len(self.anchors)}"
        self.anchors.append(name)
        if mapping:
            self.maps.append(name)
        return f"&{name} "

    def merge(self) -> str | None:
        if not self.special or not self.maps or self.rng.random() > 0.4:
            return None
        names = self.rng.sample(self.maps, min(len(self.maps), self.rng.randint(1, 3)))
        if len(names) == 1 and self.rng.random() < 0.5:
            return f"<<: *{names[0]}"
        return "<<: [" + ", ".join(f"*{n}" for n in names) + "]"

    def flow(self, depth: int) -> str:
        rng = self.rng
        if depth > 2 or rng.random() < 0.45:
            return self.scalar()
        if rng.random() < 0.5:
            items = [self.flow(depth + 1) for _ in range(rng.randint(0, 3))]
            return "[" + ", ".join(items) + "]"
        mapping = self.anchor(True)  # the anchor names the mapping written next
        keys = [self.key() for _ in range(rng.randint(0, 3))]
        pairs = [f"{key}: {self.flow(depth + 1)}" for key in (dict.fromkeys(keys) if self.plain else keys)]
        if (merge := self.merge()) is not None:
            pairs.insert(rng.randint(0, len(pairs)), merge)
        return mapping + "{" + ", ".join(pairs) + "}"

    def block(self, indent: int, depth: int) -> list[str]:
        """Lines of a block mapping at `indent`."""
        rng = self.rng
        lines: list[str] = []
        keys = [self.key() for _ in range(rng.randint(1, 4))]
        if self.plain:  # duplicate keys are errors (the fast path declines them): keep most documents valid
            keys = list(dict.fromkeys(keys))
        merge = self.merge()
        if merge is not None:
            keys.insert(rng.randint(0, len(keys)), merge)
        pad = " " * indent
        for key in keys:
            if key.startswith("<<"):
                lines.append(pad + key)
                continue
            if rng.random() < 0.08:
                lines.append(pad + "# " + rng.choice(WORDS + RESERVED))
            roll = rng.random()
            if depth < 3 and roll < 0.3:
                anchor = self.anchor(True)
                lines.append(f"{pad}{key}: {anchor}".rstrip())
                lines += self.block(indent + rng.choice([1, 2, 4]), depth + 1)
            elif depth < 3 and roll < 0.5:
                anchor = self.anchor(False)
                lines.append(f"{pad}{key}: {anchor}".rstrip())
                inner = indent + rng.choice([0, 2]) if anchor == "" else indent + 2
                for _ in range(rng.randint(1, 3)):
                    if rng.random() < 0.4 and depth < 2:
                        sub = self.block(inner + 2, depth + 1)
                        lines.append(" " * inner + "- " + sub[0].lstrip())
                        lines += sub[1:]
                    else:
                        lines.append(" " * inner + "- " + self.flow(depth + 1))
            elif roll < 0.56:
                lines.append(f"{pad}{key}: {rng.choice(['|', '>', '|-', '>+'])}")
                lines += [pad + "  " + rng.choice(WORDS) for _ in range(rng.randint(1, 2))]
                if rng.random() < 0.3:
                    lines.append("")
            else:
                lines.append(f"{pad}{key}: {self.flow(depth + 1)}")
        return lines

    def document(self) -> str:
        lines = self.block(0, 0)
        if self.rng.random() < 0.05:
            lines.insert(0, self.rng.choice(["---", "%YAML 1.1\n---", "# comment"]))
        return "\n".join(lines) + "\n"


def outcome(parse: object, text: str) -> tuple[str, object]:
    try:
        source = parse(text)  # type: ignore[operator]
    except ClusterforgeError as exc:
        return "error", exc.problems
    return "data", source


def differences(text: str) -> list[str]:
    fast_kind, fast = outcome(lambda t: parse_fast(t, "f.yaml", parse_text), text)
    slow_kind, slow = outcome(lambda t: parse_text(t, "f.yaml"), text)
    if fast_kind != slow_kind:
        return [f"fast path gave {fast_kind}, PyYAML {slow_kind}: {fast if fast_kind == 'error' else slow}"]
    if fast_kind == "error":
        return [] if fast == slow else [f"errors differ: {fast} vs {slow}"]
    assert isinstance(fast, Source) and isinstance(slow, Source) and isinstance(slow.lines, dict)
    if fast.data != slow.data:
        return [f"data differs: {fast.data!r} vs {slow.data!r}"]
    return [f"line of {path}: {fast.line_of(path)} vs {line}" for path, line in slow.lines.items()
            if fast.line_of(path) != line][:3]


def corpus(seed: int = SEED, count: int = DOCUMENTS) -> list[str]:
    rng = random.Random(seed)
    return [Generator(rng, kind=i % 3).document() for i in range(count)]


def test_both_paths_agree_on_generated_documents() -> None:
    failures = []
    fast_taken = 0
    for text in corpus():
        found = differences(text)
        if found:
            failures.append(f"{text!r}\n  " + "\n  ".join(found))
        with contextlib.suppress(ClusterforgeError):
            fast_taken += isinstance(parse_fast(text, "f.yaml", parse_text).lines, RymlLines)
    assert not failures, f"{len(failures)} of {DOCUMENTS} documents differ; first ones:\n" + "\n".join(failures[:5])
    assert fast_taken > DOCUMENTS // 5, f"only {fast_taken} documents took the fast path: the test proves little"


@pytest.mark.parametrize("text", [
    "b: &m {x: 1, y: 2}\na: {x: 9, <<: *m}\n",             # explicit before the merge still wins
    "p: &p {x: 1}\nq: &q {x: 2, y: 3}\na: {<<: [*p, *q]}\n",  # the earlier merge wins
    "p: &p {x: 1}\nq: &q {<<: *p, y: 2}\na:\n  <<: *q\n  z: 3\n",  # nested merges
    "k1: {}\nb: [x:y, [x], a: b]\n",                        # a one-pair mapping in a list has no brace
    "a:\n  - {x}\n  - \n  - [{a: x.y}]\nc: {}\n",           # an empty item points at its dash
    "a: [?x]\n",                                          # PyYAML reads ?x in a flow list as a key
    "a: @x\n", "a: `x`\n", "a: %\n", "a: &x 1\nb: &x 2\n", "a: \"\\ud83d\\ude00\"\n", "a: \"\\0\"\n",
])
def test_known_disagreements_agree_now(text: str) -> None:
    assert differences(text) == []


BLOCK_INDICATORS = ["|", "|-", "|+", ">", ">-", ">+", "|2", "|2-", ">+2"]
BLOCK_BODIES = ["  text", "  text\n", "  text\n\n", "  a\n  b", "  a\n\n  b\n\n\n", "", "\n", "  a\n  # c\n"]


@pytest.mark.parametrize("indicator", BLOCK_INDICATORS)
@pytest.mark.parametrize("body", BLOCK_BODIES)
@pytest.mark.parametrize("context", ["d: {i}\n{b}", "x: 1\nd: {i}\n{b}", "l:\n- {i}\n{b}", "l:\n- - {i}\n{b}",
                                     "d: {i} # c\n{b}"])
def test_block_scalars_agree_at_the_end_of_a_file(context: str, indicator: str, body: str) -> None:
    """With and without a final line break, chomped or kept, as a value or a list item."""
    assert differences(context.format(i=indicator, b=body)) == []


@pytest.mark.parametrize("value", ["-.5", "+.5", ".5", "-.inf", "+.inf", ".inf", ".nan", "1_000", "-1_000", "+1",
                                   "-0", "+0", "0.", "-0.", "1.", "-.5e3", "+.5e+3", ".5e+3", ".5e3", "-0.5",
                                   "1.5e+3", "1.e+3", "-0x1f", "0o17", "017", "1:30", "-.5_0", "-.", "+.", "."])
@pytest.mark.parametrize("context", ["x: {v}\n", "x: [{v}]\n", "x: {v}", "- {v}\n", "x: {{k: {v}}}\n"])
def test_numbers_agree(context: str, value: str) -> None:
    """rapidyaml writes `-.5` into JSON as -0.5; YAML 1.1 (PyYAML) reads it as text."""
    assert differences(context.format(v=value)) == []


# Invalid YAML that rapidyaml reads leniently where PyYAML refuses it: a ':' that begins or ends a flow item, a
# plain scalar beginning with ']' or '}', text after a flow collection, a comment inside one. The fast path is
# chosen by the document's content, so every command still reaches one verdict on such a file; declining them
# by pattern would also decline quoted text and block scalars that merely contain brackets (the catalogs' `[U]`).
LENIENT = re.compile(r"[\[{,:][ ]*:|:[\]},]|(?:^[ ]*|[:-][ ]+)[\]}]|^[^\[{\n]*[\[{][^\n]*[ ]#|[\]}][ ]+[^\s#,\]}:]",
                     re.MULTILINE)


def test_short_documents_agree_exhaustively() -> None:
    """Every short value over the characters where the two parsers' grammars differ, in each context, except
    the invalid documents rapidyaml reads leniently (LENIENT)."""
    import itertools

    failures = []
    for length in range(1, 4):
        for chars in itertools.product("a:, -[]{}#.", repeat=length):
            token = "".join(chars)
            for context in ("x: {}\n", "x: [{}]\n", "x: {{k: {}}}\n", "- {}\n", "x:\n  {}\n", "x:\n- {}\n"):
                text = context.format(token)
                if differences(text) and not LENIENT.search(text):
                    failures.append(text)
    assert not failures, f"{len(failures)} documents differ, e.g. {failures[:5]}"
