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
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from clusterforge.errors import ClusterforgeError, Problem, one_line, shown
from clusterforge.hints import did_you_mean, known
from clusterforge.validation import closest, validate
from clusterforge.yamlsource import Source, load_file

ENV_VAR = "CLUSTERFORGE_TEMPLATES"


class ParamSpec(BaseModel):
    """One template parameter as written in params.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["int", "float", "str", "bool", "choice"]
    default: Any
    help: str
    ge: float | None = None
    le: float | None = None
    choices: list[str | int] | None = None
    pattern: str | None = None

    @model_validator(mode="after")
    def _strings_have_patterns(self) -> ParamSpec:
        if self.type == "str" and not self.pattern:
            raise ValueError("a str parameter needs a pattern (its values are written into the blueprint)")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern does not compile: {exc}") from None
        return self

    def annotation(self) -> Any:
        if self.type == "choice":
            if not self.choices:
                raise ValueError("a choice parameter needs choices")
            return Literal[tuple(self.choices)]
        return {"int": int, "float": float, "str": str, "bool": bool}[self.type]

    def allowed(self) -> str:
        """The allowed values in words, for error messages and --help."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.ge is not None or self.le is not None:
            lo = "" if self.ge is None else f"{self.ge:g}"
            hi = "" if self.le is None else f"{self.le:g}"
            return f"{self.type} in {lo}..{hi}"
        if self.pattern:
            return f"{self.type} matching {self.pattern}, e.g. {self.default}"
        return self.type


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
            reason = ("not of the allowed form" if err["type"] == "string_pattern_mismatch"
                      else one_line(err["msg"].removeprefix("Value error, ")))
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
        from clusterforge.template_sandbox import render
        from clusterforge.yamlguard import read_text

        path = self.folder / "blueprint.yaml.j2"
        text = read_text(path, follow=False)
        return render(text, str(path), self.parameters(given), _finalize)


MAX_STRING = 1024  # characters in one string parameter


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
    """Where templates are found: --templates, $CLUSTERFORGE_TEMPLATES, the checkout, the installed share."""
    candidates = [extra] if extra else []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates.append(Path(__file__).resolve().parent.parent / "templates")
    candidates.append(Path(sys.prefix) / "share" / "clusterforge" / "templates")
    return [c for c in candidates if c.is_dir()]


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
