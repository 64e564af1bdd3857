"""Rendering a team template with bounded work: a template folder comes from a pull request, so its jinja2
text must not read another file, run without end, or build a value or an output bigger than any input.

- No loader: `include`, `import` and `extends` are refused before rendering, naming the line.
- ImmutableSandboxedEnvironment: no attribute outside the sandbox's safe set, no mutation of lists or dicts.
- Every operation that can make a value in one step larger than the input limit is checked before it runs:
  `range()` (at most MAX_ITEMS items, lazily), `*`, `+`, `**` and `%`, numbers passed to any call or filter,
  widths in format strings, and strings stored in a `namespace()`.
- The output is streamed and stops past limits.INPUT_BYTES; the whole render (compile included) stops after
  SECONDS, checked at each of those operations and each piece of output, and by an interval timer for loops
  that do none of them (main thread only).

A template that breaks a bound is an input problem (exit 2) naming the template's file and line.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator
from types import FrameType
from typing import Any, cast

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError, nodes
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from clusterforge.core import limits
from clusterforge.core.errors import ClusterforgeError, Problem, one_line, shown

MAX_ITEMS = 100_000  # items of one range(), list or tuple a template builds
MAX_NUMBER = 1_000_000  # any number handed to a call or filter (a width, a count, a repeat)
MAX_POWER_BITS = 4096  # size of an integer power's result
SECONDS = 5.0  # wall time of one render (a real template takes milliseconds)
_BIG_DIGITS = re.compile(r"\d{7,}")  # a width or precision in a format string: 7 digits is past MAX_NUMBER


class _Bound(Exception):
    """A bound was broken inside jinja's generated code; turned into a Problem with the template's line."""


def _size(value: Any) -> int:
    return len(value) if isinstance(value, str | bytes | list | tuple) else 0


def _check_value(value: Any) -> Any:
    """A value a template built: strings within the input limit, lists and tuples within MAX_ITEMS."""
    if isinstance(value, str | bytes) and len(value) > limits.INPUT_BYTES.value:
        raise _Bound(f"builds a string of {len(value):,} characters, over the limit of "
                     f"{limits.INPUT_BYTES.value:,}")
    if isinstance(value, list | tuple) and len(value) > MAX_ITEMS:
        raise _Bound(f"builds a list of {len(value):,} items, over the limit of {MAX_ITEMS:,}")
    return value


def _check_argument(value: Any) -> None:
    """A number handed to a call or filter (a width, a count): at most MAX_NUMBER, so no single C-level step
    (ljust, center, indent, slice) allocates more than a bounded amount before any check can run."""
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_NUMBER:
        raise _Bound(f"passes {shown(value)}, over the limit of {MAX_NUMBER:,} for a number given to a call")
    if isinstance(value, list | tuple):
        for item in value[:MAX_ITEMS]:
            _check_argument(item)


def _check_format(text: Any) -> None:
    if isinstance(text, str) and _BIG_DIGITS.search(text):
        raise _Bound(f"formats with a width or precision over {MAX_NUMBER:,}")


class _Clock:
    """The render's deadline, checked at every bounded operation and every piece of output."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise _Bound(f"took longer than {self.seconds:g} s to render")


