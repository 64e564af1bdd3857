"""The lab without containers: host prerequisites, CLI error paths, resizing, inventory parsing, the package filter."""

from __future__ import annotations

import json

import pytest

from clusterforge.blueprint.load import load_blueprint
from clusterforge.core.errors import ClusterforgeError
from clusterforge.lab import host
from clusterforge.lab.paths import LabPaths
from clusterforge.lab.render import DEFAULT_BLUEPRINT, DEFAULT_CATALOG, data_file, inventory_hosts, render, resized
from clusterforge.lab.repo import Pins
from clusterforge.render import yamlout
from clusterforge.target_kernel import load_catalog
from tests.conftest import ROOT, filter_plugins

GOOD_INFO = {"host": {"ociRuntime": {"name": "runc"}, "networkBackend": "netavark"}}
ALL_TOOLS = dict.fromkeys(host.TOOLS, True)


def facts(**changes: object) -> host.HostFacts:
    base: dict[str, object] = {"euid": 0, "tools": ALL_TOOLS, "podman_info": GOOD_INFO,
                               "ulimits": ["nofile=20000:20000", "nproc=32768:32768"], "hard_nofile": 20000}
    return host.HostFacts(**(base | changes))  # type: ignore[arg-type]


def messages(found: list) -> str:
    return "\n".join(p.render() for p in found)


def test_a_prepared_host_has_no_problems() -> None:
    assert host.problems(facts(), need_mmdebstrap=True) == []


@pytest.mark.parametrize(("changes", "expected"), [
    ({"euid": 1000}, "the lab needs rootful podman"),
    ({"tools": ALL_TOOLS | {"podman": False}, "podman_info": None}, "missing podman (apt-get install podman"),
    ({"tools": ALL_TOOLS | {"runc": False}}, "missing runc (apt-get install runc"),
    ({"tools": ALL_TOOLS | {"iptables": False}}, "missing iptables"),
    ({"podman_info": {"host": {"ociRuntime": {"name": "crun"}, "networkBackend": "netavark"}}},
     'podman uses the crun runtime; the lab needs runc (set [engine] runtime = "runc"'),
    ({"podman_info": {"host": {"ociRuntime": {"name": "runc"}, "networkBackend": "cni"}}},
     "network backend is cni; the lab needs netavark"),
    ({"ulimits": []}, 'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]'),
])
def test_each_missing_prerequisite_says_what_to_do(changes: dict, expected: str) -> None:
    text = messages(host.problems(facts(**changes), need_mmdebstrap=True))
    assert expected in text
    assert "scripts/lab-host-setup" in text or "run as root" in text


def test_mmdebstrap_is_needed_only_to_build_the_base_image() -> None:
    without = facts(tools=ALL_TOOLS | {"mmdebstrap": False})
    assert host.problems(without, need_mmdebstrap=False) == []
    assert "missing mmdebstrap" in messages(host.problems(without, need_mmdebstrap=True))


def test_ulimits_are_read_from_the_last_containers_conf(tmp_path) -> None:
    first, second = tmp_path / "a.conf", tmp_path / "b.conf"
    first.write_text('[containers]\ndefault_ulimits = ["nofile=1:1"]\n')
    second.write_text('[engine]\nruntime = "runc"\n[containers]\ndefault_ulimits = ["nofile=2:2", "nproc=3:3"]\n')
    assert host.configured_ulimits((first, second)) == ["nofile=2:2", "nproc=3:3"]
    assert host.configured_ulimits((first, tmp_path / "missing.conf")) == ["nofile=1:1"]


def test_a_lab_larger_than_the_hosts_inotify_limit_is_refused_with_the_sysctl(tmp_path) -> None:
    # the kernel's default of 128 let 25 of 33 nodes boot; the other 8 exited 255 at boot
    limit = tmp_path / "max_user_instances"
    limit.write_text("128\n")
    assert host.inotify_problem(3, limit) is None
    problem = host.inotify_problem(33, limit)
    assert problem is not None
    assert "33 nodes need about 328 inotify instances" in problem.message and "allows 128" in problem.message
    assert problem.hint is not None and "fs.inotify.max_user_instances=8192" in problem.hint
    limit.write_text("8192\n")
    assert host.inotify_problem(64, limit) is None


