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
MAX_FILE_BYTES = 4096


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)


def from_file(path: Path) -> Credentials:
    """The file's credentials; exit 2 when it is readable by others, not the user's, or not two strings."""
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
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        raise ClusterforgeError(Problem("the credentials file is not YAML", str(path))) from None
    if (not isinstance(data, dict) or set(data) != {"username", "password"}
            or not all(isinstance(v, str) and v for v in data.values())):
        raise ClusterforgeError(Problem("the credentials file holds `username:` and `password:`, two strings",
                                        str(path)))
    return Credentials(data["username"], data["password"])


def from_environment(environ: Mapping[str, str] = os.environ) -> Credentials | None:
    user, password = environ.get(USER_VARIABLE, ""), environ.get(PASSWORD_VARIABLE, "")
    if bool(user) != bool(password):
        given = USER_VARIABLE if user else PASSWORD_VARIABLE
        raise ClusterforgeError(Problem(f"{given} is set without its pair", "<environment>",
                                        hint=f"set both {USER_VARIABLE} and {PASSWORD_VARIABLE}"))
    return Credentials(user, password) if user else None


def find(path: Path | None, environ: Mapping[str, str] = os.environ) -> Credentials:
    """The file's when given, else the environment's; exit 2 when there are none."""
    if path is not None:
        return from_file(path)
    found = from_environment(environ)
    if found is None:
        raise ClusterforgeError(Problem("no BMC credentials", "<environment>",
                                        hint=f"set {USER_VARIABLE} and {PASSWORD_VARIABLE}, or give --credentials "
                                             "FILE (YAML username/password, mode 0600)"))
    return found
