"""`clusterforge diff OLD NEW`: what a blueprint change means for the jobs running on the cluster.

Each case edits an example a little and checks the classification (action, hosts, daemon) and the exit code:
0 when running jobs keep running, 1 when a running node is drained, rebooted, reimaged or removed, 2 on bad input.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from clusterforge.day2.diff import Action, Diff, compare
from clusterforge.day2.rendered import Rendered
from clusterforge.files.checkout import project_root
from clusterforge.pipeline.analysis import PolicyInputs
from clusterforge.render.change_classes import UNCLASSIFIED, group_var_effects, read_slurm_role
from tests.conftest import EXAMPLES

ONPREM = EXAMPLES / "onprem-dgx-h100.yaml"  # 16 DGX H100; gpu-0001 is also the controller
HALL = EXAMPLES / "onprem-dgx-h100-hall.yaml"  # 128 DGX H100 and three CPU controllers ctl-[0001-0003]
GPUS = {f"gpu-{n:04d}" for n in range(1, 17)}
DRIVER = "595.71.05"  # another R595 driver the policies accept (an earlier DLAMI's)
LAST_RACK = "devices: [{pool: gpu, count: 2}]}"  # rack b03's placement, the last line that has it


def edited(path: Path, *edits: tuple[str, str], last: bool = False) -> str:
    """The example's text with each (old, new) replaced once (the last occurrence when `last`)."""
    text = path.read_text()
    for old, new in edits:
        assert old in text, old
        index = text.rfind(old) if last else text.find(old)
        text = text[:index] + new + text[index + len(old):]
    return text


def diff_of(old: Path, new: Path) -> Diff:
    return compare(Rendered.from_blueprint(old, PolicyInputs()), Rendered.from_blueprint(new, PolicyInputs()))


def changes(diff: Diff, file: str, key: str) -> list[tuple[Action, set[str], str | None]]:
    return [(c.action, set(c.hosts), c.daemon) for c in diff.changes if c.file == file and c.key == key]


def test_a_node_added_needs_nothing_of_running_nodes(cli, write) -> None:
    new = write(edited(ONPREM, ("count: 16, role", "count: 17, role"), (LAST_RACK, LAST_RACK.replace("2", "3")),
                       last=True), "grown.yaml")
    diff = diff_of(ONPREM, new)
    assert diff.added == ("gpu-0017",) and not diff.removed
    assert diff.action_for("gpu-0017") == Action.NONE
    assert changes(diff, "hosts.yml", "gpu-0017") == [(Action.NONE, {"gpu-0017"}, None)]
    assert (Action.RECONFIGURE, {"gpu-0001"}, "slurmctld") in changes(diff, "slurm.conf", "NodeName=gpu-0017")
    assert changes(diff, "slurm.conf", "PartitionName=train") == [(Action.RECONFIGURE, {"gpu-0001"}, "slurmctld")]
    assert max(c.action for c in diff.changes) == Action.RECONFIGURE
    assert not diff.disruptive
    assert {d.what for d in diff.physical} >= {"nodes", "GPUs", "rack b03", "total"}
    result = cli("diff", ONPREM, new)
    assert result.exit_code == 0, result.output
    assert "added    1: gpu-0017" in result.stdout
    assert result.stdout.rstrip().endswith("no disruption: running jobs keep running (largest action: RECONFIGURE)")


def test_a_driver_pin_reboots_every_gpu_node_and_no_other(cli, write) -> None:
    new = write(edited(HALL, ("slurm:\n", f"software: {{nvidia_driver: {DRIVER}}}\nslurm:\n")), "driver.yaml")
    assert cli("check", new).exit_code == 0  # a driver the policies accept
    diff = diff_of(HALL, new)
    gpus = {f"gpu-{n:04d}" for n in range(1, 129)}
    assert changes(diff, "group_vars", "nvidia_driver_version") == [(Action.REBOOT, gpus, None)]
    assert set(diff.hosts_at_least(Action.NONE)) == gpus
    assert diff.action_for("ctl-0001") == Action.NONE
    assert diff.disruptive and len(diff.changes) == 1
    result = cli("diff", HALL, new)
    assert result.exit_code == 1
    assert re.search(r"REBOOT +128 hosts gpu-\[0001-0128\]: .*\n(.*\n)*?    group_vars: nvidia_driver_version: "
                     r"595.91.07 -> 595.71.05\n", result.stdout)
    assert "disruptive: 128 hosts need a drain, reboot or reimage (largest action: REBOOT)" in result.stdout


