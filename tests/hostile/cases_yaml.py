"""The YAML layer under attack: alias bombs, includes that reach out, endless or huge input, deep nesting,
tags that fail to convert, characters YAML forbids, and constructs the two parsers could read differently."""

from __future__ import annotations

from tests.hostile.cases_basic import VALID
from tests.hostile.harness import Case, Fifo, Link

ERROR = {"*": frozenset({2})}
OK = {"*": frozenset({0})}


def bomb(levels: int = 9, fan: int = 9) -> str:
    """Each level a list of `fan` aliases of the one before: fan ** levels values once expanded."""
    lines = [f"l0: &l0 [{', '.join(['x'] * fan)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fan)}]" for i in range(1, levels)]
    return VALID + "\n".join(lines) + "\n"


def site(include: str) -> str:
    return VALID + f"site: !include {include}\n"


def fan_out(levels: int = 5, width: int = 10) -> dict[str, str]:
    """Every file includes `width` copies of the next level: width ** levels reads without a bound."""
    files = {"cluster.yaml": VALID + "extra: !include l1.yaml\n", f"l{levels}.yaml": "[1]\n"}
    for level in range(1, levels):
        files[f"l{level}.yaml"] = "".join(f"- !include l{level + 1}.yaml\n" for _ in range(width))
    return files


MERGES = """\
apiVersion: clusterforge/v1
kind: Cluster
name: tiny
target: onprem
pools:
  - &gpu {name: gpu, hardware: dgx-h100, count: 2, role: compute, partition: train}
  - &login {name: login, hardware: dgx-h100, count: 1, role: login}
  - {name: gpu3, <<: [*gpu, *login]}
  - {name: login2, <<: *login, role: login}
slurm:
  partitions: [{name: train, pools: [gpu, gpu3], default: true}]
"""