def test_lab_up_on_an_unprepared_host_exits_2_with_the_fix(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    monkeypatch.setattr(host, "gather", lambda: facts(tools=ALL_TOOLS | {"podman": False, "runc": False},
                                                      podman_info=None))
    monkeypatch.setattr("clusterforge.lab.cluster.podman_image_exists", lambda name: False)
    monkeypatch.setattr("clusterforge.lab.podman.labelled", lambda kind, label: [])
    result = cli("lab", "up", "--name", "cf-unit")
    assert result.exit_code == 2
    assert "host: missing podman, runc (apt-get install podman runc" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args", [("status",), ("exec", "node-0001", "--", "true"), ("provision",),
                                  ("stop", "node-0001"), ("start",), ("replace", "node-0001")])
def test_commands_on_a_lab_that_is_not_up_exit_2(cli, monkeypatch, tmp_path, args) -> None:
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    result = cli("lab", args[0], "--name", "cf-unit", *args[1:])
    assert result.exit_code == 2
    assert "no lab named cf-unit is up (start one with `clusterforge lab up`)" in result.stderr


def test_exec_on_an_unknown_node_names_the_nodes(cli, monkeypatch, tmp_path) -> None:
    from clusterforge.lab import state

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    paths = LabPaths.of("cf-unit")
    state.save(paths, state.LabState("cf-unit", "bp.yaml", (), "img", "net", "ctl-0001",
                                     (state.Node("ctl-0001", "cf-unit-ctl-0001", "10.0.0.10", ("slurm_controller",)),)))
    result = cli("lab", "exec", "--name", "cf-unit", "nope", "--", "true")
    assert result.exit_code == 2 and "no node 'nope' in lab cf-unit (nodes: ctl-0001)" in result.stderr


def test_state_round_trips_through_json(tmp_path) -> None:
    from clusterforge.lab import state

    lab = state.LabState("n", "bp", ("c.yaml",), "img", "net", "a",
                         (state.Node("a", "n-a", "10.0.0.10", ("slurm_controller", "pool_a")),))
    assert state.LabState.from_json(lab.to_json()) == lab


def test_invalid_lab_name(cli) -> None:
    result = cli("lab", "down", "--name", "Bad_Name")
    assert result.exit_code == 2 and "invalid lab name 'Bad_Name'" in result.stderr


