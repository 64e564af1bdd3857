"""Output adapters for a policy Verdict: text, json, sarif, junit, github, markdown. One result model, many views.

Text, GitHub and Markdown show findings grouped by rule and cause (formats.grouping); JSON, SARIF and JUnit
keep one result per target."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clusterforge.formats.escape import json_safe as json_safe
from clusterforge.formats.escape import plural as plural
from clusterforge.formats.escape import xml_safe as xml_safe

if TYPE_CHECKING:
    from clusterforge.policies import Verdict

FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")


def render(verdict: Verdict, fmt: str, summary: bool = False) -> str:
    """The verdict in one of FORMATS (text is rendered by the caller's console, see formats.text). `summary`:
    the full table went to the job summary (formats.step_summary), which `github` output then points to."""
    from clusterforge.formats import github, json_format, junit, markdown, sarif

    renderers: dict[str, Callable[[Verdict], str]] = {
        "json": json_format.render, "sarif": sarif.render, "junit": junit.render,
        "github": lambda v: github.render(v, summary), "markdown": markdown.render,
    }
    return _no_old_commands(renderers[fmt](verdict), fmt)


# A CI runner reads `##[` anywhere in a log line as a command, and a report is often printed to the log. In JSON
# `##` only occurs inside strings, where the bracket may be written \u005b; in XML, as the reference &#91;.
_BRACKET = {"json": "##\\u005b", "sarif": "##\\u005b", "junit": "##&#91;"}


def _no_old_commands(text: str, fmt: str) -> str:
    """`text` with `##[` written so that a reader gets it back and a CI runner reads no command."""
    return text.replace("##[", _BRACKET[fmt]) if fmt in _BRACKET else text
