"""The roles' style rules (DESIGN.md), checked on the files: prefixes, documented defaults, tables of contents."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.render.slurm_conf import HEALTH_CHECK_PROGRAM
from tests.conftest import ROOT

ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks" / "main.yml").is_file())
TOC_KEYS = {"ansible.builtin.import_tasks", "ansible.builtin.include_tasks", "ansible.builtin.meta"}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text()) if path.is_file() else None


def tasks_of(role: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((ROOT / "roles" / role).glob("*/*.yml")):
        if path.parent.name in ("tasks", "handlers"):
            for task in load(path) or []:
                out.append((f"{path.parent.name}/{path.name}", task))
                out += [(f"{path.parent.name}/{path.name}", t) for t in task.get("block", [])]
    return out


def test_every_role_of_the_issue_exists() -> None:
    assert set(ROLES) == {"common", "munge", "slurm", "nvidia_driver", "imex", "rocm", "nccl", "efa", "infiniband",
                          "lustre_client", "health", "containers", "telemetry", "monitoring", "remediation",
                          "provisioning"}


@pytest.mark.parametrize("role", ROLES)
def test_defaults_are_prefixed_and_documented(role: str) -> None:
    defaults = load(ROOT / "roles" / role / "defaults" / "main.yml") or {}
    readme = (ROOT / "roles" / role / "README.md").read_text()
    assert defaults, f"{role} has no defaults"
    for name in defaults:
        assert name.startswith(f"{role}_"), f"{role}: default {name} lacks the role prefix"
        assert f"`{name}`" in readme, f"{role}: default {name} is not in the README"


@pytest.mark.parametrize("role", ROLES)
def test_role_variables_are_prefixed(role: str) -> None:
    names = set((load(ROOT / "roles" / role / "vars" / "main.yml") or {}).keys())
    for _, task in tasks_of(role):
        if "register" in task:
            names.add(task["register"])
        facts = task.get("ansible.builtin.set_fact") or {}
        names |= {k for k in facts if k != "cacheable"}
    bad = sorted(n for n in names if not n.startswith(f"{role}_"))
    assert not bad, f"{role}: variables without the role prefix: {bad}"


@pytest.mark.parametrize("role", ROLES)
def test_main_is_a_table_of_contents(role: str) -> None:
    for entry in load(ROOT / "roles" / role / "tasks" / "main.yml"):
        modules = set(entry) & (TOC_KEYS | {k for k in entry if "." in k})
        assert modules <= TOC_KEYS, f"{role}: tasks/main.yml runs {modules}; move it into a task file"


@pytest.mark.parametrize("role", ROLES)
def test_tasks_are_named_and_handlers_lowercase(role: str) -> None:
    for where, task in tasks_of(role):
        assert task.get("name"), f"{role}/{where}: a task without a name"
        if where.startswith("handlers/"):
            assert task["name"] == task["name"].lower(), f"{role}: handler {task['name']!r} is not lowercase"
        else:
            assert task["name"][0].isupper(), f"{role}/{where}: {task['name']!r} does not start uppercase"


@pytest.mark.parametrize("role", ROLES)
def test_secrets_never_logged(role: str) -> None:
    for where, task in tasks_of(role):
        text = yaml.safe_dump(task)
        if re.search(r"munge_key(?!_path|_stat)", text):
            assert task.get("no_log") is True, f"{role}/{where}: {task['name']!r} touches the munge key without no_log"


def test_health_script_is_the_rendered_health_check_program() -> None:
    defaults = load(ROOT / "roles" / "health" / "defaults" / "main.yml")
    assert defaults["health_script"] == HEALTH_CHECK_PROGRAM


def test_lab_variables_are_role_defaults() -> None:
    """A misspelt lab override would silently do nothing: each must be a default of some role."""
    from clusterforge.lab.labvars import lab_vars
    from clusterforge.lab.paths import LabPaths
    from clusterforge.lab.repo import Repo

    known: set[str] = set()
    for role in ROLES:
        known |= set(load(ROOT / "roles" / role / "defaults" / "main.yml") or {})
    overrides = lab_vars(LabPaths("t", Path("/tmp/t")), Repo(Path("/r"), {"efa_installer": ("efa.tar.gz", "0" * 64)}))
    unknown = sorted(k for k in overrides if not k.startswith("ansible_") and k not in known)
    assert not unknown, f"lab variables no role defines: {unknown}"


def munge_key_script() -> list[str]:
    """The argv of the task that makes the control host's munge key."""
    return next(task["ansible.builtin.command"]["argv"] for _, task in tasks_of("munge")
                if task.get("name") == "The control host has a complete munge key")


