"""Run the PR gate's steps as GitHub's runner runs them, without GitHub: the composite action's steps (action.yml)
in order, each `run:` script with `bash --noprofile --norc -eo pipefail` (a composite's `shell: bash`) in the
checkout, with the variables and files the runner sets for a pull request (GITHUB_WORKSPACE, RUNNER_TEMP, a
fresh GITHUB_OUTPUT per step, GITHUB_STEP_SUMMARY, GITHUB_EVENT_PATH with the event's JSON, GITHUB_ACTION_PATH,
...), the step's `env:` evaluated from the inputs, the event and the earlier steps' outputs, and its `if:`
decided as GitHub decides it (status functions, `==`, `!=`, `&&`, `||`, `!`). `continue-on-error` is honoured
(outcome failure, conclusion success). A `uses:` step is handed to a stub the test gives (setup-python, the
uploads): nothing here reaches GitHub.

The expressions are the small part of GitHub's language the gate's files use; anything else raises, so a step
that starts to use more fails its tests instead of being misread.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
GATE = ROOT / ".github" / "workflows" / "gate.yml"
POLICY_CHECK = ROOT / ".github" / "workflows" / "policy-check.yml"
SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]  # GitHub's `shell: bash`, the script as a file


def load(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text()))


def triggers(workflow: Mapping[str, Any]) -> Any:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as true


# ---------------------------------------------------------------------------------------------------------------
# Expressions

TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!()\[\].,])"
                   r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"cannot read the expression at {text[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value  # NaN is falsy


def _number(value: Any) -> float:
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return float("nan")
    return float("nan")


def equal(a: Any, b: Any) -> bool:
    """GitHub's `==`: strings compare ignoring case; values of different types compare as numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a.casefold() == b.casefold()
    if type(a) is type(b):
        return bool(a == b)
    return _number(a) == _number(b)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any], status: Mapping[str, bool]) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.context = context
        self.status = status

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.pos]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, found {token[1]!r}")
        self.pos += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.pos != len(self.tokens):
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self.peek() == "&&":
            self.take()
            right = self.compare()
            value = right if truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            value = equal(value, right) if op == "==" else not equal(value, right)
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == "(":
            self.take("(")
            self.take(")")
            if text not in self.status:
                raise ValueError(f"function {text}() is not modelled")
            return self.status[text]
        value: Any = self.context.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key = self.take()[1]
            else:
                key = self.primary()
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value


def evaluate(text: str, context: Mapping[str, Any], status: Mapping[str, bool] | None = None) -> Any:
    """The value of an expression, with or without its `${{ }}`."""
    text = text.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _Parser(text, context, status or {}).parse()


def as_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Mapping | list):
        return json.dumps(value)
    return str(value)


def interpolate(text: Any, context: Mapping[str, Any]) -> str:
    """A string with each `${{ expr }}` replaced by its value, as GitHub fills `env:` and `with:`."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: as_string(evaluate(m.group(1), context)), as_string(text))


def condition(text: Any, context: Mapping[str, Any], failed: bool) -> bool:
    """A step's `if:`: GitHub adds `success() &&` unless a status function is named."""
    if text is None:
        return not failed
    text = as_string(text)
    status = {"always": True, "success": not failed, "failure": failed, "cancelled": False}
    value = evaluate(text, context, status)
    if not re.search(r"\b(always|success|failure|cancelled)\(\)", text):
        return not failed and truthy(value)
    return truthy(value)


# ---------------------------------------------------------------------------------------------------------------
# The runner


def read_outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs: dict[str, str] = {}
    lines = path.read_text().split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1:end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
        i += 1
    return outputs


@dataclass
class StepRun:
    id: str
    name: str
    outcome: str  # success, failure or skipped
    conclusion: str
    outputs: dict[str, str] = field(default_factory=dict)
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    with_: dict[str, str] = field(default_factory=dict)


UsesStub = Callable[[dict[str, str], "ActionRun"], tuple[str, dict[str, str]]]


def pull_request_event(base: str, head: str, *, repository: str = "team/blueprints", fork: bool = False,
                       number: int = 7) -> dict[str, Any]:
    """What GITHUB_EVENT_PATH holds for a pull_request event (the fields the gate reads)."""
    head_repo = "someone/blueprints" if fork else repository
    return {"action": "synchronize", "number": number,
            "pull_request": {"number": number, "base": {"sha": base, "ref": "main", "repo": {"full_name": repository}},
                             "head": {"sha": head, "ref": "change", "repo": {"full_name": head_repo}}},
            "repository": {"full_name": repository}}


