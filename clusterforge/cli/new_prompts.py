"""`new -i`: ask for each parameter the way a person answers, and refuse a wrong value at the prompt.

Every question says the parameter's help and its allowed values in words (a range as `1 to 2,048`, a pattern
described, never a regular expression), and offers the default. On a terminal the questions are questionary's:
a menu for a parameter with choices, yes/no for a flag, and text checked as it is typed by the template's own
validation. Anything else on stdin (a pipe, a test) gets plain lines that a script can answer: choices as a
numbered list (a number, the value or its unique beginning), and a refused value asked again with the reason.
The prompts go to stderr, so `new -i > blueprint.yaml` keeps stdout for the blueprint.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import click

from clusterforge.blueprint.templating import ParamSpec, Template
from clusterforge.core.errors import ClusterforgeError


@dataclass(frozen=True)
class Question:
    """One parameter to ask for, and the template's verdict on an answer."""

    key: str
    spec: ParamSpec
    template: Template

    @property
    def default(self) -> str:
        return str(self.spec.default)

    def message(self) -> str:
        return f"{self.key} — {self.spec.help}"

    def refusal(self, answer: str) -> str | None:
        """None when the template takes `answer`, else why not (the reason and the allowed values)."""
        try:
            self.template.parameters({self.key: answer})
        except ClusterforgeError as error:
            return "; ".join(f"{p.message.removeprefix('parameter ')} ({p.hint})" if p.hint else p.message
                             for p in error.problems)
        return None


Asker = Callable[[Question], str]


def ask_all(template: Template, given: dict[str, str], ask: Asker) -> dict[str, str]:
    """Every parameter not already given (`--set`), asked in the template's order."""
    answers = dict(given)
    for key, spec in template.spec.params.items():
        if key not in given:
            answers[key] = ask(Question(key, spec, template))
    return answers


def asker() -> Asker:
    """questionary needs a terminal: a pipe or a test's input gets the line prompts."""
    return ask_on_terminal if sys.stdin.isatty() else ask_by_lines


def ask_by_lines(question: Question) -> str:
    """One line per answer; asked again, with the reason, until the template takes it."""
    spec = question.spec
    while True:
        if spec.choices:
            click.echo(question.message(), err=True)
            for number, choice in enumerate(spec.choices, 1):
                click.echo(f"  {number}) {choice}", err=True)
            typed = click.prompt(f"choose 1-{len(spec.choices)} or type the value", default=question.default,
                                 err=True)
            answer = _chosen(typed, [str(c) for c in spec.choices])
        else:
            answer = click.prompt(f"{question.message()} ({spec.allowed()})", default=question.default, err=True)
        refusal = question.refusal(answer)
        if refusal is None:
            return answer
        click.echo(f"  refused: {refusal}", err=True)


def _chosen(typed: str, choices: list[str]) -> str:
    """A choice by its value, its number in the list or the unique start of it; otherwise what was typed, for
    the template to refuse with the allowed values."""
    typed = typed.strip()
    if typed in choices:
        return typed
    if typed.isdigit() and 1 <= int(typed) <= len(choices):
        return choices[int(typed) - 1]
    starting = [c for c in choices if typed and c.startswith(typed)]
    return starting[0] if len(starting) == 1 else typed


def ask_on_terminal(question: Question) -> str:  # pragma: no cover - needs a terminal; tests drive ask_by_lines
    """questionary's menu, yes/no or validated text; Ctrl-C raises KeyboardInterrupt (exit 130 at the edge)."""
    import questionary
    from prompt_toolkit.output import create_output

    spec, output = question.spec, create_output(stdout=sys.stderr)
    if spec.choices:
        choices = [str(c) for c in spec.choices]
        return str(questionary.select(question.message(), choices=choices, default=question.default,
                                      output=output).unsafe_ask())
    if spec.type == "bool":
        yes = questionary.confirm(question.message(), default=str(spec.default).lower() in ("1", "true", "yes", "on"),
                                  output=output).unsafe_ask()
        return "yes" if yes else "no"
    return str(questionary.text(question.message(), default=question.default, instruction=f"({spec.allowed()})",
                                validate=lambda answer: question.refusal(answer) or True, output=output).unsafe_ask())