def test_down_with_nothing_to_remove(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    monkeypatch.setattr("clusterforge.lab.podman.labelled", lambda kind, label: [])
    result = cli("lab", "down", "--name", "cf-unit")
    assert result.exit_code == 0 and "nothing to remove: no lab named cf-unit" in result.output


def test_provision_extra_vars_must_be_key_value(cli, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    result = cli("lab", "provision", "-e", "novalue", "--name", "cf-unit")
    assert result.exit_code == 2 and "expected KEY=VALUE, got 'novalue'" in result.stderr
    result = cli("lab", "provision", "-e", f"@{tmp_path / 'vault.yml'}", "--name", "cf-unit")
    assert result.exit_code == 2 and f"{tmp_path / 'vault.yml'}: --extra-vars: no such file" in result.stderr


def test_stop_and_replace_name_the_lab_nodes_when_one_is_unknown(cli, monkeypatch, tmp_path) -> None:
    from clusterforge.lab import state

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    monkeypatch.setattr("clusterforge.lab.podman.labelled", lambda kind, label: [])
    state.save(LabPaths.of("cf-unit"), state.LabState("cf-unit", "bp.yaml", (), "img", "net", "ctl-0001", (
        state.Node("ctl-0001", "cf-unit-ctl-0001", "10.0.0.10", ("slurm_controller",)),)))
    for command in ("stop", "replace"):
        result = cli("lab", command, "--name", "cf-unit", "node-9")
        assert result.exit_code == 2 and "no node 'node-9' in lab cf-unit (nodes: ctl-0001)" in result.stderr


def lab_loaded():
    return load_blueprint(data_file(DEFAULT_BLUEPRINT), load_catalog([data_file(DEFAULT_CATALOG)]))


def test_resize_keeps_other_pools_and_refuses_no_compute() -> None:
    cluster = lab_loaded().cluster
    bigger = resized(cluster, 9)
    assert [(p.name, p.count) for p in bigger.pools] == [("ctl", 1), ("node", 8)]
    with pytest.raises(ClusterforgeError, match="--nodes 1 leaves no compute node"):
        resized(cluster, 1)


def test_lab_render_is_the_production_render(tmp_path) -> None:
    out = tmp_path / "render"
    render(data_file(DEFAULT_BLUEPRINT), [data_file(DEFAULT_CATALOG)], 4, out)
    hosts = inventory_hosts(out / "inventory" / "hosts.yml")
    assert list(hosts) == ["ctl-0001", "node-0001", "node-0002", "node-0003"]
    assert "slurm_controller" in hosts["ctl-0001"] and "slurm_compute" not in hosts["ctl-0001"]
    assert set(hosts["node-0003"]) >= {"slurm_compute", "pool_node"}
    conf = (out / "slurm" / "slurm.conf").read_text()
    assert "NodeName=node-[0001-0003]" in conf and "SlurmctldHost=ctl-0001" in conf
    assert "SlurmdTimeout=30" in conf and "HealthCheckProgram=/usr/local/sbin/clusterforge-health" in conf
    group_vars = yamlout.load((out / "inventory" / "group_vars" / "all.yml").read_text())
    assert group_vars["slurm_config_dir"] == "{{ inventory_dir }}/../slurm"


def test_slurmd_timeout_is_rendered_only_when_set(tmp_path, cli, write) -> None:
    text = data_file(DEFAULT_BLUEPRINT).read_text().replace("  slurmd_timeout_s: 30", "")
    result = cli("render", write(text), "--catalog", data_file(DEFAULT_CATALOG), "-o", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "SlurmdTimeout" not in (tmp_path / "o" / "slurm" / "slurm.conf").read_text()


def test_lab_blueprint_passes_check(cli) -> None:
    result = cli("check", data_file(DEFAULT_BLUEPRINT), "--catalog", data_file(DEFAULT_CATALOG))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("specs", "lines", "missing"), [
    (["slurmd=22.05*"], ["slurmd 22.05.8-4+deb12u3 installed"], []),
    (["slurmd=22.05*"], ["slurmd 23.02.1-1 installed"], ["slurmd=22.05*"]),
    (["slurmd=22.05*"], ["slurmd 22.05.8-4 config-files"], ["slurmd=22.05*"]),
    (["munge"], [], ["munge"]),
    (["libnccl2=2.26.2-*+cuda12.8"], ["libnccl2 2.26.2-1+cuda12.8 installed"], []),
    (["libnccl2=2.26.2-*+cuda12.8"], ["libnccl2 2.26.2-1+cuda12.9 installed"], ["libnccl2=2.26.2-*+cuda12.8"]),
    (["a", "b=1*"], ["a 3 installed", "b 1.2 installed"], []),
])
def test_missing_packages_filter(specs, lines, missing) -> None:
    assert filter_plugins().missing_packages(specs, lines) == missing


def test_status_json_has_controller_and_nodes(cli, monkeypatch, tmp_path) -> None:
    from clusterforge.lab import state

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    paths = LabPaths.of("cf-unit")
    state.save(paths, state.LabState("cf-unit", "bp.yaml", (), "img", "net", "ctl-0001", (
        state.Node("ctl-0001", "cf-unit-ctl-0001", "10.0.0.10", ("slurm_controller",)),
        state.Node("node-0001", "cf-unit-node-0001", "10.0.0.11", ("slurm_compute",)))))
    monkeypatch.setattr("clusterforge.lab.podman.labelled", lambda kind, label: ["cf-unit-ctl-0001"])
    monkeypatch.setattr("clusterforge.lab.podman.inspect", lambda kind, name: {"State": {"Running": True}})
    result = cli("lab", "status", "--format", "json", "--name", "cf-unit")
    data = json.loads(result.stdout)
    assert data["controller"] == "ctl-0001"
    assert [(n["name"], n["ip"], n["running"]) for n in data["nodes"]] == [
        ("ctl-0001", "10.0.0.10", True), ("node-0001", "10.0.0.11", False)]


def test_repo_index_lists_stand_ins(tmp_path, monkeypatch) -> None:
    import shutil

    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed (Debian/Ubuntu only)")
    from clusterforge.lab import repo

    deb = tmp_path / "lustre-client-utils_2.15.6-1_amd64.deb"
    repo.standin(deb, "lustre-client-utils", "2.15.6-1", "Lustre client utilities")
    repo._write_index(tmp_path, repo.index_of(tmp_path, [deb.name]))
    packages = (tmp_path / "Packages").read_text()
    assert "Package: lustre-client-utils\nVersion: 2.15.6-1\n" in packages
    assert f"Filename: ./{deb.name}\nSize: {deb.stat().st_size}\n" in packages
    assert "clusterforge lab stand-in" in packages
    assert "Packages" in (tmp_path / "Release").read_text()


def test_each_lab_serves_exactly_its_pins_from_the_shared_pool(tmp_path, monkeypatch) -> None:
    """Two labs with different pins: each folder holds links to the pool's files its pins name and nothing else,
    with their index; a pin changed in one (day two's roll) changes nothing the other's nodes read, and the index
    a bake is keyed by is the one its folder serves."""
    import os
    import shutil

    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed (Debian/Ubuntu only)")
    from clusterforge.lab import repo

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(repo, "standins", lambda: [])  # the vendors' stand-ins fetch a real library from PyPI
    first, second = tmp_path / "first", tmp_path / "second"
    assert repo.index(_pins()) is None  # nothing built yet: nothing to key a bake by
    said: list[str] = []
    repo.ensure(_pins(), first, said.append)
    assert "adding lustre-client-utils 2.15.6-1 to the lab's apt repository" in said
    before = {p.name: p.read_bytes() for p in first.iterdir()}
    served = {p.name for p in first.iterdir()} - {"Packages", "Release"}
    assert served == {f"{name}_{version}_amd64.deb" for name, version, _ in repo._packages(_pins())}
    assert all(os.path.samefile(first / name, repo.pool_root() / name) for name in served)  # linked, not copied
    assert repo.index(_pins()) == (first / "Packages").read_bytes()

    said.clear()
    repo.ensure(_pins(enroot="3.5.0"), second, said.append)
    assert said == ["adding enroot 3.5.0-1 to the lab's apt repository",
                    "adding enroot+caps 3.5.0-1 to the lab's apt repository"]
    assert {p.name: p.read_bytes() for p in first.iterdir()} == before  # the first lab saw nothing of it
    assert "Version: 3.5.0-1" in (second / "Packages").read_text()
    assert "Version: 3.5.0-1" not in (first / "Packages").read_text()

    repo.ensure(_pins(enroot="3.5.0"), first)  # the first lab takes the new pin: the old version leaves it
    assert {p.name for p in first.iterdir()} == {p.name for p in second.iterdir()}
    assert (first / "Packages").read_bytes() == (second / "Packages").read_bytes() == repo.index(
        _pins(enroot="3.5.0"))
    assert repo.index(_pins()) == before["Packages"]  # the pool keeps every version it built


def _pins(**changes: str) -> Pins:
    base = {"lustre_client": "2.15.6"}
    return Pins(**(base | changes),
                others=(("nccl_version", "2.26.2"), ("nvidia_driver_cuda_version", "12.8"),
                        ("nvidia_driver_version", "570.133.20"), ("efa_installer_version", "1.41.0"),
                        ("efa_aws_ofi_nccl_version", "1.14.2")))


def test_repo_serves_enroot_and_pyxis_at_the_containers_roles_pins() -> None:
    """The lab installs the containers role's pinned versions: the stand-ins must be those versions, under
    NVIDIA's package names, or apt finds nothing to install at `enroot=<pin>-*`."""
    import yaml

    from clusterforge.lab import repo

    defaults = yaml.safe_load((ROOT / "roles/containers/defaults/main.yml").read_text())
    served = {name: version for name, version, _ in repo._packages(_pins())}
    enroot, pyxis = defaults["containers_enroot_version"], defaults["containers_pyxis_version"]
    assert {name: served[name] for name in [*defaults["containers_enroot_packages"],
                                            *defaults["containers_pyxis_packages"]]} == {
        "enroot": f"{enroot}-1", "enroot+caps": f"{enroot}-1", "nvslurm-plugin-pyxis": f"{pyxis}-1"}
    other = {name: version for name, version, _ in repo._packages(_pins(enroot="3.5.0", pyxis="0.20.0"))}
    assert (other["enroot+caps"], other["nvslurm-plugin-pyxis"]) == ("3.5.0-1", "0.20.0-1")


def test_repo_enroot_and_pyxis_stand_ins_declare_nvidias_dependencies(tmp_path) -> None:
    """enroot+caps needs enroot of its own version and pyxis needs an enroot, as NVIDIA's packages declare, so
    apt resolves the three the way it does on a real node."""
    import shutil

    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed (Debian/Ubuntu only)")
    from clusterforge.lab import repo

    for name, version, build in repo._packages(_pins(enroot="4.1.2", pyxis="0.24.0")):
        if name in ("enroot", "enroot+caps", "nvslurm-plugin-pyxis"):
            build(tmp_path / f"{name}_{version}_amd64.deb")
    repo._write_index(tmp_path, repo.index_of(tmp_path, [deb.name for deb in tmp_path.glob("*.deb")]))
    stanzas = {s.split("\n", 1)[0]: s for s in (tmp_path / "Packages").read_text().split("\n\n") if s}
    assert set(stanzas) == {"Package: enroot", "Package: enroot+caps", "Package: nvslurm-plugin-pyxis"}
    assert "Version: 4.1.2-1\n" in stanzas["Package: enroot"]
    assert "Depends: enroot (= 4.1.2-1)\n" in stanzas["Package: enroot+caps"]
    assert "Version: 0.24.0-1\n" in stanzas["Package: nvslurm-plugin-pyxis"]
    assert "Depends: enroot (>= 3.1.0) | enroot-hardened (>= 3.1.0)\n" in stanzas["Package: nvslurm-plugin-pyxis"]
    assert all("clusterforge lab stand-in" in stanza for stanza in stanzas.values())


def test_one_off_steps_announce_what_they_took_here_last_time(monkeypatch, tmp_path) -> None:
    """A first bake promises the reference machine's figure, never 'about a minute'; a later one names what the
    last one took on this machine, and a failed step records nothing."""
    from clusterforge.lab import durations

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    said: list[str] = []
    clock = iter([100.0, 303.4])
    monkeypatch.setattr(durations.time, "monotonic", lambda: next(clock))
    with durations.timed("bake", said.append, "baking the image"):
        pass
    assert said == ["baking the image (3-4 minutes on 2 cores)", "bake done in 203 s"]
    clock = iter([0.0, 5.0])
    with pytest.raises(RuntimeError), durations.timed("bake", said.append, "baking again"):
        raise RuntimeError("the bake failed")
    assert said[-1] == "baking again (took 203 s here last time)"
    assert durations.expected("bake") == "took 203 s here last time"


def test_self_booting_nodes_get_mitogen_read_only_and_the_boot_script_uses_it_where_mounted(
        tmp_path, monkeypatch) -> None:
    """The boot phase's ~170 steps run under mitogen's strategy (one Python process, not one per step): the
    control host's pinned copy is mounted into every node and the boot script turns it on only where it is."""
    from clusterforge.lab import selfboot
    from clusterforge.lab.paths import LabPaths

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path / "cache"))
    paths = LabPaths.of("cf-unit-mitogen")
    paths.render.mkdir(parents=True)
    given = selfboot.Given.of(paths, tmp_path / "boot")
    mounts = dict(zip(given.common[1::2], given.common[::2], strict=True)).keys()
    found = selfboot.mitogen_dir()
    assert found is not None and (found / "ansible_mitogen" / "plugins" / "strategy").is_dir()
    for package in ("mitogen", "ansible_mitogen"):
        assert f"{found / package}:{selfboot.MITOGEN}/{package}:ro" in mounts
    script = selfboot.bake_files()[selfboot.SCRIPT][0].decode()
    assert f"\nMITOGEN={selfboot.MITOGEN}\n" in script
    assert 'if [ -d "$MITOGEN/ansible_mitogen" ]' in script
    assert ('ANSIBLE_STRATEGY_PLUGINS="$MITOGEN/ansible_mitogen/plugins/strategy" ANSIBLE_STRATEGY=mitogen_linear'
            in script)
    # through the cluster collection's wrapper (a longer bound on starting mitogen's interpreter) where the node has
    # the collection, which the lab mounts where the script looks for it
    wrapper = f"{selfboot.COLLECTIONS}/{selfboot.OWN_COLLECTION}/plugins/strategy/mitogen_linear.py"
    assert f"if [ -r {wrapper} ]" in script
    assert ('PYTHONPATH="$MITOGEN${PYTHONPATH:+:$PYTHONPATH}" ANSIBLE_STRATEGY=clusterforge.cluster.mitogen_linear'
            in script)
    plugins = selfboot.project_root() / "plugins"
    assert f"{plugins}:{selfboot.COLLECTIONS}/{selfboot.OWN_COLLECTION}/plugins:ro" in mounts