class ActionRun:
    """One run of the composite action at `action_path` in the checkout `workspace`."""

    def __init__(self, workspace: Path, temp: Path, *, inputs: Mapping[str, str] | None = None,
                 event: Mapping[str, Any] | None = None, event_name: str = "pull_request",
                 repository: str = "team/blueprints", action_path: Path = ROOT, path: str = "",
                 uses: Mapping[str, UsesStub] | None = None, extra_env: Mapping[str, str] | None = None) -> None:
        self.workspace, self.temp, self.action_path = workspace, temp, action_path
        self.action = load(action_path / "action.yml")
        temp.mkdir(parents=True, exist_ok=True)
        self.summary = temp / "step-summary.md"
        self.summary.touch()
        self.event = dict(event or {})
        (temp / "event.json").write_text(json.dumps(self.event))
        self.github: dict[str, Any] = {
            "event": self.event, "event_name": event_name, "repository": repository, "workspace": str(workspace),
            "sha": "", "ref": "", "action_path": str(action_path), "token": "t0ken"}
        self.steps: dict[str, dict[str, Any]] = {}
        self.runs: list[StepRun] = []
        self.failed = False
        self.path = path
        self.uses = dict(uses or {})
        self.extra_env = dict(extra_env or {})
        context = {"github": self.github, "inputs": {}}
        declared = self.action.get("inputs", {})
        unknown = set(inputs or {}) - set(declared)
        if unknown:
            raise ValueError(f"the action has no input {sorted(unknown)}")
        self.inputs = {name: as_string((inputs or {}).get(name, interpolate(spec.get("default", ""), context)))
                       for name, spec in declared.items()}

    def context(self) -> dict[str, Any]:
        return {"github": self.github, "inputs": self.inputs, "steps": self.steps, "runner": {"temp": str(self.temp)},
                "env": {}}

    def base_env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("GITHUB_", "RUNNER_", "CLUSTERFORGE_", "INPUT_", "PYTHON", "VIRTUAL_ENV"))}
        path = f"{self.path}{os.pathsep}{keep.get('PATH', '')}" if self.path else keep.get("PATH", "")
        return {**keep, "PATH": path, "CI": "true", "GITHUB_ACTIONS": "true",
                "GITHUB_WORKSPACE": str(self.workspace), "RUNNER_TEMP": str(self.temp),
                "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_EVENT_PATH": str(self.temp / "event.json"),
                "GITHUB_EVENT_NAME": self.github["event_name"], "GITHUB_REPOSITORY": self.github["repository"],
                "GITHUB_ACTION_PATH": str(self.action_path), **self.extra_env}

    def step_list(self) -> list[dict[str, Any]]:
        return list(self.action["runs"]["steps"])

    def find(self, key: str) -> dict[str, Any]:
        found = [s for s in self.step_list() if s.get("id") == key or s.get("name", "").startswith(key)]
        if len(found) != 1:
            raise KeyError(f"{len(found)} steps of the action match {key!r}")
        return found[0]

    def run_step(self, step: Mapping[str, Any], *, check_if: bool = True) -> StepRun:
        context = self.context()
        key = step.get("id") or step.get("name", "")
        if check_if and not condition(step.get("if"), context, self.failed):
            result = StepRun(key, step.get("name", ""), "skipped", "skipped")
        elif "run" in step:
            assert step.get("shell") == "bash", step.get("name")
            env = {**self.base_env(), **{k: interpolate(v, context) for k, v in step.get("env", {}).items()}}
            output = self.temp / f"output-{len(self.runs)}"
            output.write_text("")
            env["GITHUB_OUTPUT"] = str(output)
            script = self.temp / f"step-{len(self.runs)}.sh"
            script.write_text(step["run"])
            done = subprocess.run([*SHELL, str(script)], cwd=self.workspace, env=env, capture_output=True,
                                  text=True, timeout=600)
            outcome = "success" if done.returncode == 0 else "failure"
            result = StepRun(key, step.get("name", ""), outcome, outcome, read_outputs(output), done.returncode,
                             done.stdout, done.stderr)
        else:
            with_ = {k: interpolate(v, context) for k, v in step.get("with", {}).items()}
            action = step["uses"].split("@")[0]
            if action not in self.uses:
                raise KeyError(f"no stub for {step['uses']}")
            outcome, outputs = self.uses[action](with_, self)
            result = StepRun(key, step.get("name", ""), outcome, outcome, outputs, with_=with_)
        if result.outcome == "failure" and step.get("continue-on-error"):
            result.conclusion = "success"
        if result.conclusion == "failure":
            self.failed = True
        if step.get("id"):
            self.steps[step["id"]] = {"outputs": result.outputs, "outcome": result.outcome,
                                      "conclusion": result.conclusion}
        self.runs.append(result)
        return result

    def step(self, key: str, **kwargs: Any) -> StepRun:
        return self.run_step(self.find(key), **kwargs)

    def run(self, *, skip: tuple[str, ...] = ()) -> ActionRun:
        """Every step in order (those named in `skip` are left out as if they had succeeded with no outputs)."""
        for step in self.step_list():
            if step.get("id") in skip or step.get("name") in skip:
                if step.get("id"):
                    self.steps[step["id"]] = {"outputs": {}, "outcome": "success", "conclusion": "success"}
                continue
            self.run_step(step)
        return self

    @property
    def succeeded(self) -> bool:
        """The job's status after the action: no step concluded in failure (continue-on-error ones do not)."""
        return not self.failed

    def outputs(self) -> dict[str, str]:
        context = self.context()
        return {name: interpolate(spec["value"], context) for name, spec in self.action.get("outputs", {}).items()}

    def result(self, key: str) -> StepRun:
        [found] = [r for r in self.runs if r.id == key or r.name.startswith(key)]
        return found

    def log(self) -> str:
        return "\n".join(r.stdout + r.stderr for r in self.runs)


def no_op(with_: dict[str, str], run: ActionRun) -> tuple[str, dict[str, str]]:
    return "success", {}


def fails(with_: dict[str, str], run: ActionRun) -> tuple[str, dict[str, str]]:
    """An upload that GitHub refuses (code scanning not enabled: 'Advanced Security must be enabled')."""
    return "failure", {}
