"""How clusterforge logs in to the BMCs: from the environment or a file only its owner can read, never a document.

A BMC's password powers servers off and boots them from the network: it is the keys to the hall. So it is never
in the blueprint or the BMC document (both live in repositories and pull requests), never on the command line
(`ps` shows it), and never printed: `Credentials.__repr__` hides the password, and errors name the source, not the
value. The file is YAML, `username:` and `password:`, mode 0600 or stricter and owned by the user who runs the
command, as ssh holds a private key; anything looser is refused before it is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clusterforge.core.errors import ClusterforgeError, Problem

USER_VARIABLE = "CLUSTERFORGE_BMC_USERNAME"
PASSWORD_VARIABLE = "CLUSTERFORGE_BMC_PASSWORD"
MAX_FILE_BYTES = 4 * 1024 * 1024  # a distinct login for each of 12,500 servers is ~1.3 MB
MAX_NODES = 200_000  # as many as the BMC document may name


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Logins:
    """The login each node's BMC is sent: its own hostlist's when the file gives one, else the fleet's."""

    fleet: Credentials | None
    by_node: dict[str, Credentials] = field(default_factory=dict, repr=False)

    def for_node(self, node: str) -> Credentials | None:
        return self.by_node.get(node, self.fleet)

    def without(self, nodes: list[str]) -> list[str]:
        """The nodes of `nodes` that have no login."""
        return [n for n in nodes if self.for_node(n) is None]


def _pair(data: object) -> Credentials | None:
    if (isinstance(data, dict) and set(data) == {"username", "password"}
            and all(isinstance(v, str) and v and "\n" not in v for v in data.values())):
        return Credentials(data["username"], data["password"])
    return None


def _no_aliases() -> type:
    """PyYAML's safe loader refusing anchors and aliases: a small private file has no use for them, and they are how
    a few bytes expand to gigabytes."""
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases are not taken here")
            return super().compose_node(parent, index)

    return Loader


def from_file(path: Path) -> Logins:
    """The file's logins; exit 2 when it is readable by others, not the user's, or not what the module says."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ClusterforgeError(Problem(f"cannot read the credentials file: {exc.strerror}", str(path))) from None
    if not stat.S_ISREG(info.st_mode):
        raise ClusterforgeError(Problem("the credentials file is not a regular file", str(path)))
    if info.st_mode & 0o077 or info.st_uid != os.geteuid():
        raise ClusterforgeError(Problem(
            f"the credentials file is mode {stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid}: it must be "
            f"yours and readable by you alone", str(path), hint=f"chmod 600 {path}"))
    if info.st_size > MAX_FILE_BYTES:
        raise ClusterforgeError(Problem(f"the credentials file is over {MAX_FILE_BYTES} bytes", str(path)))
    import yaml

    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_no_aliases())  # safe: SafeLoader, no aliases
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        raise ClusterforgeError(Problem("the credentials file is not YAML (anchors and aliases are refused)",
                                        str(path))) from None
    shape = Problem("the credentials file holds `username:` and `password:`, two strings, and optionally "
                    "`by_nodes:`, a login of the same two keys for each hostlist", str(path))
    if not isinstance(data, dict) or not set(data) <= {"username", "password", "by_nodes"}:
        raise ClusterforgeError(shape)
    fleet = _pair({k: v for k, v in data.items() if k != "by_nodes"}) if set(data) - {"by_nodes"} else None
    if set(data) - {"by_nodes"} and fleet is None:
        raise ClusterforgeError(shape)
    groups = data.get("by_nodes") or {}
    if not isinstance(groups, dict):
        raise ClusterforgeError(shape)
    by_node: dict[str, Credentials] = {}
    for expression, pair in groups.items():
        login = _pair(pair)
        if login is None or not isinstance(expression, str):
            raise ClusterforgeError(shape)
        by_node.update(dict.fromkeys(_nodes(expression, path, MAX_NODES - len(by_node)), login))
    if fleet is None and not by_node:
        raise ClusterforgeError(shape)
    return Logins(fleet, by_node)


def _nodes(expression: str, path: Path, room: int) -> list[str]:
    from clusterforge.core.hostlist import expand

    try:
        return expand(expression, limit=max(room, 0))
    except ClusterforgeError as error:  # the hostlist's own words: a node name, never a password
        raise ClusterforgeError(Problem(f"by_nodes: {error.problems[0].message}", str(path))) from None


def from_environment(environ: Mapping[str, str] = os.environ) -> Credentials | None:
    """The fleet's login from the environment, or None when neither variable is set."""
    user, password = environ.get(USER_VARIABLE, ""), environ.get(PASSWORD_VARIABLE, "")
    if bool(user) != bool(password):
        given = USER_VARIABLE if user else PASSWORD_VARIABLE
        raise ClusterforgeError(Problem(f"{given} is set without its pair", "<environment>",
                                        hint=f"set both {USER_VARIABLE} and {PASSWORD_VARIABLE}"))
    return Credentials(user, password) if user else None


def find(path: Path | None, environ: Mapping[str, str] = os.environ) -> Logins:
    """The file's when given, else the environment's; exit 2 when there are none."""
    if path is not None:
        return from_file(path)
    found = from_environment(environ)
    if found is None:
        raise ClusterforgeError(Problem("no BMC credentials", "<environment>",
                                        hint=f"set {USER_VARIABLE} and {PASSWORD_VARIABLE}, or give --credentials "
                                             "FILE (YAML username/password, mode 0600)"))
    return Logins(found)
