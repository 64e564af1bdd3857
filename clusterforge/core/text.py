"""Strings of the blueprint that reach configuration files, each constrained to the form its consumer accepts.

A blueprint comes from pull requests, and these values land in slurm.conf, gres.conf, Ansible group_vars and
AWS API calls. Each type here is a pattern of safe characters that still fits every value the consumer takes,
with words that say the form (they are the JSON schema's description and the error message's explanation).
No pattern admits a newline, a quote or a space unless the consumer's own syntax needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, StringConstraints
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from clusterforge.core.validation import expected

NAME = r"^[a-z][a-z0-9-]{0,39}$"
Name = Annotated[str, StringConstraints(pattern=NAME), Field(description=expected(
    NAME, "a lowercase name: a letter, then letters, digits or '-', at most 40 characters, e.g. vision-h100"))]
"""A lowercase DNS-style name: it becomes hostnames, SLURM names and cloud resource names."""

OBJECT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
ObjectName = Annotated[str, StringConstraints(pattern=OBJECT_NAME), Field(description=expected(
    OBJECT_NAME, "a name of letters, digits, '.', '_' or '-' (starting with a letter or digit, at most 63), "
    "e.g. a01-b"))]
"""Facility object names (rows, racks, feeds, panels) as people write them on labels."""

CATALOG_KEY = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,62}$"
CatalogKey = Annotated[str, StringConstraints(pattern=CATALOG_KEY), Field(description=expected(
    CATALOG_KEY, "a catalog key of letters, digits, '.', '_', '+' or '-' (at most 63), e.g. dgx-h100 or "
    "p5.48xlarge"))]
"""A hardware key in the catalog: it reaches the inventory and, for AWS, the instance type."""

# SLURM slurm.conf(5) MaxTime / sbatch(1) --time: "minutes", "minutes:seconds", "hours:minutes:seconds",
# "days-hours", "days-hours:minutes", "days-hours:minutes:seconds", or UNLIMITED / INFINITE.
SLURM_TIME = (r"^(UNLIMITED|INFINITE|unlimited|infinite|[0-9]{1,8}(:[0-9]{1,2}){0,2}"
              r"|[0-9]{1,5}-[0-9]{1,2}(:[0-9]{1,2}){0,2})$")
SlurmTime = Annotated[str, StringConstraints(pattern=SLURM_TIME), Field(description=expected(
    SLURM_TIME, "a SLURM time limit: UNLIMITED, INFINITE, minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, "
    "e.g. 2-00:00:00"))]

# LNet NIDs (Lustre manual, "Specifying NIDs and Failover"; wiki "Mounting a Lustre File System on Client
# Nodes"): address@network such as 10.0.0.10@o2ib or 192.168.1.2@tcp0; the NIDs of one server are separated
# by ',' and failover servers by ':' (`mount -t lustre MGSNID[:MGSNID]:/fsname`).
_NID = r"[A-Za-z0-9][A-Za-z0-9.-]{0,62}@[a-z][a-z0-9]{1,11}"
LNET_NIDS = rf"^{_NID}(,{_NID})*(:{_NID}(,{_NID})*)*$"
LnetNids = Annotated[str, StringConstraints(pattern=LNET_NIDS, max_length=1024), Field(description=expected(
    LNET_NIDS, "an LNet NID address@network such as 10.0.0.10@o2ib or 192.168.1.2@tcp0 (one server's NIDs "
    "joined by ',', failover servers by ':')"))]

# mount(8) -o: comma-separated options, each `name` or `name=value`, here of characters no consumer quotes.
_OPTION = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(=[A-Za-z0-9_.:/@+-]{1,255})?"
MOUNT_OPTIONS = rf"^{_OPTION}(,{_OPTION})*$"
ROOT_OPTIONS = frozenset({"suid", "dev"})
"""Mount options that let a file system a pull request names hand out root: set-uid programs and device files."""


def _no_root_options(value: str) -> str:
    """Refuse `suid` and `dev`, and add `nosuid,nodev` where missing: `defaults` alone implies both, and a file
    system every node mounts must not carry set-uid programs or device files."""
    names = [item.split("=", 1)[0].lower() for item in value.split(",")]
    found = sorted(set(names) & ROOT_OPTIONS)
    if found:
        raise ValueError(f"{' and '.join(found)} would let the file system's set-uid programs or device files act "
                         "as root on every node: leave them out")
    return ",".join([value, *(f"no{name}" for name in sorted(ROOT_OPTIONS, reverse=True) if f"no{name}" not in names)])


MountOptions = Annotated[str, StringConstraints(pattern=MOUNT_OPTIONS, max_length=1024),
                         AfterValidator(_no_root_options), Field(description=expected(
    MOUNT_OPTIONS, "mount options: name or name=value joined by ',', of letters, digits and ._-:/@+, "
    "without suid or dev; nosuid,nodev are added (e.g. defaults,_netdev,flock)"))]

# An absolute mount point: no '.' or '..' component (each starts with a letter, digit, '_' or '-'), not '/'.
MOUNT_PATH = r"^(/[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}){1,16}$"
MountPath = Annotated[str, StringConstraints(pattern=MOUNT_PATH), Field(description=expected(
    MOUNT_PATH, "an absolute path of letters, digits, '.', '_' and '-' (no '..' component, not '/'), "
    "e.g. /lustre"))]

# Release numbers as packages and installers spell them: 570.133.20, 12.8, 2.26.2-1+cuda12.8, 24.11.1.
# Letters and '*' are allowed so that SW-002 can say why `latest` or `2.26.*` is not a pin.
VERSION = r"^[0-9A-Za-z][0-9A-Za-z.+~_*-]{0,39}$"
VersionPin = Annotated[str, StringConstraints(pattern=VERSION), Field(description=expected(
    VERSION, "a version of letters, digits and .+~_-* (at most 40 characters), e.g. 570.133.20 or "
    "2.26.2-1+cuda12.8"))]

# gres.conf(5) / slurm.conf(5) Gres: name[:type][:count], several joined by ','.
_GRES = r"[a-z][a-z0-9_]{0,15}(:[A-Za-z0-9_.-]{1,32}){0,2}"
GRES = rf"^{_GRES}(,{_GRES})*$"
Gres = Annotated[str, StringConstraints(pattern=GRES, max_length=256), Field(description=expected(
    GRES, "SLURM GRES: name[:type][:count] joined by ',', e.g. gpu:h100:8"))]

FSNAME = r"^[a-zA-Z0-9_]{1,8}$"
Fsname = Annotated[str, StringConstraints(pattern=FSNAME), Field(description=expected(
    FSNAME, "a Lustre file system name: 1 to 8 letters, digits or '_', e.g. scratch"))]

# A character of one line of text: no control characters (Cc), line or paragraph separators (Zl, Zp), nor format
# characters (Cf: bidi embeddings, overrides and isolates, zero-width spaces and joiners, the BOM, tags), which
# make a reviewer read in a CI annotation other text than the one that is there. Every free-text pattern (here,
# the catalogs', the waivers') is built from it, so they cannot drift apart. Cf as of Unicode 15, written as
# ranges both regex engines read (pydantic's and `re`); tests/test_line_char.py checks it against `unicodedata`.
_FORMAT_CHARS = (r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
                 r"\u2060-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
                 r"\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f")
LINE_CHAR = rf"[^\x00-\x1f\x7f-\x9f\u2028\u2029{_FORMAT_CHARS}]"
_LINE_CHARS = re.compile(f"{LINE_CHAR}*")


@dataclass(frozen=True)
class OneLine:
    """One line of `least` to `most` characters of LINE_CHAR, as a constraint of a `str` field:
    `Annotated[str, OneLine(1, 200), Field(description=expected(OneLine(1, 200).pattern, "..."))]`.

    Its pattern, `^LINE_CHAR{least,most}$`, is what the JSON schema shows and what an error names, exactly as
    `StringConstraints(pattern=...)` would; the check is the same language in Python's `re` (a length and a
    full match of the class), because pydantic's engine compiles the counted Unicode class into an automaton of
    `most` copies: 10 to 40 ms for each model that holds such a field, a fifth of a small `check`."""

    least: int
    most: int

    @property
    def pattern(self) -> str:
        return rf"^{LINE_CHAR}{{{self.least},{self.most}}}$"

    def check(self, value: str) -> str:
        if not self.least <= len(value) <= self.most or _LINE_CHARS.fullmatch(value) is None:
            raise PydanticCustomError("string_pattern_mismatch", "String should match pattern '{pattern}'",
                                      {"pattern": self.pattern})
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        found: dict[str, Any] = handler(schema)
        found["pattern"] = self.pattern
        return found


# One line of free text; it is never evaluated as a template.
FREE_TEXT_LINE = OneLine(1, 200)
FREE_TEXT = FREE_TEXT_LINE.pattern
FreeText = Annotated[str, FREE_TEXT_LINE, Field(description=expected(
    FREE_TEXT, "one line of text without control characters, 1 to 200 characters"))]

# SLURM QOS and account names (sacctmgr stores them lowercase): a letter, then letters, digits, '_' or '-'.
SLURM_NAME = r"^[a-z][a-z0-9_-]{0,39}$"
SlurmName = Annotated[str, StringConstraints(pattern=SLURM_NAME), Field(description=expected(
    SLURM_NAME, "a SLURM QOS or account name: a lowercase letter, then lowercase letters, digits, '_' or '-', "
    "at most 40 characters, e.g. high"))]

# A POSIX login name as useradd(8) takes it by default (NAME_REGEX), at most 32 characters.
UNIX_USER = r"^[a-z_][a-z0-9_-]{0,31}$"
UnixUser = Annotated[str, StringConstraints(pattern=UNIX_USER), Field(description=expected(
    UNIX_USER, "a user name: a lowercase letter or '_', then lowercase letters, digits, '_' or '-', at most 32, "
    "e.g. alice"))]

# sacctmgr(1) Description/Organization: one word or a few, no '|' (sacctmgr's parsable separator), quote or comma.
SACCT_TEXT = r"^[A-Za-z0-9]([A-Za-z0-9 ._:/()-]{0,98}[A-Za-z0-9._)])?$"
SacctText = Annotated[str, StringConstraints(pattern=SACCT_TEXT), Field(description=expected(
    SACCT_TEXT, "a short description: letters, digits, spaces and ._:/()- (at most 100 characters), "
    "e.g. Physics department"))]

# sacctmgr(1) TRES limits (GrpTRES, MaxTRESPerUser, ...): type[/name[:kind]]=count, several joined by ','.
_TRES = r"[a-z]{1,16}(/[a-z0-9_]{1,32}(:[A-Za-z0-9_.-]{1,32})?)?=(-1|[0-9]{1,15}[KMGTP]?)"
TRES = rf"^{_TRES}(,{_TRES})*$"
Tres = Annotated[str, StringConstraints(pattern=TRES, max_length=512), Field(description=expected(
    TRES, "SLURM TRES limits: type[/name]=count joined by ',', e.g. gres/gpu=64,cpu=1024"))]

# A slurm.conf or cgroup.conf parameter name (the parameter lists per release are catalog data).
SLURM_KEY = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"
SlurmKey = Annotated[str, StringConstraints(pattern=SLURM_KEY), Field(description=expected(
    SLURM_KEY, "a SLURM parameter name: a letter, then letters, digits or '_', e.g. SchedulerParameters"))]

# A value written after `Key=` in slurm.conf or cgroup.conf: one word. SLURM splits a line at whitespace, reads
# '#' as a comment and '\' as a line join, so none of them (nor quotes or control characters) is admitted; '=' is,
# as options such as `SchedulerParameters=bf_window=4320` and `AuthInfo=cred_expire=30` need it.
SLURM_VALUE = r"^[A-Za-z0-9_.,:/@%+=*~\[\]()-]{1,1000}$"
SlurmValue = Annotated[str, StringConstraints(pattern=SLURM_VALUE), Field(description=expected(
    SLURM_VALUE, "one word of letters, digits and ._,:/@%+=*~[]()- (no spaces, '#', quotes or backslashes), "
    "e.g. bf_continue,bf_window=4320"))]

# An NFS export as mount(8) names it: host:/path (a name, an IPv4 address or a bracketed IPv6 address).
_HOST = r"([A-Za-z0-9][A-Za-z0-9.-]{0,252}|\[[0-9A-Fa-f:.]{2,45}\])"
NFS_SOURCE = rf"^{_HOST}:(/|(/[A-Za-z0-9_-][A-Za-z0-9._-]{{0,63}}){{1,16}})$"
NfsSource = Annotated[str, StringConstraints(pattern=NFS_SOURCE), Field(description=expected(
    NFS_SOURCE, "an NFS export host:/path (no '..' component), e.g. nfs-01:/export/shared"))]