def test_the_repository_serves_each_targets_stand_ins_at_its_pins(tmp_path) -> None:
    """A target's stand-ins come from its folder (its `lab_standins.py`): AWS's aws-ofi-nccl package and EFA
    installer, at the render's `efa_*` pins, and the lab variables that point the nccl and efa roles at them."""
    import tarfile

    from clusterforge.lab import repo

    made = {name: (version, build) for s in repo.standins() for name, version, build in s.packages(_pins())}
    assert made["aws-ofi-nccl"][0] == "1.14.2-1"
    assert repo.other_pins({"efa_installer_version": "1.41.0", "efa_aws_ofi_nccl_version": "1.14.2", "x": 1})[-2:] == (
        ("efa_installer_version", "1.41.0"), ("efa_aws_ofi_nccl_version", "1.14.2"))
    files = {key: value for s in repo.standins() for key, value in s.files(_pins()).items()}
    name, build = files["efa_installer"]
    assert name == "aws-efa-installer-1.41.0.tar.gz"
    build(tmp_path / name)
    with tarfile.open(tmp_path / name) as tar:
        script = tar.extractfile("aws-efa-installer/efa_installer.sh")
        assert script is not None and b"EFA installer version: 1.41.0" in script.read()
    served = repo.Repo(tmp_path, {"efa_installer": (name, "ab" * 32)}).variables()
    assert {key: served[key] for key in ("health_check_efa", "nccl_aws_ofi_nccl_apt_repository", "efa_installer_url",
                                         "efa_installer_sha256")} == {
        "health_check_efa": False, "nccl_aws_ofi_nccl_apt_repository": repo.APT_LINE,
        "efa_installer_url": f"file://{repo.MOUNT}/{name}", "efa_installer_sha256": "ab" * 32}


