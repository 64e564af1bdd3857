"""Output adapters for a policy Verdict: text, json, sarif, junit, github. One result model, many views."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from clusterforge.formats.escape import json_safe as json_safe
from clusterforge.formats.escape import plural as plural
from clusterforge.formats.escape import xml_safe as xml_safe

if TYPE_CHECKING:
    from clusterforge.policies import Verdict

FORMATS = ("text", "json", "sarif", "junit", "github")


def render(verdict: Verdict, fmt: str) -> str:
    """The verdict in one of FORMATS (text is rendered by the caller's console, see formats.text)."""
    from clusterforge.formats import github, json_format, junit, sarif

    renderers: dict[str, Callable[[Verdict], str]] = {
        "json": json_format.render, "sarif": sarif.render, "junit": junit.render, "github": github.render,
    }
    return renderers[fmt](verdict)
