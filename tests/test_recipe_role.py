"""docs/contributing.md's role recipe, performed: the `banner` role's files, as the doc shows them, added to a copy
of the checkout with a line in its site.yml. Ansible accepts that site.yml, runs the role on this machine in check
mode (validating its variable against the spec: a missing one is refused), and day two reads the role's binding
from that checkout.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from clusterforge.files.checkout import ansible_environment
from clusterforge.render.change_effects import Action
from clusterforge.render.declarations import read_bindings
from tests.test_contributing import DOC, ROOT

BIN = Path(sys.executable).parent


def role_files() -> dict[str, str]:
    """The recipe's files, by path: each yaml block of the section whose first line names its path."""
    section = DOC.read_text(encoding="utf-8").split("## Add a role\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n# (roles/\S+)\n(.*?)```", section, re.S)
    assert {path for path, _ in blocks} >= {"roles/banner/tasks/main.yml", "roles/banner/meta/argument_specs.yml",
                                             "roles/banner/meta/clusterforge.yml"}, blocks
    return dict(blocks)


def checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(ROOT / "roles", root / "roles")
    shutil.copytree(ROOT / "plugins", root / "plugins")  # the collection's own modules and filter
    shutil.copy(ROOT / "ansible.cfg", root / "ansible.cfg")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    play = yaml.safe_load((ROOT / "site.yml").read_text(encoding="utf-8"))
    play[0]["roles"].append("banner")
    (root / "site.yml").write_text(yaml.safe_dump(play, sort_keys=False), encoding="utf-8")
    return root


def ansible(root: Path, tmp_path: Path, playbook: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "ansible-home"
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  hosts:\n    node-0001: {}\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANSIBLE_HOME": str(home),
           "ANSIBLE_LOCAL_TEMP": str(home / "tmp"), "ANSIBLE_REMOTE_TEMP": str(home / "remote"),
           "ANSIBLE_CONFIG": str(root / "ansible.cfg"), "ANSIBLE_ROLES_PATH": str(root / "roles"),
           "ANSIBLE_NOCOLOR": "1", **ansible_environment(root)}
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook), *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env, check=False)


def play(root: Path, tmp_path: Path, extra: dict[str, object]) -> subprocess.CompletedProcess[str]:
    """The role alone on this machine, in check mode with the file it would write shown."""
    playbook = root / "banner.yml"
    playbook.write_text("- hosts: all\n  gather_facts: false\n  roles: [banner]\n")
    local = {"ansible_become": False, "ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    return ansible(root, tmp_path, playbook, "--check", "--diff", "-e", json.dumps({**local, **extra}))


def test_ansible_runs_the_new_role_and_validates_its_variable(tmp_path: Path) -> None:
    root = checkout(tmp_path, role_files())
    syntax = ansible(root, tmp_path, root / "site.yml", "--syntax-check")
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    ran = play(root, tmp_path, {"banner_text": "cluster vision-h100"})
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-1500:]
    assert "TASK [banner : Validating arguments against arg spec 'main'" in ran.stdout
    assert "TASK [banner : The login banner says which cluster this is]" in ran.stdout
    assert "+cluster vision-h100" in ran.stdout  # the file the role would write, shown by --diff
    missing = play(root, tmp_path, {})
    assert missing.returncode != 0
    assert "missing required arguments: banner_text" in missing.stdout


def test_day_two_reads_the_new_roles_binding(tmp_path: Path) -> None:
    files = role_files()
    bound = read_bindings(checkout(tmp_path, files)).settings["banner_text"]
    assert bound.where == "roles/banner/meta/clusterforge.yml"
    assert bound.group is not None and [e.action for e in bound.group] == [Action.NONE]
    assert "new logins only" in bound.group[0].why
    unbound = {path: text for path, text in files.items() if not path.endswith("clusterforge.yml")}
    assert "banner_text" not in read_bindings(checkout(tmp_path / "no-binding", unbound)).settings
