"""Where a rule is documented, as an absolute URL a SARIF `helpUri` can carry.

docs/policies.md gives each rule a section anchored by its id in lower case (`#pwr-001`, written by
policies/reference.py). GitHub code scanning shows `helpUri` as a link, so it must be absolute: the base is the
GitHub repository the package's metadata names (pyproject.toml [project.urls]: Repository, Source or Homepage),
at its default branch (`blob/HEAD`). Without one no link is made rather than a wrong one.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import metadata

POLICIES_DOC = "docs/policies.md"
_KEYS = ("repository", "source", "source code", "homepage")
_GITHUB = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


@lru_cache(maxsize=1)
def _installed_urls() -> tuple[tuple[str, str], ...]:
    try:
        entries = metadata.metadata("clusterforge").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return ()
    return tuple((label, url) for label, _, url in (entry.partition(", ") for entry in entries) if url)


def project_urls() -> dict[str, str]:
    """The package's Project-URL entries, label -> URL (none when it is not installed)."""
    return dict(_installed_urls())


def docs_base(urls: dict[str, str]) -> str | None:
    """`https://github.com/OWNER/REPO/blob/HEAD/docs/policies.md` from the first GitHub repository URL."""
    by_key = {label.strip().lower(): url.strip() for label, url in urls.items()}
    for key in _KEYS:
        found = _GITHUB.fullmatch(by_key.get(key, "").rstrip("/").removesuffix(".git"))
        if found:
            return f"{found.group()}/blob/HEAD/{POLICIES_DOC}"
    return None


def help_uri(rule_id: str) -> str | None:
    """The absolute URL of `rule_id`'s section in docs/policies.md, or None with no repository to point at."""
    base = docs_base(project_urls())
    return f"{base}#{rule_id.lower()}" if base else None
