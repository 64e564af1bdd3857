"""Team blueprint templates: jinja2 text plus a parameter schema (types, ranges, defaults, help) kept beside it.

A template is a folder with `params.yaml` (the schema, read into a pydantic model) and `blueprint.yaml.j2`.
Rendering validates the parameters first (exit 2 names the parameter and its allowed range), then the
blueprint that comes out, so a template that renders always yields a loadable blueprint.

`--set` values are untrusted: every string parameter has a pattern, and each string value is written into the
template as a JSON-quoted scalar (valid YAML), so no value can close a quote, start a new key or a new line.
A template's defaults are checked against its own schema when it is loaded.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from clusterforge.core.errors import ClusterforgeError, Problem, one_line, shown
from clusterforge.core.hints import did_you_mean, known
from clusterforge.core.validation import closest, validate
from clusterforge.files.yamlsource import Source, load_file

ENV_VAR = "CLUSTERFORGE_TEMPLATES"


class ParamSpec(BaseModel):
    """One template parameter as written in params.yaml.

    `multiple_of` (with `also_allowed`, the values accepted besides its multiples) is for sizes a provider takes
    only in steps, such as FSx for Lustre's capacity: the help must state the same rule, so a value the help
    calls invalid is refused at `--set` and at the prompt.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["int", "float", "str", "bool", "choice"]
    default: Any
    help: str
    ge: float | None = None
    le: float | None = None
    choices: list[str | int] | None = None
    pattern: str | None = None
    multiple_of: int | None = Field(None, gt=0)
    also_allowed: list[int] = []

    @model_validator(mode="after")
    def _strings_have_patterns(self) -> ParamSpec:
        if self.type == "str" and not self.pattern:
            raise ValueError("a str parameter needs a pattern (its values are written into the blueprint)")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern does not compile: {exc}") from None
        if (self.multiple_of is not None or self.also_allowed) and self.type != "int":
            raise ValueError("multiple_of and also_allowed are for int parameters")
        return self

    def annotation(self) -> Any:
        if self.type == "choice":
            if not self.choices:
                raise ValueError("a choice parameter needs choices")
            return Literal[tuple(self.choices)]
        base = {"int": int, "float": float, "str": str, "bool": bool}[self.type]
        return Annotated[base, AfterValidator(self._in_steps)] if self.multiple_of else base

    def _in_steps(self, value: int) -> int:
        if self.multiple_of and value % self.multiple_of and value not in self.also_allowed:
            raise ValueError(f"not {self.steps()}")
        return value

    def number(self, value: float) -> str:
        """A bound as people write it: thousands separated, an int never in e-notation (2,000,000, not 2e+06)."""
        if self.type == "int" or float(value).is_integer():
            return f"{int(value):,}"
        return f"{value:,.{_DIGITS}g}"

    def steps(self) -> str:
        """The multiple_of rule in words, e.g. `1,200 or a multiple of 2,400`."""
        step = f"a multiple of {self.multiple_of:,}"
        extra = [f"{v:,}" for v in self.also_allowed if self.multiple_of and v % self.multiple_of]
        return ", ".join(extra) + f" or {step}" if extra else step

    def range(self) -> str:
        """The bounds in words: `1 to 2,048`, `at least 0.1`, `at most 64`; empty without bounds."""
        if self.ge is not None and self.le is not None:
            return f"{self.number(self.ge)} to {self.number(self.le)}"
        if self.ge is not None:
            return f"at least {self.number(self.ge)}"
        return "" if self.le is None else f"at most {self.number(self.le)}"

    def allowed(self) -> str:
        """The allowed values in words, for error messages, --params and the prompts: never a regular
        expression (the pattern is described, or the help and an example stand for it)."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.type == "bool":
            return "yes or no"
        words = [w for w in (self.range(), self.steps() if self.multiple_of else "") if w]
        if words:
            return "; ".join(words)
        if self.pattern:
            return pattern_words(self.pattern) or f"like {self.default} (see the help)"
        return "a number" if self.type in ("int", "float") else self.type


_DIGITS = 6  # significant digits of a float bound in words


def pattern_words(pattern: str) -> str | None:
    """A simple pattern (character classes and literals, each with a count) in words, e.g. `^[a-z][a-z0-9-]{0,39}$`
    as "a lowercase letter, then up to 39 lowercase letters, digits or dashes"; None for one with groups or
    alternatives, which the help and an example describe instead."""
    body, parts, at = pattern.removeprefix("^").removesuffix("$"), [], 0
    while at < len(body):
        if body[at] == "[":
            end = body.find("]", at + 1)
            names = _class_names(body[at + 1:end]) if end > at else None
            count = _COUNT.match(body, end + 1) if names else None
            if names is None or count is None:
                return None
            parts.append(_counted(names, count.group(0)))
            at = count.end()
        elif literal := _LITERAL.match(body, at):
            text = literal.group(0).replace("\\", "")
            if parts and parts[-1].startswith('"'):  # consecutive literals read as one: "-az"
                parts[-1] = parts[-1][:-1] + text + '"'
            else:
                parts.append(f'"{text}"')
            at = literal.end()
        else:
            return None
    return ", then ".join(parts) if parts else None


_COUNT = re.compile(r"(?:\{\d+(?:,\d+)?\}|[+*?])?")
_LITERAL = re.compile(r"(?:[A-Za-z0-9@:,_-]|\\[.-])+(?![{+*?])")
_NAMES = {"a-z": ("a lowercase letter", "lowercase letters"), "A-Z": ("an uppercase letter", "uppercase letters"),
          "0-9": ("a digit", "digits"), "a-f": ("a letter a-f", "letters a-f"), "-": ("a dash", "dashes"),
          ".": ("a dot", "dots"), "_": ("an underscore", "underscores")}


def _class_names(inside: str) -> list[tuple[str, str]] | None:
    """A character class's members as (one, many) names; None for one this cannot name."""
    members = re.findall(r".-.(?!$)|.-.$|.", inside)
    if not members or any(m not in _NAMES for m in members):
        return None
    names = [_NAMES[m] for m in members]
    if _NAMES["a-z"] in names and _NAMES["A-Z"] in names:
        names = [("a letter", "letters") if n == _NAMES["a-z"] else n for n in names if n != _NAMES["A-Z"]]
    return names


