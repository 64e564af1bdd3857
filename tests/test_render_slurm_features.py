"""Render of the production SLURM features: HA controllers, accounting, QOS preemption, configless, MPI,
prolog/epilog, job containment, containers and pass-through settings, in slurm.conf, cgroup.conf, plugstack.conf,
job_container.conf, the inventory and group_vars."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterforge.blueprint.load import load_text
from clusterforge.catalog.slurm_parameters import for_version
from clusterforge.core.errors import ClusterforgeError
from clusterforge.plan import build_plan
from clusterforge.render import RenderContext
from clusterforge.render.conf_settings import merge
from clusterforge.render.yamlout import load
from tests.policies.builders import design

CTL = {"name": "ctl", "hardware": "cpu-1u", "count": 2, "role": "controller"}
GPU = {"name": "gpu", "hardware": "dgx-h100", "count": 4, "partition": "train"}
FULL = {
    "state_save_location": "/shared/slurm/state",
    "qos": [{"name": "low", "priority": 0},
            {"name": "high", "priority": 1000, "preempt": ["low"], "max_wall": "1-00:00:00",
             "grp_tres": "gres/gpu=64"}],
    "accounts": [{"name": "physics", "fairshare": 60, "qos": ["normal", "low", "high"], "default_qos": "normal",
                  "users": ["alice", "carol"]},
                 {"name": "chemistry", "description": "Chemistry lab", "users": ["bob"]}],
    "priority_weights": {"age": 500},
    "settings": {"SchedulerParameters": "bf_continue,bf_window=4320", "schedulertype": "sched/builtin",
                 "SlurmctldParameters": "idle_on_node_suspend,enable_configless", "PrologFlags": "X11",
                 "SlurmctldTimeout": 10},
    "cgroup_settings": {"AllowedRAMSpace": "98", "constraincores": "YES"},
    "prolog_epilog": True,
    "pam_slurm_adopt": True,
    "job_container_tmpfs": {"base_path": "/local/slurm-tmp"},
    "containers": True,
}


def blueprint(pools: list[dict] | None = None, **slurm: Any) -> dict:
    data = design(pools or [CTL, GPU], storage={"shared": {"mount": "/shared", "source": "nfs-01:/export/shared"}})
    data["slurm"] |= slurm
    return data


def rendered(cli, write, tmp_path: Path, data: dict) -> Path:
    out = tmp_path / "out"
    result = cli("render", write(yaml.safe_dump(data, sort_keys=False)), "-o", out)
    assert result.exit_code == 0, result.output
    return out


def pairs(path: Path) -> list[tuple[str, str]]:
    """The `Key=value` lines of a SLURM file (NodeName and PartitionName lines left out)."""
    out = []
    for line in path.read_text().splitlines():
        if line and not line.startswith("#") and " " not in line:
            key, _, value = line.partition("=")
            out.append((key, value))
    return out


def group_vars(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = load((out / "inventory" / "group_vars" / "all.yml").read_text())
    return data


def test_everything_at_once(cli, write, tmp_path) -> None:
    out = rendered(cli, write, tmp_path, blueprint(**FULL))
    conf = pairs(out / "slurm" / "slurm.conf")
    settings = dict(conf)
    assert [v for k, v in conf if k == "SlurmctldHost"] == ["ctl-0001", "ctl-0002"]  # primary first
    keys = [k.lower() for k, _ in conf if k != "SlurmctldHost"]
    assert len(keys) == len(set(keys)), "a key is written twice"
    known = for_version("24.11")
    assert known is not None
    assert [k for k, _ in conf if known.canonical("slurm_conf", k) is None] == []
    assert settings["StateSaveLocation"] == "/shared/slurm/state"
    # the blueprint's list items are added to the ones clusterforge needs, not put in their place
    assert settings["SlurmctldParameters"] == "enable_configless,idle_on_node_suspend"
    assert settings["PrologFlags"] == "Contain,X11"
    assert settings["SchedulerType"] == "sched/builtin"  # overridden in place, whatever the case of the key
    assert [k for k, _ in conf][-1:] == ["SlurmctldTimeout"]  # new keys are appended
    # ... and scheduler options join the recovery ones clusterforge writes
    assert settings["SchedulerParameters"] == "nohold_on_prolog_fail,sched_interval=10,bf_continue,bf_window=4320"
    assert settings["SlurmctldTimeout"] == "10"
    assert {k: settings[k] for k in ("AccountingStorageType", "AccountingStorageHost", "AccountingStorageEnforce",
                                     "JobAcctGatherType", "PriorityType", "PriorityWeightAge", "PreemptType",
                                     "PreemptMode", "MpiDefault", "Prolog", "Epilog", "JobContainerType",
                                     "MailProg", "SlurmctldPidFile", "SlurmdPidFile")} == {
        "AccountingStorageType": "accounting_storage/slurmdbd", "AccountingStorageHost": "ctl-0001",
        "AccountingStorageEnforce": "associations,limits,qos", "JobAcctGatherType": "jobacct_gather/cgroup",
        "PriorityType": "priority/multifactor", "PriorityWeightAge": "500", "PreemptType": "preempt/qos",
        "PreemptMode": "REQUEUE", "MpiDefault": "pmix", "Prolog": "/etc/slurm/prolog.d/*",
        "Epilog": "/etc/slurm/epilog.d/*", "JobContainerType": "job_container/tmpfs", "MailProg": "/bin/true",
        "SlurmctldPidFile": "/run/slurmctld/slurmctld.pid", "SlurmdPidFile": "/run/slurm/slurmd.pid"}
    cgroup = dict(pairs(out / "slurm" / "cgroup.conf"))
    assert cgroup["AllowedRAMSpace"] == "98" and cgroup["ConstrainCores"] == "YES"  # in place, whatever the case
    assert (out / "slurm" / "plugstack.conf").read_text().splitlines()[-1] == \
        "required /usr/local/lib/slurm/spank_pyxis.so"
    assert (out / "slurm" / "job_container.conf").read_text().splitlines()[1:] == [
        "BasePath=/local/slurm-tmp AutoBasePath=true"]
    hosts = load((out / "inventory" / "hosts.yml").read_text())["all"]["children"]
    assert list(hosts["slurm_controller"]["hosts"]) == ["ctl-0001", "ctl-0002"]


def test_group_vars_shapes(cli, write, tmp_path) -> None:
    data = group_vars(rendered(cli, write, tmp_path, blueprint(**FULL)))
    assert {k: data[k] for k in (
        "slurm_version", "slurm_controller_host", "slurm_state_save_location",
        "slurm_configless", "slurm_accounting_enabled", "slurm_dbd_host", "slurm_dbd_database",
        "slurm_prolog_epilog", "slurm_pam_slurm_adopt", "slurm_mpi", "containers_enabled",
        "common_shared_enabled", "common_shared_mount", "common_shared_source", "common_shared_options")} == {
        "slurm_version": "24.11", "slurm_controller_host": "ctl-0001",
        "slurm_state_save_location": "/shared/slurm/state",
        "slurm_configless": True, "slurm_accounting_enabled": True, "slurm_dbd_host": "ctl-0001",
        "slurm_dbd_database": "slurm_acct_db", "slurm_prolog_epilog": True, "slurm_pam_slurm_adopt": True,
        "slurm_mpi": "pmix", "containers_enabled": True, "common_shared_enabled": True,
        "common_shared_mount": "/shared", "common_shared_source": "nfs-01:/export/shared",
        "common_shared_options": "defaults,_netdev,nosuid,nodev"}
    assert data["slurm_qos"] == [
        {"name": "low", "options": {"Priority": "0"}},
        {"name": "high", "options": {"Priority": "1000", "Preempt": "low", "MaxWall": "1-00:00:00",
                                     "GrpTRES": "gres/gpu=64"}}]
    assert data["slurm_accounts"] == [
        {"name": "physics", "options": {"Description": "physics", "Fairshare": "60", "QOS": "normal,low,high",
                                        "DefaultQOS": "normal"}, "users": ["alice", "carol"]},
        {"name": "chemistry", "options": {"Description": "Chemistry lab"}, "users": ["bob"]}]
    text = (tmp_path / "out" / "inventory" / "group_vars" / "all.yml").read_text()
    assert "- name: !unsafe high\n" in text and "    Preempt: !unsafe low\n" in text  # data, never a template


def test_without_accounting(cli, write, tmp_path) -> None:
    out = rendered(cli, write, tmp_path, blueprint([{**CTL, "count": 1}, GPU], accounting={"enabled": False}))
    settings = dict(pairs(out / "slurm" / "slurm.conf"))
    # gathered but not stored, or fair-share and age weights without slurmdbd, is an error in slurmctld's log
    assert (settings["AccountingStorageType"], settings["JobAcctGatherType"]) == ("accounting_storage/none",
                                                                                  "jobacct_gather/none")
    assert not [k for k in settings if k.startswith(("Priority", "Preempt", "AccountingStorageEnforce",
                                                     "AccountingStorageHost"))]
    data = group_vars(out)
    assert (data["slurm_accounting_enabled"], data["slurm_dbd_host"], data["slurm_qos"]) == (False, "", [])


def test_defaults_no_accounts_no_enforcement(cli, write, tmp_path) -> None:
    out = rendered(cli, write, tmp_path, blueprint([{**CTL, "count": 1}, GPU], qos=FULL["qos"]))
    settings = dict(pairs(out / "slurm" / "slurm.conf"))
    assert "AccountingStorageEnforce" not in settings  # jobs of users no account lists still run
    assert settings["PreemptType"] == "preempt/qos"
    assert [k for k, _ in pairs(out / "slurm" / "slurm.conf")].count("SlurmctldHost") == 1
    assert "required" not in (out / "slurm" / "plugstack.conf").read_text()  # comments only
    assert not (out / "slurm" / "job_container.conf").exists()
    assert "PrologFlags" not in settings and "JobContainerType" not in settings
    assert settings["Prolog"] == "/etc/slurm/prolog.d/*"  # the health check's prolog (operations.health.prolog)
    data = group_vars(out)
    assert (data["slurm_controller_host"], data["common_shared_enabled"]) == ("ctl-0001", True)


@pytest.mark.parametrize(("slurm", "expect"), [
    ({"preempt_mode": "cancel"}, {"PreemptType": "preempt/qos", "PreemptMode": "CANCEL", "MpiDefault": "pmix",
                                  "SlurmctldParameters": "enable_configless"}),
    ({"preempt_mode": "off", "qos": [{"name": "low"}]}, {"MpiDefault": "pmix",
                                                         "SlurmctldParameters": "enable_configless"}),
    ({"qos": [{"name": "low"}, {"name": "high", "priority": 5}]}, {"MpiDefault": "pmix",
                                                                   "SlurmctldParameters": "enable_configless"}),
    ({"configless": False, "mpi": "none"}, {"PreemptType": "preempt/qos", "PreemptMode": "REQUEUE",
                                            "MpiDefault": "none"}),
    ({"pam_slurm_adopt": True}, {"PreemptType": "preempt/qos", "PreemptMode": "REQUEUE", "MpiDefault": "pmix",
                                 "SlurmctldParameters": "enable_configless", "PrologFlags": "Contain"}),
])
def test_modes(cli, write, tmp_path, slurm: dict, expect: dict) -> None:
    data = blueprint([{**CTL, "count": 1}, GPU], **{"qos": FULL["qos"], **slurm})
    settings = dict(pairs(rendered(cli, write, tmp_path, data) / "slurm" / "slurm.conf"))
    keys = ("PreemptType", "PreemptMode", "MpiDefault", "SlurmctldParameters", "PrologFlags")
    assert {k: settings[k] for k in keys if k in settings} == expect


def test_slurmdbd_on_a_pool_of_its_own(cli, write, tmp_path) -> None:
    pools = [{**CTL, "count": 1}, {"name": "dbd", "hardware": "cpu-1u", "count": 1, "role": "storage"}, GPU]
    out = rendered(cli, write, tmp_path, blueprint(pools, accounting={"pool": "dbd"}))
    assert dict(pairs(out / "slurm" / "slurm.conf"))["AccountingStorageHost"] == "dbd-0001"
    assert group_vars(out)["slurm_dbd_host"] == "dbd-0001"


def context(**slurm: Any) -> RenderContext:
    loaded = load_text(yaml.safe_dump(blueprint([{**CTL, "count": 1}, GPU], **slurm)), "bp.yaml")
    return RenderContext(loaded, build_plan(loaded.cluster, loaded.catalog), Path("."))


def test_merge_overrides_in_place_and_appends() -> None:
    ctx = context()
    merged = merge(ctx, [("A", "1"), ("SlurmctldParameters", "enable_configless")],
                   {"a": "2", "slurmctldparameters": "ENABLE_CONFIGLESS,x", "B": "k=v"}, "settings")
    assert merged == [("A", "2"), ("SlurmctldParameters", "enable_configless,x"), ("B", "k=v")]


@pytest.mark.parametrize(("key", "value"), [("NodeName", "evil"), ("include", "/etc/passwd"),
                                            ("StateSaveLocation", "/tmp"), ("X", "1\nSlurmctldHost=evil"),
                                            ("X", "a b"), ("X Y", "1"), ("X", "")])
def test_merge_refuses_what_the_model_refuses(key: str, value: str) -> None:
    # a blueprint past the model (a frozen pydantic model copied with bad settings) is still refused
    ctx = context()
    cluster = ctx.loaded.cluster
    slurm = cluster.slurm.model_copy(update={"settings": {key: value}})
    loaded = dataclasses.replace(ctx.loaded, cluster=cluster.model_copy(update={"slurm": slurm}))
    from clusterforge.render import slurm_conf

    with pytest.raises(ClusterforgeError) as error:
        slurm_conf.render(dataclasses.replace(ctx, loaded=loaded))
    assert error.value.problems[0].path.startswith("slurm.settings")
    assert "\n" not in error.value.problems[0].render()