@pytest.mark.parametrize("before", [None, b"short", b"x" * 1025])
def test_munge_key_is_made_whole_or_not_at_all(tmp_path: Path, before: bytes | None) -> None:
    """A missing key, or the short key of an interrupted run, is replaced by a complete one in one rename."""
    import subprocess

    key = tmp_path / "munge.key"
    if before is not None:
        key.write_bytes(before)
    argv = [a if "{{" not in a else {"{{ munge_key_file }}": str(key)}.get(a, "1024") for a in munge_key_script()]
    subprocess.run(argv, check=True)
    assert key.stat().st_size == 1024 and key.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["munge.key"]  # no temporary file left behind
    # a failed size check (here: asking for more than /dev/urandom's head gives when cut) leaves the key alone
    broken = [a.replace('head -c "$2"', 'head -c 10') for a in argv]
    assert subprocess.run(broken, check=False).returncode != 0
    assert key.stat().st_size == 1024 and [p.name for p in tmp_path.iterdir()] == ["munge.key"]


def test_munge_key_of_the_wrong_size_is_made_again() -> None:
    task = next(t for _, t in tasks_of("munge") if t.get("name") == "The control host has a complete munge key")
    assert "munge_key_file_stat.stat.size == munge_key_size" in task["when"]
    assert task["no_log"] is True
    verify = {t["name"]: t for _, t in tasks_of("munge")}
    assert verify["This host makes a munge credential"]["no_log"] is True


# --- containers: what the role's variables and enroot.conf come to ----------------------------------------------

