"""Day-two inputs under attack: `diff` and `update` reading a blueprint at a git revision (a git bomb, links,
submodules, `..` entries, huge blobs) or a render directory (alias bombs, hostlist bombs, group cycles, links,
pipes and devices where files belong, and small files that multiply out: NodeName lines joined per node, SLURM
files that each name every node, group vars copied into every host).

The revisions are built in `prepare` with git's plumbing, in a repository at the case's base folder (the
commands' working directory), so `REV:tree/cluster.yaml` names the blueprint's folder at that revision.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from tests.hostile.cases_basic import VALID
from tests.hostile.cases_yaml import bomb
from tests.hostile.harness import Case, Fifo, Link

ERROR = {"*": frozenset({2})}
OK = {"*": frozenset({0})}
REGULAR, LINK, SUBMODULE, TREE = "100644 blob", "120000 blob", "160000 commit", "040000 tree"


def _git(base: Path, *args: str, data: bytes | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "-C", str(base), *args], input=data, capture_output=True, check=True, env=env)
    return done.stdout.decode().strip()


def _blob(base: Path, data: bytes) -> str:
    return _git(base, "hash-object", "-w", "--stdin", data=data)


def _tree(base: Path, entries: dict[str, tuple[str, str]]) -> str:
    """A tree object of `name -> (mode and type, object)`; git mktree accepts names such as `..`."""
    lines = "".join(f"{kind} {oid}\t{name}\n" for name, (kind, oid) in entries.items())
    return _git(base, "mktree", data=lines.encode())


def _branch(base: Path, name: str, folder: dict[str, tuple[str, str]]) -> None:
    """Branch `name`: one commit whose `tree/` folder holds `folder`."""
    root = _tree(base, {"tree": (TREE, _tree(base, folder))})
    commit = _git(base, "commit-tree", root, "-m", name)
    _git(base, "update-ref", f"refs/heads/{name}", commit)


def _repository(tree: Path) -> Path:
    base = tree.parent
    if not (base / ".git").exists():
        _git(base, "init", "-q")
    return base


def _git_bomb(tree: Path) -> None:
    """16 ** 6 paths to one 4 KiB blob (64 GiB once written out) in a few kilobytes of objects, next to a valid
    blueprint that includes one file deep inside it."""
    base = _repository(tree)
    oid, kind = _blob(base, b"x" * 4096), REGULAR
    for _ in range(6):
        oid, kind = _tree(base, {f"{i:x}.yaml" if kind == REGULAR else f"{i:x}": (kind, oid) for i in range(16)}), TREE
    site = _blob(base, b"a: 1\n")
    _branch(base, "bomb", {"cluster.yaml": (REGULAR, _blob(base, VALID.encode())), "bomb": (TREE, oid)})
    _branch(base, "deep", {"cluster.yaml": (REGULAR, _blob(base, (VALID + "site: !include d/0/site.yaml\n").encode())),
                           "d": (TREE, _tree(base, {"0": (TREE, _tree(base, {"site.yaml": (REGULAR, site)})),
                                                    "bomb": (TREE, oid)}))})


def _links(tree: Path) -> None:
    """Blueprints and includes that are links or submodules at the revision."""
    base = _repository(tree)
    valid = _blob(base, VALID.encode())
    including = _blob(base, (VALID + "site: !include site.yaml\n").encode())
    outside = str(base / "outside" / "secret.yaml")
    for name, target in (("abs", "/etc/passwd"), ("rel", "../outside/secret.yaml"), ("planted", outside)):
        _branch(base, f"link-{name}", {"cluster.yaml": (LINK, _blob(base, target.encode())),
                                       "x.yaml": (REGULAR, valid)})
        _branch(base, f"inc-{name}", {"cluster.yaml": (REGULAR, including),
                                      "site.yaml": (LINK, _blob(base, target.encode()))})
    head = _git(base, "commit-tree", _tree(base, {"tree": (TREE, _tree(base, {"x.yaml": (REGULAR, valid)}))}),
                "-m", "sub")
    _branch(base, "submodule", {"cluster.yaml": (SUBMODULE, head)})
    _branch(base, "inc-submodule", {"cluster.yaml": (REGULAR, including), "site.yaml": (SUBMODULE, head)})


def _dotdot(tree: Path) -> None:
    """Entries named `..` leading to a `.pth` file and a YAML file, and a blueprint that includes through them."""
    base = _repository(tree)
    pth = _blob(base, b"import os; os.system('touch PWNED')\n")
    evil = _blob(base, b"a: 1\n")
    up = _tree(base, {"..": (TREE, _tree(base, {"x.pth": (REGULAR, pth), "evil.yaml": (REGULAR, evil)})),
                      "x.pth": (REGULAR, pth), "evil.yaml": (REGULAR, evil)})
    text = VALID + "site: !include ../../evil.yaml\n"
    _branch(base, "dotdot", {"cluster.yaml": (REGULAR, _blob(base, text.encode())), "..": (TREE, up)})
    _branch(base, "dotdot-plain", {"cluster.yaml": (REGULAR, _blob(base, VALID.encode())), "..": (TREE, up)})


def _nothing_planted(tree: Path, out: Path) -> None:
    base = tree.parent
    found = [p for p in (*base.rglob("x.pth"), *base.rglob("PWNED")) if ".git" not in p.parts]
    assert not found, f"a file from the revision was written outside a private folder: {found}"
    assert not (Path(tempfile.gettempdir()) / "x.pth").exists(), "x.pth written into the temporary folder"


def _huge(tree: Path) -> None:
    """A 64 MiB blueprint blob and a 12 MiB include (over the total with the blueprint once doubled)."""
    base = _repository(tree)
    big = _blob(base, b"#" * (64 << 20))
    twelve = _blob(base, b"a: [" + b"1," * (6 << 20) + b"1]\n")
    including = (VALID + "one: !include a.yaml\ntwo: !include b.yaml\n").encode()
    _branch(base, "huge", {"cluster.yaml": (REGULAR, big)})
    _branch(base, "sum", {"cluster.yaml": (REGULAR, _blob(base, including)), "a.yaml": (REGULAR, twelve),
                          "b.yaml": (REGULAR, twelve)})


def _fan_out(tree: Path) -> None:
    """Each file includes the next ten times over five levels (10 ** 5 reads), or one file includes 100 others."""
    base = _repository(tree)
    folder: dict[str, tuple[str, str]] = {"l5.yaml": (REGULAR, _blob(base, b"[1]\n"))}
    for level in range(1, 5):
        text = "".join(f"- !include l{level + 1}.yaml\n" for _ in range(10))
        folder[f"l{level}.yaml"] = (REGULAR, _blob(base, text.encode()))
    for i in range(100):
        folder[f"m{i}.yaml"] = (REGULAR, _blob(base, b"[1]\n"))
    many = "".join(f"m{i}: !include m{i}.yaml\n" for i in range(100))
    _branch(base, "fan", {**folder, "cluster.yaml": (REGULAR, _blob(base, (VALID + "x: !include l1.yaml\n").encode()))})
    _branch(base, "many", {**folder, "cluster.yaml": (REGULAR, _blob(base, (VALID + many).encode()))})


def _diff(old: str, new: str = "{tree}/cluster.yaml") -> list[str]:
    return ["diff", old, new]


# A render directory as `clusterforge render -o` writes it, cut down to what diff reads.
RENDER = {
    ".clusterforge-render": "# clusterforge render\n",
    "inventory/hosts.yml": "all:\n  children:\n    gpu:\n      hosts:\n        gpu-0001: {}\n        gpu-0002: {}\n",
    "inventory/group_vars/all.yml": "slurm_cluster_name: tiny\n",
    "slurm/slurm.conf": "ClusterName=tiny\nNodeName=gpu-[0001-0002] CPUs=8\n",
}


def render(folder: str, files: dict[str, str | Link | Fifo] | None = None) -> dict[str, str | Link | Fifo]:
    """The render directory `folder/`, with `files` (by relative path) replaced."""
    merged: dict[str, str | Link | Fifo] = {**RENDER, **(files or {})}
    return {f"{folder}/{name}": entry for name, entry in merged.items()}


def _devices(tree: Path) -> None:
    (tree / "dev" / "slurm" / "slurm.conf").unlink()
    (tree / "dev" / "slurm" / "slurm.conf").symlink_to("/dev/zero")


CYCLE = ("all:\n  children:\n    a:\n      children: {b: {}}\n      hosts: {gpu-0001: {}}\n"
         "    b:\n      children: {a: {}}\n")
# 40 levels, two parents each: 2 ** 40 paths from the bottom group up, in 80 short groups
DIAMOND = "all:\n  children:\n" + "".join(
    f"    g{i}{s}:\n      children: {{g{i + 1}a: {{}}, g{i + 1}b: {{}}}}\n" for i in range(40) for s in "ab") + \
    "    g40a:\n      hosts: {gpu-0001: {}}\n"

# Two NodeName lines naming the same 49,000 nodes with 32 KB of settings each (a 64 KB file): each node's text
# is both lines joined, 3.1 GB when every node gets its own copy.
SETTINGS = " ".join(f"Feature{i}=" + "x" * 20 for i in range(1000))
TWICE = "ClusterName=tiny\n" + f"NodeName=gpu-[00001-49000] {SETTINGS}\n" * 2
# The same 32 KB line, then a line per node: every node's joined text differs, so none can be shared.
EACH = f"NodeName=gpu-[00001-49000] {SETTINGS}\n" + "".join(
    f"NodeName=gpu-{i:05d} Weight={i}\n" for i in range(1, 49001))
# One group of 3,100 hosts and 3,100 vars (a 50 KB hosts.yml): 9.6 million host vars once applied, 700 MB.
SPREAD = ("all:\n  children:\n    g:\n      vars: {" + ", ".join(f"v{i}: 1" for i in range(3100)) + "}\n"
          "      hosts: {" + ", ".join(f"h{i}" for i in range(3100)) + "}\n")

CASES = [
    Case("day2-rev-git-bomb", "a commit whose blueprint folder holds 16 ** 6 paths to one blob (git archive: 64 GiB)",
         {"cluster.yaml": VALID}, prepare=_git_bomb,
         argv=[_diff("bomb:tree/cluster.yaml"), _diff("deep:tree/cluster.yaml"), _diff("bomb:tree/bomb")],
         exits={"diff#0": frozenset({0}), "diff#1": frozenset({2}), "diff#2": frozenset({2})},
         says={"diff#1": "deep:tree/d/0/site.yaml:1: site.a: unknown key 'a'",
               "diff#2": "no file 'tree/bomb' at 'bomb'"},
         seconds=5, rss_mib=150),
    Case("day2-rev-links", "a blueprint or include that is a link (absolute, relative out of the tree, planted) or a "
         "submodule at the revision", {"cluster.yaml": VALID}, prepare=_links,
         argv=[_diff(f"{kind}-{name}:tree/cluster.yaml") for kind in ("link", "inc")
               for name in ("abs", "rel", "planted")]
         + [_diff("submodule:tree/cluster.yaml"), _diff("inc-submodule:tree/cluster.yaml")],
         exits=ERROR, says={**{f"diff#{i}": "a symbolic link at 'link-" for i in range(3)},
                            **{f"diff#{i}": "a symbolic link at 'inc-" for i in range(3, 6)},
                            "diff#6": "a submodule at 'submodule'", "diff#7": "a submodule at 'inc-submodule'"},
         seconds=5, rss_mib=150),
    Case("day2-rev-dotdot", "tree entries named '..' that lead to a .pth file (written out, it would run at the "
         "next Python start)", {"cluster.yaml": VALID}, prepare=_dotdot,
         argv=[_diff("dotdot:tree/cluster.yaml"), _diff("dotdot-plain:tree/cluster.yaml"),
               _diff("dotdot-plain:tree/../x.pth"), _diff("dotdot-plain:tree/../../x.pth")],
         exits={"diff#0": frozenset({2}), "diff#1": frozenset({0}), "diff#2": frozenset({2}),
                "diff#3": frozenset({2})},
         says={"diff#0": "!include '../../evil.yaml'"}, check=_nothing_planted, seconds=5, rss_mib=150),
    Case("day2-rev-huge", "a 64 MiB blueprint blob and two 12 MiB includes at a revision", {"cluster.yaml": VALID},
         prepare=_huge, argv=[_diff("huge:tree/cluster.yaml"), _diff("sum:tree/cluster.yaml")], exits=ERROR,
         says={"diff#0": "bytes in one YAML file is over the limit", "diff#1": "is over the limit"},
         seconds=5, rss_mib=150),
    Case("day2-rev-fan-out", "includes at a revision that fan out (10 ** 5 reads) or name 100 files",
         {"cluster.yaml": VALID}, prepare=_fan_out,
         argv=[_diff("fan:tree/cluster.yaml"), _diff("many:tree/cluster.yaml")], exits=ERROR,
         says={"diff#1": "many:tree/cluster.yaml:73: 65 included files in one blueprint"},
         seconds=5, rss_mib=150),
    Case("day2-rev-update", "update reads OLD at a revision through the same reader (a git bomb)",
         {"cluster.yaml": VALID}, prepare=_git_bomb,
         argv=[["update", "bomb:tree/bomb", "{tree}/cluster.yaml", "-o", "{out}/render", "--dry-run"]],
         exits=ERROR, says={"update#0": "no file 'tree/bomb' at 'bomb'"}, seconds=5, rss_mib=150),
    Case("day2-render-baseline", "two render directories that differ in one node: nothing hostile",
         {**render("old"),
          **render("new", {"slurm/slurm.conf": "ClusterName=tiny\nNodeName=gpu-[0001-0002] CPUs=16\n"})},
         argv=[["diff", "{tree}/old", "{tree}/new"]], exits={"*": frozenset({0, 1})}, says={"diff#0": "CPUs=16"},
         seconds=5, rss_mib=150),
    Case("day2-render-alias-bomb", "an alias bomb in a render directory's group_vars/all.yml",
         {**render("old"), **render("new", {"inventory/group_vars/all.yml": bomb().split("\n", 8)[-1]})},
         argv=[["diff", "{tree}/old", "{tree}/new"], ["diff", "{tree}/new", "{tree}/cluster.yaml"]],
         exits=ERROR, says={"diff#0": "YAML values once aliases are expanded"}, seconds=5, rss_mib=150),
    Case("day2-render-hosts-bomb", "an alias bomb in a render directory's hosts.yml",
         {**render("old"), **render("new", {"inventory/hosts.yml": "all:\n  vars:\n" + "".join(
             "    " + line + "\n" for line in bomb().split("\n", 8)[-1].splitlines())})},
         argv=[["diff", "{tree}/old", "{tree}/new"]], exits=ERROR,
         says={"diff#0": "YAML values once aliases are expanded"}, seconds=5, rss_mib=150),
    Case("day2-render-hostlist-bomb", "NodeName=gpu-[000000000-999999999] in a render directory's slurm.conf",
         {**render("old"), **render("new", {"slurm/slurm.conf": "NodeName=gpu-[000000000-999999999] CPUs=8\n"}),
          **render("many", {"slurm/slurm.conf": "".join(f"NodeName=n{i}-[00000-99999]\n" for i in range(30))}),
          **render("digits", {"slurm/slurm.conf": "NodeName=n[0-" + "9" * 5000 + "]\n"})},
         argv=[["diff", "{tree}/old", "{tree}/new"], ["diff", "{tree}/old", "{tree}/many"],
               ["diff", "{tree}/old", "{tree}/digits"]],
         exits=ERROR, says={"diff#0": "new/slurm/slurm.conf:1: NodeName: the NodeName lines name 1,000,000,000 nodes",
                            "diff#1": "many/slurm/slurm.conf:2: NodeName: the NodeName lines name 200,000 nodes",
                            "diff#2": "slurm/slurm.conf:1"}, seconds=5, rss_mib=150),
    Case("day2-render-node-lines", "two NodeName lines naming the same 49,000 nodes with 32 KB of settings each, "
         "or that line and a line per node (each node's joined text its own)",
         {**render("old"), **render("twice", {"slurm/slurm.conf": TWICE}),
          **render("each", {"slurm/slurm.conf": EACH})},
         argv=[["diff", "{tree}/old", "{tree}/twice"], ["diff", "{tree}/twice", "{tree}/twice"],
               ["diff", "{tree}/old", "{tree}/each"]],
         exits={"diff#0": frozenset({0, 1}), "diff#1": frozenset({0}), "diff#2": frozenset({2})},
         says={"diff#0": "NodeName=gpu-[00001-49000]",
               "diff#2": "each/slurm/slurm.conf:527: NodeName: the NodeName lines that name the same nodes join into"},
         seconds=5, rss_mib=150),
    Case("day2-render-conf-files", "250 SLURM files in a render directory, each naming 100,000 nodes",
         {**render("old"), **render("many", {f"slurm/x{i:03d}.conf": "NodeName=n[00000-99999] CPUs=8\n"
                                              for i in range(250)})},
         argv=[["diff", "{tree}/old", "{tree}/many"]], exits=ERROR,
         says={"diff#0": "many/slurm/x003.conf:1: NodeName: the NodeName lines of this render's SLURM files name "
                         "400,002 nodes"}, seconds=5, rss_mib=150),
    Case("day2-render-group-vars", "one inventory group of 3,100 hosts and 3,100 vars (9.6 million host vars)",
         {**render("old"), **render("spread", {"inventory/hosts.yml": SPREAD})},
         argv=[["diff", "{tree}/old", "{tree}/spread"], ["diff", "{tree}/spread", "{tree}/old"]], exits=ERROR,
         says={"diff#0": "spread/inventory/hosts.yml:3: all.children.g: applying the groups' vars to their hosts "
                         "makes 9,610,000 host vars"}, seconds=5, rss_mib=150),
    Case("day2-render-groups", "inventory groups that contain each other, or 2 ** 40 paths up from one group",
         {**render("old"), **render("cycle", {"inventory/hosts.yml": CYCLE}),
          **render("diamond", {"inventory/hosts.yml": DIAMOND})},
         argv=[["diff", "{tree}/old", "{tree}/cycle"], ["diff", "{tree}/old", "{tree}/diamond"]],
         exits={"diff#0": frozenset({2}), "diff#1": frozenset({0, 1})},
         says={"diff#0": "contains itself"}, seconds=5, rss_mib=150),
    Case("day2-render-not-files", "links out of the render directory, a FIFO and /dev/zero where files belong",
         {**render("old"), **render("link", {"inventory/group_vars/all.yml": Link("{outside}/secret.yaml")}),
          **render("fifo", {"slurm/slurm.conf": Fifo()}), **render("dev"),
          **render("hosts", {"inventory/hosts.yml": Link("{outside}/secret.yaml")}),
          **{"dir/.clusterforge-render": "# x\n", "dir/inventory": Link("{outside}")}},
         prepare=_devices,
         argv=[["diff", "{tree}/old", "{tree}/link"], ["diff", "{tree}/old", "{tree}/fifo"],
               ["diff", "{tree}/old", "{tree}/dev"], ["diff", "{tree}/old", "{tree}/hosts"],
               ["diff", "{tree}/old", "{tree}/dir"]],
         exits=ERROR, says={"diff#0": "not a regular file", "diff#1": "not a regular file",
                            "diff#2": "not a regular file", "diff#3": "not a regular file"},
         seconds=5, rss_mib=150),
    Case("day2-render-many-files", "a render directory of 5,000 files", {**render("old"), **{
        f"new/slurm/x{i}.conf": "" for i in range(5000)}, **render("new")},
         argv=[["diff", "{tree}/old", "{tree}/new"]], exits=ERROR, says={"diff#0": "files in a render directory"},
         seconds=5, rss_mib=150),
]