def test_the_repository_serves_the_gpu_vendors_stand_ins_from_its_folder() -> None:
    """The default vendor's stack comes from its own folder (clusterforge/accelerators/nvidia/lab_standins.py): the
    driver's metapackages named for its branch, NCCL at `<nccl>-1+cuda<cuda>`, and the lab variables that run its
    roles on compute nodes from the lab's repository; the shared list serves none of them."""
    from clusterforge.lab import repo

    made = {name: version for s in repo.standins() for name, version, _ in s.packages(_pins())}
    assert {name: made[name] for name in ("libnccl2", "libnccl-dev", "cuda-drivers-570", "nvidia-imex-570")} == {
        "libnccl2": "2.26.2-1+cuda12.8", "libnccl-dev": "2.26.2-1+cuda12.8", "cuda-drivers-570": "570.133.20-1",
        "nvidia-imex-570": "570.133.20-1"}
    assert {name for name, _, _ in repo._packages(_pins())} == {
        "lustre-client-utils", "lustre-client-modules-dkms", "enroot", "enroot+caps", "nvslurm-plugin-pyxis"}
    served = repo.Repo(ROOT).variables()
    assert served["nccl_apt_repository"] == served["nvidia_driver_apt_repository"] == repo.APT_LINE
    assert served["nvidia_driver_enabled"] == served["nccl_enabled"] == repo.ON_COMPUTE