def trusted(value: Any) -> Any:
    from ansible.template import trust_as_template

    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return {k: trusted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [trusted(v) for v in value]
    return value


def containers_templar(**inventory: Any) -> Any:
    """Ansible's templating over the containers role's defaults and vars, with these inventory variables."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    variables: dict[str, Any] = {}
    for part in ("defaults", "vars"):
        variables |= trusted(load(ROOT / "roles" / "containers" / part / "main.yml"))
    return Templar(loader=DataLoader(), variables=variables | inventory)


def containers_value(name: str, **inventory: Any) -> Any:
    from ansible.template import trust_as_template

    return containers_templar(**inventory).template(trust_as_template("{{ " + name + " }}"))


@pytest.mark.parametrize(("inventory", "applies"), [
    ({"group_names": ["slurm_compute", "pool_gpu"], "containers_enabled": True}, True),
    ({"group_names": ["slurm_login"], "containers_enabled": True}, True),
    ({"group_names": ["slurm_controller"], "containers_enabled": True}, True),  # srun there loads pyxis too
    ({"group_names": ["storage"], "containers_enabled": True}, False),
    ({"group_names": ["slurm_compute"], "containers_enabled": False}, False),
    ({"group_names": ["slurm_compute"]}, False),  # off unless the blueprint asks
])
def test_containers_applies_to_submit_and_compute_hosts_when_enabled(inventory: dict[str, Any],
                                                                     applies: bool) -> None:
    assert containers_value("containers_applies", **inventory) is applies


@pytest.mark.parametrize(("gpu_count", "expected"), [
    (0, ["enroot=4.1.2-*", "enroot+caps=4.1.2-*", "nvslurm-plugin-pyxis=0.24.0-*"]),
    (8, ["enroot=4.1.2-*", "enroot+caps=4.1.2-*", "nvslurm-plugin-pyxis=0.24.0-*", "libnvidia-container-tools"]),
])
def test_containers_installs_nvidias_packages_at_the_pins(gpu_count: int, expected: list[str]) -> None:
    defaults = load(ROOT / "roles" / "containers" / "defaults" / "main.yml")
    assert (defaults["containers_enroot_version"], defaults["containers_pyxis_version"]) == ("4.1.2", "0.24.0")
    assert containers_value("containers_package_specs", gpu_count=gpu_count) == expected
    assert containers_value("containers_package_names", gpu_count=gpu_count) == [s.split("=")[0] for s in expected]


def test_containers_pin_patterns_follow_a_site_version_scheme() -> None:
    """A site repository that builds pyxis per SLURM release (`24.11.5-0.24.0-1`) sets its own pattern."""
    specs = containers_value("containers_package_specs", containers_pyxis_package_version="24.11*-0.24.0-*")
    assert "nvslurm-plugin-pyxis=24.11*-0.24.0-*" in specs


@pytest.mark.parametrize(("arch", "path"), [("x86_64", "/usr/lib/x86_64-linux-gnu/slurm/spank_pyxis.so"),
                                            ("aarch64", "/usr/lib/aarch64-linux-gnu/slurm/spank_pyxis.so")])
def test_containers_pyxis_plugin_is_where_the_pyxis_package_puts_it(arch: str, path: str) -> None:
    """pyxis's debian/rules installs with libdir=/usr/lib/$(DEB_HOST_MULTIARCH); its Makefile adds slurm/."""
    assert containers_value("containers_pyxis_plugin", ansible_architecture=arch) == path


# enroot's config::load (enroot.in): the keys it exports; every other line of enroot.conf is ignored.
ENROOT_READS = re.compile(r"^ENROOT_[A-Z_]+$|^(MELLANOX_|NVIDIA_)|^SSL_CERT_(DIR|FILE)$|^(all|no|http|https)_proxy$")


def enroot_conf(**inventory: Any) -> str:
    from ansible.template import trust_as_template

    text = (ROOT / "roles" / "containers" / "templates" / "enroot.conf.j2").read_text()
    rendered: str = containers_templar(**inventory).template(trust_as_template(text))
    return rendered


def test_enroot_conf_has_the_cluster_paths_and_settings_enroot_reads() -> None:
    import subprocess

    text = enroot_conf(containers_enroot_extra_settings={"ENROOT_REMAP_ROOT": True, "https_proxy": "http://p:3128"})
    settings = dict(line.split(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert settings == {
        "ENROOT_RUNTIME_PATH": "/run/enroot/user-$(id -u)",
        "ENROOT_CACHE_PATH": "/var/lib/enroot/cache/user-$(id -u)",
        "ENROOT_DATA_PATH": "/var/lib/enroot/data/user-$(id -u)",
        "ENROOT_SQUASH_OPTIONS": "-noI -noD -noF -noX -no-duplicates",
        "ENROOT_MOUNT_HOME": "no", "ENROOT_RESTRICT_DEV": "yes", "ENROOT_ROOTFS_WRITABLE": "yes",
        "ENROOT_REMAP_ROOT": "yes", "https_proxy": "http://p:3128"}
    assert all(ENROOT_READS.match(key) for key in settings)
    # enroot refuses a configuration file bash cannot parse; the role validates the file the same way
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0
    assert containers_value("containers_enroot_parents") == ["/run/enroot", "/var/lib/enroot/cache",
                                                              "/var/lib/enroot/data"]


@pytest.mark.parametrize(("key", "reads"), [("ENROOT_MOUNT_HOME", True), ("NVIDIA_DRIVER_CAPABILITIES", True),
                                            ("SSL_CERT_FILE", True), ("no_proxy", True), ("ENROOT_DATA_PATH2", False),
                                            ("enroot_mount_home", False), ("HTTPS_PROXY", False)])
def test_containers_accepts_only_keys_enroot_reads(key: str, reads: bool) -> None:
    """A key enroot ignores would silently do nothing: the role's check agrees with enroot's own."""
    pattern = load(ROOT / "roles" / "containers" / "vars" / "main.yml")["containers_enroot_key_pattern"]
    assert bool(re.match(pattern, key)) is reads
    assert bool(ENROOT_READS.match(key)) is reads


def test_the_slurm_packages_install_without_starting_their_daemons() -> None:
    """slurmd's package starts slurmd before the role has written slurm.conf, and systemd then waits its 90 s start
    timeout (91 s of the lab's 184 s bake). The install runs under a policy-rc.d that refuses every start, and the
    file goes after it, whatever happened, unless the host had one of its own."""
    install = yaml.safe_load((ROOT / "roles/slurm/tasks/install.yml").read_text())
    [guarded] = [task for task in install if any("ansible.builtin.apt" in inner for inner in task.get("block", []))]
    block, always = guarded["block"], guarded["always"]
    [policy] = [t for t in block if t.get("ansible.builtin.copy", {}).get("dest") == "/usr/sbin/policy-rc.d"]
    assert policy["ansible.builtin.copy"]["content"].rstrip().endswith("exit 101")
    apt = next(i for i, t in enumerate(block) if "ansible.builtin.apt" in t)
    assert block.index(policy) < apt
    [removed] = [t for t in always if t.get("ansible.builtin.file", {}).get("path") == "/usr/sbin/policy-rc.d"]
    assert removed["ansible.builtin.file"]["state"] == "absent"
    assert removed["when"] == policy["when"] == "not slurm_policy_rc.stat.exists"  # a site's own file stays


# --- slurm: the port a compute node configuring itself waits on ---------------------------------------------------

@functools.cache
def ansible_plugins() -> None:
    """ansible.builtin's lookups found as ansible-playbook finds them (once a process: a second set-up warns)."""
    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader()


@pytest.mark.parametrize(("line", "port"), [
    ("SlurmctldPort=6820\n", 6820),
    ("SlurmctldPort=6817-6818\n", 6817),  # a range: slurmctld listens on each; the first answers
    ("", 6817),  # SLURM's default
])
def test_a_compute_node_configuring_itself_waits_on_the_port_slurm_conf_names(tmp_path: Path, line: str,
                                                                             port: int) -> None:
    """The wait's port is read from the rendered slurm.conf by Ansible's own templating. A backreference written
    `'\\\\1'` in the folded YAML reached Jinja as two backslashes, so the port read `\\1`, the wait failed at once
    on every node whose slurm.conf names the port (ignored: slurmd started before slurmctld listened)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    ansible_plugins()
    (tmp_path / "slurm.conf").write_text(f"ClusterName=lab\n{line}SlurmctldHost=ctl-0001\n")
    task = next(t for _, t in tasks_of("slurm")
                if t.get("name") == "A compute node configuring itself starts slurmd once slurmctld listens")
    assert task["ansible.builtin.wait_for"]["port"] == "{{ slurm_ctld_port }}"
    templar = Templar(loader=DataLoader(), variables={"slurm_config_dir": str(tmp_path)})
    assert int(templar.template(trusted(task["vars"]["slurm_ctld_port"]))) == port