CASES = [
    Case("yaml-alias-bomb", "461 bytes of nested aliases expand to 387 million values", {"cluster.yaml": bomb()},
         exits=ERROR, says={"validate": "YAML values once aliases are expanded"}),
    Case("yaml-alias-cycle", "an alias inside the collection it names never ends expanding",
         {"cluster.yaml": VALID + "loop: &a [1, *a]\n"}, exits=ERROR, says={"validate": "recursive"}),
    Case("yaml-include-absolute", "!include of an absolute path", {"cluster.yaml": site("/etc/passwd")},
         exits=ERROR, says={"validate": "absolute path"}),
    Case("yaml-include-dotdot", "!include climbing out of the tree by a relative path",
         {"cluster.yaml": site("../outside/secret.yaml")}, exits=ERROR, says={"validate": "outside the include root"}),
    Case("yaml-include-symlink-out", "!include of a link that points outside the tree",
         {"cluster.yaml": site("site.yaml"), "site.yaml": Link("{outside}/secret.yaml")},
         exits=ERROR, says={"validate": "outside the include root"}),
    Case("yaml-include-symlink-loop", "!include of a symbolic link loop",
         {"cluster.yaml": site("a.yaml"), "a.yaml": Link("b.yaml"), "b.yaml": Link("a.yaml")},
         exits=ERROR, says={"validate": "symbolic links"}),
    Case("yaml-include-fifo", "!include of a named pipe (reading it blocks)",
         {"cluster.yaml": site("pipe.yaml"), "pipe.yaml": Fifo()}, exits=ERROR,
         says={"validate": "not a regular file"}),
    Case("yaml-include-directory", "!include of a folder",
         {"cluster.yaml": site("dir.yaml"), "dir.yaml/x.yaml": "a: 1\n"}, exits=ERROR,
         says={"validate": "is a directory"}),
    Case("yaml-include-not-yaml", "!include of a file that is no YAML file (a key, a config)",
         {"cluster.yaml": site("id_rsa")}, exits=ERROR, says={"validate": "only .yaml and .yml"}),
    Case("yaml-include-key-as-scalar", "an included private key parses as one plain string",
         {"cluster.yaml": site("key.yaml"),
          "key.yaml": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\n"},
         exits=ERROR, says={"validate": "an included file must hold a mapping or a list"}),
    Case("yaml-include-self", "a file that includes itself", {"cluster.yaml": site("cluster.yaml")},
         exits=ERROR, says={"validate": "includes itself"}),
    Case("yaml-include-fan-out", "five levels of ten includes each", fan_out(), exits=ERROR,
         says={"validate": "included files in one blueprint"}),
    Case("yaml-include-long-name", "an include name of 4,000 characters", {"cluster.yaml": site("a" * 4000 + ".yaml")},
         exits=ERROR, says={"validate": "1 to 255 characters"}),
    Case("yaml-include-control-name", "an include name with a NUL and a line break",
         {"cluster.yaml": site('"a\\0b\\nc.yaml"')}, exits=ERROR, says={"validate": "without control characters"}),
    Case("yaml-input-dev-zero", "the blueprint is /dev/zero: reading never ends", entry="/dev/zero", exits=ERROR,
         says={"validate": "not a regular file"}),
    Case("yaml-input-fifo", "the blueprint is a named pipe", {"cluster.yaml": Fifo()}, exits=ERROR,
         says={"validate": "not a regular file"}),
    Case("yaml-input-too-large", "a blueprint over the input size limit",
         {"cluster.yaml": VALID + "description: " + "x" * 5000 + "\n"}, exits=ERROR,
         env={"CLUSTERFORGE_MAX_INPUT_BYTES": "4096"}, says={"validate": "bytes in one YAML file"}),
    Case("yaml-deep-flow-500", "500 nested flow lists (a RecursionError once)",
         {"cluster.yaml": VALID + "deep: " + "[" * 500 + "]" * 500 + "\n"}, exits=ERROR,
         says={"validate": "levels of nesting"}),
    Case("yaml-deep-flow-50000", "50,000 nested flow lists (a crash inside libyaml once)",
         {"cluster.yaml": VALID + "deep: " + "[" * 50_000 + "]" * 50_000 + "\n"}, exits=ERROR,
         says={"validate": "levels of nesting"}),
    Case("yaml-deep-block", "3,000 nested block lists, `- - - ...` and indentation",
         {"cluster.yaml": VALID + "deep:\n" + "".join(" " * i + "-\n" for i in range(1, 3000)) + " " * 3000 + "- x\n"},
         exits=ERROR, says={"validate": "levels of nesting"}),
    Case("yaml-invalid-date-key", "a key that looks like a date but is none",
         {"cluster.yaml": VALID + "2026-13-45: x\n"}, exits=ERROR, says={"validate": "invalid timestamp value"}),
    Case("yaml-tagged-bool", "!!bool on a word no boolean", {"cluster.yaml": VALID + "x: !!bool maybe\n"},
         exits=ERROR, says={"validate": "invalid bool value"}),
    Case("yaml-tagged-empty-int", "!!int on an empty string", {"cluster.yaml": VALID + "x: !!int ''\n"},
         exits=ERROR, says={"validate": "invalid int value"}),
    Case("yaml-tagged-float", "!!float on a word", {"cluster.yaml": VALID + "x: !!float x\n"},
         exits=ERROR, says={"validate": "invalid float value"}),
    Case("yaml-python-tag", "a Python object tag (must never construct anything)",
         {"cluster.yaml": VALID + "x: !!python/object/apply:os.system ['touch pwned']\n"},
         exits=ERROR, says={"validate": "unsupported tag"}),
    Case("yaml-binary-tag", "!!binary bytes where text is expected", {"cluster.yaml": VALID + "x: !!binary aGk=\n"},
         exits=ERROR, says={"validate": "unsupported tag"}),
    Case("yaml-surrogate-escape", "an escaped surrogate pair (lone surrogates cannot be written out)",
         {"cluster.yaml": VALID.replace("name: tiny", 'name: "\\ud83d\\ude00"')}, exits=ERROR,
         says={"validate": "invalid YAML"}),
    Case("yaml-nul-escape", "an escaped NUL in a name", {"cluster.yaml": VALID.replace("team", "x").replace(
        "name: tiny", 'name: "ti\\0ny"')}, exits=ERROR, says={"validate": "U+0000"}),
    Case("yaml-merge-semantics", "explicit keys beside merges win, and earlier merges win over later ones "
         "(the fast parser once read both the other way)", {"cluster.yaml": MERGES}, exits=OK,
         says={"validate": "6 nodes in 4 pools"}),
    Case("yaml-reserved-indicator", "a value starting with @ (reserved in YAML)",
         {"cluster.yaml": VALID.replace("team", "x").replace("name: tiny", "name: @tiny")}, exits=ERROR,
         says={"validate": "invalid YAML"}),
    Case("yaml-duplicate-anchor", "the same anchor twice", {"cluster.yaml": VALID + "a: &x 1\nb: &x 2\nc: *x\n"},
         exits=ERROR, says={"validate": "duplicate anchor"}),
    Case("yaml-200k-pools", "200,000 pools (once 10 minutes in check: line lookup was quadratic); now refused "
         "by the value bound before anything is built",
         {"cluster.yaml": VALID.split("pools:")[0] + "pools:\n" + "".join(
             f"  - {{name: p{i}, hardware: dgx-h100, count: 1}}\n" for i in range(200_000))},
         exits=ERROR, says={"validate": "CLUSTERFORGE_MAX_YAML_NODES"}),
    Case("yaml-values-near-the-bound", "just under the value bound, in the shape that costs the most memory "
         "(small mappings in one list): parsed, then refused by the pool bound, within the memory ceiling",
         {"cluster.yaml": VALID.split("pools:")[0] + "pools: [" + ",".join(["{a: 1}"] * 160_000) + "]\n"},
         exits=ERROR, says={"validate": "CLUSTERFORGE_MAX_POOLS"}),
]