def test_the_smoke_job_runs_on_power_saved_nodes_when_no_compute_node_is_always_on() -> None:
    """A lab whose only compute pool is elastic: `srun -N0` was refused ("Node count specification invalid");
    the job asks one node, which SLURM powers up, and waits as long as a power-up takes."""
    from clusterforge.lab.cluster import POWER_UP_S, smoke_job
    from clusterforge.lab.state import LabState, Node

    ctl = Node("ctl-0001", "c-ctl", "10.89.0.2", ("slurm_controller",))
    gpu = [Node(f"gpu-000{i}", f"c-gpu{i}", f"10.89.0.{i + 2}", ("slurm_compute",)) for i in (1, 2)]
    burst = [Node(f"burst-000{i}", f"c-b{i}", "", ("slurm_compute",)) for i in (1, 2, 3)]
    lab = LabState("t", "b.yaml", (), "img", "net", "ctl-0001", nodes=(ctl, *gpu), launched=tuple(burst))
    assert smoke_job(lab) == (["srun", "-N2", "--time=1", "hostname"], 60)
    elastic = LabState("t", "b.yaml", (), "img", "net", "ctl-0001", nodes=(ctl,), launched=tuple(burst))
    assert smoke_job(elastic) == (["srun", "-N1", "--time=1", "hostname"], POWER_UP_S)
    with pytest.raises(ClusterforgeError, match="no compute node"):
        smoke_job(LabState("t", "b.yaml", (), "img", "net", "ctl-0001", nodes=(ctl,)))


