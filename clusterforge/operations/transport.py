"""How a command that runs on a login node over ssh tells ssh failing from the command's own result.

ssh exits 255 when it could not connect or log in (ssh(1): "ssh exits with the exit status of the remote command
or with 255 if an error occurred"), and a POSIX shell exits 127 for a command it cannot find. Either way nothing
ran on the nodes: that is bad input or a broken path to the cluster (exit 2, with ssh's or the shell's own words),
never a verdict about the nodes. An exit 255 after some node answered is the job's own (srun, or a connection
dropped after the results) and the answers stand.
"""

from __future__ import annotations

import re

from clusterforge.core.errors import ClusterforgeError, Problem

SSH_FAILED = 255
NOT_FOUND = 127
# A destination as ssh takes it: [user@]host, ssh://[user@]host[:port], an IPv6 address in brackets. Never an
# option (a leading '-' would be read as one, `-oProxyCommand=...` runs a command) and never blank or spaced.
_DESTINATION = re.compile(r"[A-Za-z0-9_.@%:/\[\]][A-Za-z0-9_.@%:/\[\]-]*\Z")


def check_destination(host: str, option: str) -> str:
    if not _DESTINATION.match(host):
        raise ClusterforgeError(Problem(f"{host!r} is not a host name", path=option,
                                        hint="a login node as ssh takes it: HOST, USER@HOST or ssh://USER@HOST:PORT"))
    return host


def _reason(stderr: str) -> str:
    """ssh's or the shell's last words: the last non-empty line of stderr (ssh prints its error last)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def raise_for_transport(status: int, stderr: str, answered: bool, host: str, option: str, remote: str) -> None:
    """Raise when ssh (255) or the login node's shell (127, `remote` not found) failed before any node answered."""
    if answered:
        return
    if status == SSH_FAILED:
        raise ClusterforgeError(Problem(f"ssh to {host} failed (exit 255): {_reason(stderr)}", path=option,
                                        hint=f"check that `ssh -o BatchMode=yes {host} true` works from here"))
    if status == NOT_FOUND:
        raise ClusterforgeError(Problem(f"{remote} is not installed on {host}: {_reason(stderr)}", path=option,
                                        hint="name a login node of the cluster, where SLURM's commands are"))