def test_a_partition_limit_is_a_reconfigure(cli, write) -> None:
    new = write(edited(ONPREM, ("default: true}", "default: true, max_time: 2-00:00:00}")), "limit.yaml")
    diff = diff_of(ONPREM, new)
    assert [(c.file, c.key, c.action, c.hosts) for c in diff.changes] == [
        ("slurm.conf", "PartitionName=train", Action.RECONFIGURE, ("gpu-0001",))]
    assert "MaxTime=2-00:00:00" in (diff.changes[0].new or "")
    assert cli("diff", ONPREM, new).exit_code == 0


def test_a_new_state_save_location_loses_the_jobs_kept_in_the_old_one(cli, write) -> None:
    state = "default: true}]\n  state_save_location: /var/spool/slurmctld/state"
    new = write(edited(ONPREM, ("default: true}]", state)))
    diff = diff_of(ONPREM, new)
    assert changes(diff, "slurm.conf", "StateSaveLocation") == [
        (Action.LOSE_JOBS, {"gpu-0001"}, "slurmctld"), (Action.LOSE_JOBS, GPUS, "slurmd")]
    assert diff.disruptive and diff.loses_jobs and not diff.slurm_upgrade
    result = cli("diff", ONPREM, new)
    assert result.exit_code == 1
    assert "loses jobs: queued or running jobs are lost; drain the cluster first (largest action: LOSE_JOBS)" \
        in " ".join(result.stdout.split())  # as one line: the text wraps at the terminal's width


def test_the_slurm_pin_is_an_upgrade_in_order(write) -> None:
    new = write(edited(ONPREM, ("slurm:\n", 'software: {slurm: "25.05"}\nslurm:\n')))
    diff = diff_of(ONPREM, new)
    assert diff.slurm_upgrade
    assert [(c.action, c.daemon) for c in diff.changes if c.key == "slurm_version"] == [
        (Action.RESTART, "slurmdbd"), (Action.RESTART, "slurmctld"), (Action.RESTART, "slurmd")]


def test_a_node_removed_is_drained(cli, write) -> None:
    new = write(edited(ONPREM, ("count: 16, role", "count: 15, role"), (LAST_RACK, LAST_RACK.replace("2", "1")),
                       last=True))
    diff = diff_of(ONPREM, new)
    assert diff.removed == ("gpu-0016",)
    assert changes(diff, "hosts.yml", "gpu-0016") == [(Action.DRAIN, {"gpu-0016"}, None)]
    assert diff.disruptive and diff.interrupted == ("gpu-0016",)
    result = cli("diff", ONPREM, new)
    assert result.exit_code == 1 and "disruptive: 1 host needs a drain" in result.stdout


@pytest.mark.parametrize("example", [ONPREM, EXAMPLES / "aws-p5en.yaml"], ids=lambda p: p.stem)
def test_identical_blueprints_change_nothing(cli, write, example: Path) -> None:
    # another name: the generated-by headers and the stack config's blueprint path differ, no setting does
    copy = write(example.read_text(), "copy.yaml")
    diff = diff_of(example, copy)
    assert (diff.added, diff.removed, diff.changed, diff.changes, diff.physical) == ((), (), (), (), ())
    result = cli("diff", example, copy)
    assert result.exit_code == 0 and "(none changed)" in result.stdout