@pytest.mark.parametrize(("args", "chosen"), [((), "self"), (("--bare",), "push"), (("--boot", "push"), "push"),
                                              (("--boot", "self"), "self")])
def test_lab_up_lets_nodes_configure_themselves_unless_told_to_push(cli, monkeypatch, tmp_path, args,
                                                                    chosen) -> None:
    """The default is `--boot self`, as on AWS and bare metal; a plain image (`--bare`) has no boot phase and is
    pushed; either can be named."""
    from clusterforge.core.errors import Problem

    def refuse(word: str):  # type: ignore[no-untyped-def]
        def called(*_args, **_kwargs):  # type: ignore[no-untyped-def]
            raise ClusterforgeError(Problem(f"{word} chosen"))
        return called

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    monkeypatch.setattr("clusterforge.lab.cluster.up_self", refuse("self"))
    monkeypatch.setattr("clusterforge.lab.cluster.up", refuse("push"))
    result = cli("lab", "up", "--name", "cf-unit", *args)
    assert result.exit_code == 2 and f"{chosen} chosen" in result.stderr, result.output


def test_the_labs_folder_is_made_private_as_the_munge_role_keeps_the_key_folder(tmp_path, monkeypatch) -> None:
    """The lab's folder holds the munge key `lab provision` passes as munge_key_file: made in the mode the munge
    role gives that key's folder, the role has nothing to change there after `lab up` (whichever boot made it)."""
    import os

    import yaml

    from clusterforge.lab.paths import PRIVATE

    tasks = yaml.safe_load((ROOT / "roles/munge/tasks/key.yml").read_text())
    folder = next(t for t in tasks if t["name"] == "The control host keeps the key in a private directory")
    assert folder["ansible.builtin.file"]["path"] == "{{ munge_key_file | dirname }}"
    assert int(folder["ansible.builtin.file"]["mode"], 8) == PRIVATE
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    paths = LabPaths.of("cf-unit")
    old = os.umask(0o022)
    try:
        assert (paths.make().stat().st_mode & 0o777) == PRIVATE  # made new
        paths.root.chmod(0o755)
        assert (paths.make().stat().st_mode & 0o777) == PRIVATE  # made private again (a folder of an older lab)
    finally:
        os.umask(old)


