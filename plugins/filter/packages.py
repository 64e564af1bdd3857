"""Filters for the roles' package steps.

`missing_packages` lets a role skip the apt module (seconds per call: it opens the whole package cache) when
`dpkg-query` (milliseconds) already shows every package at its pinned version.
"""

from __future__ import annotations

from fnmatch import fnmatchcase


def installed_versions(dpkg_lines: list[str]) -> dict[str, str]:
    """{package: version} of installed packages from lines `name version status` (dpkg-query's
    `${Package} ${Version} ${db:Status-Status}`)."""
    out: dict[str, str] = {}
    for line in dpkg_lines:
        parts = line.split()
        if len(parts) == 3 and parts[2] == "installed":
            out[parts[0]] = parts[1]
    return out


def missing_packages(specs: list[str], dpkg_lines: list[str]) -> list[str]:
    """The apt specs (`name` or `name=version-glob`) that the installed packages do not satisfy."""
    installed = installed_versions(dpkg_lines)
    missing = []
    for spec in specs:
        name, _, pattern = spec.partition("=")
        version = installed.get(name)
        if version is None or (pattern and not fnmatchcase(version, pattern)):
            missing.append(spec)
    return missing


class FilterModule:
    def filters(self) -> dict[str, object]:
        return {"missing_packages": missing_packages}