def test_a_render_directory_agrees_with_its_blueprint(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    for example in (ONPREM, EXAMPLES / "aws-p5en.yaml"):
        out = tmp_path / example.stem
        assert cli("render", example, "-o", out).exit_code == 0
        assert diff_of(example, example).changes == ()
        assert compare(Rendered.from_directory(out), Rendered.from_blueprint(example, PolicyInputs())).changes == ()


def test_a_stacks_facts_count_only_when_both_renders_have_them(cli, write, tmp_path, monkeypatch) -> None:
    from tests.aws.test_inventory import outputs

    monkeypatch.chdir(EXAMPLES.parent)
    # a pinned AMI: the stack runs the GPU nodes itself, so its outputs carry their facts
    blueprint = write(edited(EXAMPLES / "aws-p5.yaml", ("count: 64", "count: 2"),
                             ("  region: us-east-1", "  region: us-east-1\n  ami: ami-0123456789abcdef0")))
    stack = tmp_path / "outputs.json"
    stack.write_text(json.dumps(outputs()))
    assert cli("render", blueprint, "-o", tmp_path / "deployed", "--from-stack", stack).exit_code == 0
    deployed = Rendered.from_directory(tmp_path / "deployed")
    assert compare(deployed, Rendered.from_blueprint(blueprint, PolicyInputs())).changes == ()
    nodes = outputs()["nodes"]
    nodes[1]["instance_id"] = "i-00000000000000ff"  # gpu-0001 was replaced
    stack.write_text(json.dumps(outputs(nodes=nodes)))
    assert cli("render", blueprint, "-o", tmp_path / "replaced", "--from-stack", stack).exit_code == 0
    diff = compare(deployed, Rendered.from_directory(tmp_path / "replaced"))
    assert [(c.key, c.action, c.hosts) for c in diff.changes] == [("aws_instance_id", Action.REIMAGE, ("gpu-0001",))]


def test_json_carries_the_classification(cli, write) -> None:
    new = write(edited(ONPREM, ("slurm:\n", 'software: {nccl: "2.30.4"}\nslurm:\n')))
    result = cli("diff", ONPREM, new, "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert (data["old"], data["new"], data["disruptive"], data["largest"]) == (str(ONPREM), str(new), True, "DRAIN")
    [change] = data["changes"]
    assert change | {"hosts": sorted(change["hosts"])} == {
        "file": "group_vars", "key": "nccl_version", "old": "2.30.7", "new": "2.30.4", "action": "DRAIN",
        "hosts": sorted(GPUS), "daemon": None, "why": change["why"]}
    assert "libnccl" in change["why"]


# ---------------------------------------------------------------------------------------------------------------
# REV:PATH


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository whose first commit has the DGX example and a team blueprint including its site file, and
    whose second pins another driver; the current directory is its top."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLES / "shared-site", root / "teams")
    (root / "cluster.yaml").write_text(ONPREM.read_text())
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "cluster.yaml").write_text(edited(ONPREM, ("slurm:\n", f"software: {{nvidia_driver: {DRIVER}}}\nslurm:\n")))
    git(root, "commit", "-qam", "driver")
    monkeypatch.chdir(root)
    return root


def test_a_revision_is_read_from_git(cli, repo) -> None:
    result = cli("diff", "HEAD~1:cluster.yaml", "cluster.yaml")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("clusterforge diff: HEAD~1:cluster.yaml -> cluster.yaml")
    assert re.search(r"REBOOT +\d+ hosts [^\n]*\n(.*\n)*?    group_vars: nvidia_driver_version: ", result.stdout)
    assert cli("diff", "HEAD:cluster.yaml", "cluster.yaml").exit_code == 0
    # the site file the team blueprint includes is read at that revision too
    assert cli("diff", "HEAD~1:teams/team-nlp.yaml", "teams/team-nlp.yaml").exit_code == 0


@pytest.mark.parametrize(("argument", "message"), [
    ("--output=x:cluster.yaml", "the revision '--output=x' starts with '-'"),
    ("nosuch:cluster.yaml", "unknown revision 'nosuch'"),
    ("HEAD:missing.yaml", "no file 'missing.yaml' at 'HEAD'"),
    (":cluster.yaml", "the revision '' is empty"),
])
def test_bad_revisions_are_input_errors(cli, repo, argument: str, message: str) -> None:
    result = cli("diff", "--", argument, "cluster.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{argument}: {message}")
    assert "Traceback" not in result.output


def test_a_problem_at_a_revision_is_located_there(cli, repo) -> None:
    (repo / "cluster.yaml").write_text(ONPREM.read_text().replace("hardware: dgx-h100", "hardware: dgx-h999"))
    git(repo, "commit", "-qam", "typo")
    result = cli("diff", "HEAD:cluster.yaml", "HEAD~1:cluster.yaml")
    assert result.exit_code == 2
    assert re.match(r"HEAD:cluster\.yaml:9: pools\[0\]\.hardware: unknown hardware 'dgx-h999'", result.stderr)


def test_outside_a_repository_is_an_input_error(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    result = cli("diff", "HEAD:cluster.yaml", ONPREM)
    assert result.exit_code == 2 and "not in a git repository" in result.stderr


def test_a_revision_reads_only_the_blueprint_and_its_includes_into_a_private_folder(repo) -> None:
    from clusterforge.day2 import revisions

    with revisions.blueprint_path("HEAD~1:teams/team-nlp.yaml") as path:
        root = path.parents[1]
        assert (root.stat().st_mode & 0o777) == 0o700
        found = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        assert found == ["teams/site-dc1.yaml", "teams/team-nlp.yaml"], found  # not team-vision.yaml
    assert not root.exists()


def test_a_link_at_a_revision_is_refused(cli, repo) -> None:
    (repo / "teams" / "site-dc1.yaml").unlink()
    (repo / "teams" / "site-dc1.yaml").symlink_to("/etc/passwd")
    git(repo, "commit", "-qam", "link")
    result = cli("diff", "HEAD:teams/team-nlp.yaml", "HEAD~1:teams/team-nlp.yaml")
    assert result.exit_code == 2
    assert re.match(r"HEAD:teams/team-nlp\.yaml:\d+: !include 'site-dc1\.yaml': a symbolic link at 'HEAD'",
                    result.stderr), result.stderr


def test_a_render_directory_is_read_within_the_limits(cli, tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    assert cli("render", ONPREM, "-o", out).exit_code == 0
    monkeypatch.setenv("CLUSTERFORGE_MAX_NODES", "15")
    result = cli("diff", out, out)
    assert result.exit_code == 2
    assert re.match(rf"{re.escape(str(out))}/slurm/\w+\.conf:\d+: NodeName: .* over the limit of 15", result.stderr)
    monkeypatch.delenv("CLUSTERFORGE_MAX_NODES")
    (out / "slurm" / "gres.conf").unlink()
    (out / "slurm" / "gres.conf").symlink_to(out / "slurm" / "slurm.conf")
    result = cli("diff", out, ONPREM)
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_a_bad_blueprint_is_an_input_error(cli, write) -> None:
    bad = write(ONPREM.read_text().replace("count: 16, role: compute", "count: 16, role: computer"))
    result = cli("diff", ONPREM, bad)
    assert result.exit_code == 2
    assert re.match(r".*bp\.yaml:9: pools\[0\]\.role: ", result.stderr)
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------------------------------------------
# The classification's sources


def render(slurm_conf: str, group_vars: str = "") -> Rendered:
    inventory = ("all:\n  children:\n    slurm_controller: {hosts: {ctl-1: {}}}\n"
                 "    slurm_compute: {children: {pool_gpu: {}}}\n"
                 "    pool_gpu: {vars: {gpu_count: 8}, hosts: {gpu-1: {}, gpu-2: {rack: r1}}}\n")
    return Rendered.from_files({"inventory/hosts.yml": inventory, "inventory/group_vars/all.yml": group_vars,
                                "slurm/slurm.conf": slurm_conf})


def classify(key: str, old: str, new: str) -> set[tuple[Action, str | None]]:
    diff = compare(render(f"{key}={old}\n"), render(f"{key}={new}\n"))
    return {(c.action, c.daemon) for c in diff.changes}


def checkout_with(tmp_path: Path, restart_keys: list[str]) -> Path:
    """A copy of the checkout's slurm role settings whose slurm_restart_keys is `restart_keys`."""
    root = tmp_path / "checkout"
    for part in ("defaults", "vars"):
        (root / "roles" / "slurm" / part).mkdir(parents=True)
    (root / "site.yml").write_text("---\n")
    shutil.copy(project_root() / "roles/slurm/vars/main.yml", root / "roles/slurm/vars/main.yml")
    (root / "roles/slurm/defaults/main.yml").write_text(f"slurm_restart_keys: {json.dumps(restart_keys)}\n")
    return root


RESTART = {(Action.RESTART, "slurmctld"), (Action.RESTART, "slurmd")}
RECONFIGURE = {(Action.RECONFIGURE, "slurmctld")}
LOSE_JOBS = {(Action.LOSE_JOBS, "slurmctld"), (Action.LOSE_JOBS, "slurmd")}


@pytest.mark.parametrize(("key", "old", "new", "expected"), [
    # slurm.conf(5): "When changed, all job information (running and pending) will be lost"
    ("SelectType", "select/cons_tres", "select/linear", LOSE_JOBS),
    # "The only exception to this is when changing from the legacy cons_res to cons_tres."
    ("SelectType", "select/cons_res", "select/cons_tres", RESTART),
    ("SelectType", "cons_res", "select/cons_tres", RESTART),
    ("SelectType", "select/cons_tres", "select/cons_res", LOSE_JOBS),
    # "records of all jobs in any state may be lost"
    ("SwitchType", "switch/none", "switch/hpe_slingshot", LOSE_JOBS),
    # "Changes to this value will interrupt outstanding job steps and prevent them from completing."
    ("AuthType", "auth/munge", "auth/slurm", LOSE_JOBS),
    # `scontrol reconfigure` since 23.11: everything but listening ports and the authentication mechanism
    ("TopologyPlugin", "topology/tree", "topology/block", RECONFIGURE),
    ("AccountingStorageType", "accounting_storage/none", "accounting_storage/slurmdbd", RECONFIGURE),
    ("JobAcctGatherType", "jobacct_gather/none", "jobacct_gather/cgroup", RECONFIGURE),
    ("ProctrackType", "proctrack/cgroup", "proctrack/linuxproc", RECONFIGURE),
    ("SchedulerType", "sched/backfill", "sched/builtin", RECONFIGURE),
    # "Changes to TCP listening settings will require a daemon restart."
    ("SlurmctldPort", "6817", "6820", RESTART),
    ("SlurmdPort", "6818", "6821", RESTART),
    ("CredType", "cred/munge", "cred/slurm", RESTART),
])
def test_slurm_conf_keys_take_what_slurm_24_11_documents(key: str, old: str, new: str,
                                                          expected: set[tuple[Action, str | None]]) -> None:
    assert classify(key, old, new) == expected


def test_every_classification_quotes_its_source() -> None:
    diff = compare(render("SelectType=select/cons_tres\n"), render("SelectType=select/linear\n"))
    assert all("slurm.conf(5)" in c.why and "all job information (running and pending) will be lost" in c.why
               for c in diff.changes)
    assert diff.loses_jobs and diff.largest == Action.LOSE_JOBS > Action.REIMAGE


def test_a_second_slurmctld_host_is_a_reconfigure() -> None:
    old = render("SlurmctldHost=ctl-1\n")
    new = render("SlurmctldHost=ctl-1\nSlurmctldHost=ctl-2\n")
    assert [(c.key, c.action, c.daemon) for c in compare(old, new).changes] == [
        ("SlurmctldHost#2", Action.RECONFIGURE, "slurmctld")]


def test_the_slurm_role_restarts_exactly_the_keys_above_reconfigure(tmp_path, monkeypatch) -> None:
    from clusterforge.catalog.slurm_changes import changes as table

    role = read_slurm_role(project_root())
    above = {key.lower() for key, row in table().keys.items() if row.action != "reconfigure"}
    assert role.restart_keys == above  # the role's handlers do what the diff says
    # a checkout whose role restarts for another key: the diff says what that role does
    monkeypatch.setenv("CLUSTERFORGE_ANSIBLE_DIR", str(checkout_with(tmp_path, ["SchedulerType"])))
    assert classify("SchedulerType", "sched/backfill", "sched/builtin") == RESTART
    assert classify("SelectType", "select/cons_tres", "select/linear") == LOSE_JOBS


def test_a_slurm_conf_change_in_a_render_directory_is_classified(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    old, new = tmp_path / "old", tmp_path / "new"
    assert cli("render", ONPREM, "-o", old).exit_code == 0
    shutil.copytree(old, new)
    conf = new / "slurm" / "slurm.conf"
    conf.write_text(conf.read_text().replace("SelectType=select/cons_tres", "SelectType=select/linear"))
    result = cli("diff", old, new)
    assert result.exit_code == 1, result.output
    assert re.search(r"LOSE_JOBS +.*\n(.*\n)*?    slurm.conf: SelectType: select/cons_tres -> select/linear\n",
                     result.stdout)
    conf.write_text((old / "slurm" / "slurm.conf").read_text().replace("SlurmctldPort=6817", "SlurmctldPort=6820"))
    result = cli("diff", old, new)
    assert result.exit_code == 0, result.output
    assert re.search(r"RESTART +.*\n(.*\n)*?    slurm.conf: SlurmctldPort: 6817 -> 6820\n", result.stdout)


def test_a_nodes_own_line_is_a_reconfigure() -> None:
    # slurm.conf(5) NODE CONFIGURATION: "Changes in node configuration (e.g. adding nodes, changing their
    # processor count, etc.) require restarting or reconfiguring all slurmctld and slurmd daemons."
    old = render("NodeName=gpu-[1-2] CPUs=8 RealMemory=1000 Gres=gpu:h100:8\n")
    new = render("NodeName=gpu-1 CPUs=8 RealMemory=1000 Gres=gpu:h100:8\n"
                 "NodeName=gpu-2 CPUs=16 RealMemory=2000 Gres=gpu:h100:8\n")
    assert [(c.key, c.action, c.hosts, c.daemon) for c in compare(old, new).changes] == [
        ("NodeName=gpu-2", Action.RECONFIGURE, ("ctl-1",), "slurmctld")]


def test_a_slurmd_spool_dir_change_needs_idle_compute_nodes() -> None:
    diff = compare(render("SlurmdSpoolDir=/var/spool/slurmd\n"), render("SlurmdSpoolDir=/local/slurmd\n"))
    assert [(c.action, set(c.hosts), c.daemon) for c in diff.changes] == [
        (Action.DRAIN, {"gpu-1", "gpu-2"}, "slurmd")]


def test_an_unknown_group_var_needs_idle_nodes() -> None:
    diff = compare(render("", "foo_version: 1\n"), render("", "foo_version: 2\n"))
    assert [(c.action, c.why, set(c.hosts)) for c in diff.changes] == [
        (Action.DRAIN, "not classified: treated as needing idle nodes", {"ctl-1", "gpu-1", "gpu-2"})]


def test_a_moved_server_is_reimaged() -> None:
    old = render("")
    new = Rendered.from_files({**old.files, "inventory/hosts.yml": old.files["inventory/hosts.yml"].replace(
        "rack: r1", "rack: r2")})
    diff = compare(old, new)
    assert diff.changed == ("gpu-2",) and diff.action_for("gpu-2") == Action.REIMAGE
    assert diff.action_for("gpu-1") == Action.NONE


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_rendered_group_var_is_classified(example: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    keys = Rendered.from_blueprint(example, PolicyInputs()).group_vars
    assert [key for key in keys if group_var_effects(key) == (UNCLASSIFIED,)] == []


def test_stack_config_and_unknown_files() -> None:
    def with_files(stack: str, extra: str) -> Rendered:
        base = render("")
        return Rendered.from_files({**base.files, "pulumi/Pulumi.c.yaml": f"# generated by clusterforge\n{stack}",
                                    "other/notes.txt": f"# generated by clusterforge from x.yaml\n{extra}\n"})

    old = with_files("config: {aws:region: us-east-1, c:blueprint: a.yaml, c:controllerInstanceType: m7i.4xlarge, "
                     "c:kmsKeyArn: k1, c:unknown: 1}\n", "a")
    new = with_files("config: {aws:region: us-east-2, c:blueprint: b.yaml, c:controllerInstanceType: m7i.8xlarge, "
                     "c:kmsKeyArn: k2, c:unknown: 2}\n", "b")
    assert [(c.file, c.key, c.action) for c in compare(old, new).changes] == [
        ("pulumi", "aws:region", Action.NONE), ("pulumi", "c:controllerInstanceType", Action.REIMAGE),
        ("pulumi", "c:kmsKeyArn", Action.LOSE_DATA), ("pulumi", "c:unknown", Action.NONE),
        ("other/notes.txt", "(lines)", Action.DRAIN)]