def test_a_push_to_a_lab_with_power_saved_pools_sees_their_nodes_and_leaves_them_out(tmp_path, monkeypatch) -> None:
    """`lab provision` reads the nodes SLURM starts as a node configuring itself does (their /etc/hosts lines and
    node lists agree, so a push after `lab up` changes nothing) and never runs on them."""
    from clusterforge.lab import state
    from clusterforge.lab.cluster import pushed_to

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    paths = LabPaths.of("cf-unit")
    rendered = paths.render / "inventory/hosts.yml"
    always = (state.Node("ctl-0001", "cf-unit-ctl-0001", "10.0.0.10", ("slurm_controller",)),)
    state.save(paths, state.LabState("cf-unit", "bp.yaml", (), "img", "net", "ctl-0001", always))
    assert pushed_to(paths, rendered, None) == ([rendered], None)  # no power-saved pool: as rendered
    burst = tuple(state.Node(f"burst-000{i}", f"cf-unit-burst-000{i}", f"10.0.0.1{i}", ("pool_burst",))
                  for i in (1, 2))
    state.save(paths, state.LabState("cf-unit", "bp.yaml", (), "img", "net", "ctl-0001", always, burst))
    (paths.root / "boot").mkdir(parents=True)
    (paths.root / "boot/nodes.yml").write_text("all: {}\n")
    given = paths.root / "boot/nodes.yml"
    assert pushed_to(paths, rendered, None) == ([rendered, given], "all:!burst-0001:!burst-0002")
    assert pushed_to(paths, rendered, "node-0001,ctl-0001") == (
        [rendered, given], "node-0001,ctl-0001:!burst-0001:!burst-0002")


def test_the_hosts_every_node_waits_for_get_a_larger_share_of_the_cpu(monkeypatch, tmp_path) -> None:
    """The controllers and the accounting host start with eight times a node's CPU share: the lab's nodes share
    this host's cores, and the controller's boot phase is what `lab up` waits for."""
    from clusterforge.lab import nodes

    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    runs: list[list[str]] = []
    monkeypatch.setattr(nodes.podman, "run", lambda argv, **_: runs.append(argv))
    monkeypatch.setattr(nodes.podman, "exists", lambda *_: True)
    specs = [nodes.NodeSpec("ctl-0001", ("slurm_controller",), "10.0.0.10"),
             nodes.NodeSpec("db-0001", ("pool_db",), "10.0.0.11"),
             nodes.NodeSpec("node-0001", ("slurm_compute", "pool_compute"), "10.0.0.12")]
    nodes.start(LabPaths.of("cf-unit"), specs, "img", str(tmp_path))
    shares = {argv[argv.index("--hostname") + 1]: argv[argv.index("--cpu-shares") + 1] if "--cpu-shares" in argv
              else None for argv in runs}
    assert shares == {"ctl-0001": "8192", "db-0001": "8192", "node-0001": None}
    # and every node asks its resolver again after 1 s (aardvark drops a query while it reloads)
    assert all(argv[argv.index("--dns-option") + 1] == "timeout:1" for argv in runs)


def test_the_labs_ssh_config_names_each_node_and_the_cheaper_key_exchange(tmp_path, monkeypatch) -> None:
    """OpenSSH's own reading of the file (`ssh -G`): each node's address, the lab's key, and curve25519-sha256 as
    the only key exchange (the default hybrid one cost every connection about 120 ms more CPU: nodes.py)."""
    import shutil
    import subprocess

    from clusterforge.lab import nodes
    from clusterforge.lab.state import Node

    if shutil.which("ssh") is None:
        pytest.skip("no OpenSSH client on this machine")
    monkeypatch.setenv("CLUSTERFORGE_CACHE", str(tmp_path))
    paths = LabPaths.of("cf-ssh")
    paths.make()
    nodes.write_ssh_config(paths, [Node("node-0001", "cf-ssh-node-0001", "10.89.0.11", ("slurm_compute",))])
    read = subprocess.run(["ssh", "-G", "-F", str(paths.ssh_config), "node-0001"], capture_output=True, text=True,
                          check=True).stdout
    settings = dict(line.split(" ", 1) for line in read.splitlines() if " " in line)
    assert settings["hostname"] == "10.89.0.11"
    assert settings["kexalgorithms"] == "curve25519-sha256"
    assert settings["identityfile"] == str(paths.ssh_key)