def _counted(names: list[tuple[str, str]], count: str) -> str:
    """`names` with how many of them: "a digit", "1 or 2 digits", "up to 39 letters or dashes"."""
    def listed(words: list[str]) -> str:
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    one = listed([names[0][0]] + [n[0].split(" ", 1)[1] for n in names[1:]])
    many = listed([n[1] for n in names])
    if count in ("", "{1}"):
        return one
    if count == "?":
        return f"optionally {one}"
    if count in ("+", "*"):
        return f"{'one or more' if count == '+' else 'any number of'} {many}"
    low, _, high = count.strip("{}").partition(",")
    if not high:
        return f"{int(low):,} {many}"
    if low == "0":
        return f"up to {int(high):,} {many}"
    joiner = " or " if int(high) == int(low) + 1 else " to "
    return f"{int(low):,}{joiner}{int(high):,} {many}"


class TemplateFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    params: dict[str, ParamSpec]


@dataclass(frozen=True)
class Template:
    name: str
    folder: Path

    @cached_property
    def source(self) -> Source:
        return load_file(self.folder / "params.yaml")

    @cached_property
    def spec(self) -> TemplateFile:
        return validate(TemplateFile, self.source)

    @property
    def description(self) -> str:
        return self.spec.description

    @cached_property
    def model(self) -> type[BaseModel]:
        """The parameters as a pydantic model; the template's own defaults must pass it."""
        fields: dict[str, Any] = {}
        for key, p in self.spec.params.items():
            pattern = f"^(?:{p.pattern})$" if p.pattern else None  # the whole value, however it is written
            fields[key] = (p.annotation(), Field(p.default, description=p.help, ge=p.ge, le=p.le, pattern=pattern,
                                                 max_length=MAX_STRING if p.type == "str" else None))
        config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True)
        model = create_model(f"{self.name}-params", __config__=config, **fields)
        try:
            model.model_validate({})
        except ValidationError as exc:
            raise ClusterforgeError(self._problems(exc, {})) from None
        return model

    def _problems(self, exc: ValidationError, given: dict[str, str]) -> list[Problem]:
        """Each bad value named by its parameter: a `--set` value, or a default in params.yaml."""
        out = []
        for err in exc.errors(include_url=False):
            key = str(err["loc"][0]) if err["loc"] else "?"
            spec = self.spec.params.get(key)
            reason = _REASONS.get(err["type"]) or one_line(err["msg"].removeprefix("Value error, "))
            hint = f"allowed: {spec.allowed()}" if spec else ""
            if key in given:
                out.append(Problem(f"parameter {key}={shown(given[key])}: {reason}", f"template {self.name}",
                                   hint=hint))
            else:
                out.append(self.source.problem(("params", key, "default"),
                                               f"the default of {key}, {shown(err.get('input'))}, is {reason}"
                                               if err["type"] == "string_pattern_mismatch" else
                                               f"the default of {key}: {reason}", hint))
        return out

    def parameters(self, given: dict[str, str]) -> dict[str, Any]:
        """Validate `--set` values (strings) against the schema; errors name the parameter and its range."""
        specs = self.spec.params
        problems = []
        for key in given:
            if key not in specs:
                problems.append(Problem(f"unknown parameter {shown(key)}", f"template {self.name}",
                                        hint=did_you_mean(key, list(specs), "parameters: " + known(list(specs)))))
        if problems:
            raise ClusterforgeError(problems)
        try:
            values = self.model.model_validate({k: _coerce(v, specs[k]) for k, v in given.items()})
        except ValidationError as exc:
            raise ClusterforgeError(self._problems(exc, given)) from None
        return {k: Quoted(v) if isinstance(v, str) else v for k, v in values.model_dump().items()}

    def render(self, given: dict[str, str]) -> str:
        """The blueprint text; the template is read like any input (a regular file within the size limit)
        and rendered in a bounded sandbox (see template_sandbox)."""
        from clusterforge.blueprint.template_sandbox import render
        from clusterforge.files.yamlguard import read_text

        path = self.folder / "blueprint.yaml.j2"
        text = read_text(path, follow=False)
        return render(text, str(path), self.parameters(given), _finalize)