class _BoundedNamespace(Namespace):
    """`namespace()` whose stored values are checked, so `{% set ns.s = ns.s ~ ns.s %}` cannot double forever."""

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name, _check_value(value))


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox with every growing operation checked against the bounds above and the clock."""

    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def __init__(self, clock: _Clock, **options: Any) -> None:
        super().__init__(undefined=StrictUndefined, loader=None, **options)
        self.clock = clock
        self.globals["range"] = self._range
        self.globals["namespace"] = _BoundedNamespace
        self.globals.pop("lipsum", None)
        self.filters = {name: self._checked(f) for name, f in self.filters.items()}

    def _range(self, *args: int) -> Iterator[int]:
        """range(), at most MAX_ITEMS long (a huge one is refused before anything is allocated), each step
        checking the clock."""
        for arg in args:
            if not isinstance(arg, int):
                raise _Bound(f"range() takes whole numbers, not {shown(arg)}")
        numbers = range(*args)
        if len(numbers) > MAX_ITEMS:
            raise _Bound(f"range() of {len(numbers):,} items, over the limit of {MAX_ITEMS:,}")
        return self._ticking(numbers)

    def _ticking(self, numbers: range) -> Iterator[int]:
        clock = self.clock
        for number in numbers:
            clock.check()
            yield number

    def _checked(self, function: Callable[..., Any]) -> Callable[..., Any]:
        skip = 2 if hasattr(function, "jinja_pass_arg") else 1  # the context (if passed), then the value

        def checked(*args: Any, **kwargs: Any) -> Any:
            self.clock.check()
            for value in (*args[skip:], *kwargs.values()):
                _check_argument(value)
            if function.__name__ == "do_format" and args:
                _check_format(args[0])
            return _check_value(function(*args, **kwargs))

        if hasattr(function, "jinja_pass_arg"):
            checked.jinja_pass_arg = function.jinja_pass_arg  # type: ignore[attr-defined]
        return checked

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        self.clock.check()
        if operator == "*" and (_size(left) or _size(right)):
            count = right if _size(left) else left
            if isinstance(count, int) and count > 0:
                _check_value_size(max(_size(left), _size(right)) * count, left if _size(left) else right)
        elif operator == "+":
            _check_value_size(_size(left) + _size(right), left)
        elif operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
            if right * abs(left).bit_length() > MAX_POWER_BITS:
                raise _Bound(f"{shown(left)} ** {shown(right)} is over {MAX_POWER_BITS} bits")
        elif operator == "%" and isinstance(left, str):
            _check_format(left)
            _check_argument(right)
        return _check_value(super().call_binop(context, operator, left, right))

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.clock.check()
        for value in (*args, *kwargs.values()):
            _check_argument(value)
        method = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format in a function of its own
        if getattr(method, "__name__", "") in ("format", "format_map"):
            _check_format(getattr(method, "__self__", None))
        return _check_value(super().call(__context, __obj, *args, **kwargs))


def _check_value_size(size: int, like: Any) -> None:
    bound = MAX_ITEMS if isinstance(like, list | tuple) else limits.INPUT_BYTES.value
    if size > bound:
        raise _Bound(f"builds a value of {size:,} items, over the limit of {bound:,}")


_REFUSED = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "import", nodes.Extends: "extends"}


def _refuse_other_files(tree: nodes.Template, file: str) -> None:
    """A template is one file: nothing it names is read (the sandbox has no loader either)."""
    for node in tree.find_all(tuple(_REFUSED)):
        raise ClusterforgeError(Problem(f"{{% {_REFUSED[type(node)]} %}} is not allowed: a template is one "
                                        "file and reads no other", file, node.lineno,
                                        hint="put the text in blueprint.yaml.j2 itself, or use a macro"))


@contextlib.contextmanager
def _alarm(clock: _Clock, file: str) -> Iterator[None]:
    """Interrupt a loop that calls nothing the checks see (`{% for a in l %}{% for b in l %}…`): SIGALRM
    raises in the template's own code (so the problem names its line), trying again shortly when it lands
    elsewhere; outside the main thread only the checks apply."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        clock.end = 0.0  # every later check fails too
        if frame is not None and frame.f_code.co_filename == file:
            raise _Bound(f"took longer than {clock.seconds:g} s to render")
        signal.setitimer(signal.ITIMER_REAL, 0.01)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, clock.seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _line(exc: BaseException, file: str) -> int:
    """The template line being run when `exc` was raised: jinja rewrites its traceback so that the template's
    frames carry the template's file name and line."""
    tb = exc.__traceback__
    line = 0
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def render(text: str, file: str, params: dict[str, Any], finalize: Callable[[Any], Any],
           seconds: float = SECONDS) -> str:
    """`text` (the template held in `file`) rendered with `params`, within every bound above."""
    clock = _Clock(seconds)
    env = BoundedEnvironment(clock, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             finalize=finalize)
    limit = limits.INPUT_BYTES.value
    pieces: list[str] = []
    size = 0
    try:
        with _alarm(clock, file):
            tree = env.parse(text, filename=file)
            _refuse_other_files(tree, file)
            template = env.template_class.from_code(env, env.compile(tree, filename=file), env.make_globals(None))
            stream = cast(Generator[str, None, None], template.generate(**params))
            for piece in stream:
                size += len(piece)
                try:
                    clock.check()
                    if size > limit:
                        raise _Bound(f"writes more than {limit:,} characters, the limit of one input")
                except _Bound as exc:
                    stream.throw(exc)  # raised where the template is, so the problem names its line
                pieces.append(piece)
    except TemplateSyntaxError as exc:
        raise ClusterforgeError(Problem(f"template error: {exc.message}", file, exc.lineno or 0)) from None
    except _Bound as exc:
        raise ClusterforgeError(Problem(f"the template {exc}", file, _line(exc, file),
                                        hint="templates are bounded like any input")) from None
    except (TemplateError, ArithmeticError, ValueError, TypeError, LookupError) as exc:
        raise ClusterforgeError(Problem(f"template error: {one_line(str(exc))[:200]}", file,
                                        getattr(exc, "lineno", 0) or _line(exc, file))) from None
    except (RecursionError, MemoryError) as exc:
        what = "recursed too deep" if isinstance(exc, RecursionError) else "ran out of memory"
        raise ClusterforgeError(Problem(f"the template {what}", file, _line(exc, file),
                                        hint="templates are bounded like any input")) from None
    return "".join(pieces)