MAX_STRING = 1024  # characters in one string parameter
# Pydantic's words for these would repeat a bound as it is stored (2000000.0); the hint gives it as people write it.
_REASONS = {"string_pattern_mismatch": "not of the allowed form", "greater_than_equal": "below the smallest allowed",
            "less_than_equal": "above the largest allowed"}


class Quoted(str):
    """A string parameter's value: `{{ value }}` writes it as a JSON-quoted scalar, which YAML reads back as
    exactly this string wherever it stands (plain or flow context, a comment), so it cannot break out."""

    __slots__ = ()


def _finalize(value: Any) -> Any:
    """Jinja's last step for every `{{ }}`: string parameters quoted, everything else as is."""
    return json.dumps(str(value)) if isinstance(value, Quoted) else value


def _coerce(value: str, spec: ParamSpec) -> Any:
    """`--set` gives strings: booleans and numbers in lax form, pydantic checks the rest."""
    if spec.type == "bool":
        return value.lower() in ("1", "true", "yes", "on") if value.lower() in (
            "1", "0", "true", "false", "yes", "no", "on", "off") else value
    if spec.type == "choice" and spec.choices and all(isinstance(c, int) for c in spec.choices):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def template_dirs(extra: Path | None = None) -> list[Path]:
    """Where templates are found: --templates, $CLUSTERFORGE_TEMPLATES, the checkout or the installed release."""
    candidates: list[Path | None] = [extra] if extra else []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    from clusterforge.files.checkout import shipped

    candidates.append(shipped("templates"))  # the checkout's, or the installed release's
    return [c for c in candidates if c is not None and c.is_dir()]


def discover(extra: Path | None = None) -> dict[str, Template]:
    found: dict[str, Template] = {}
    for folder in template_dirs(extra):
        for child in sorted(folder.iterdir()):
            if (child / "params.yaml").is_file() and (child / "blueprint.yaml.j2").is_file():
                found.setdefault(child.name, Template(child.name, child))
    return found


def get(name: str, extra: Path | None = None) -> Template:
    templates = discover(extra)
    if name not in templates:
        suggestion = closest(name, templates)
        raise ClusterforgeError(Problem(f"unknown template {shown(name)}", hint=(
            f"did you mean {suggestion}?" if suggestion else "see `clusterforge new --list`")))
    return templates[name]
