"""ansible-runner around site.yml: one place that knows the project layout, environment and command line."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.files.atomic import write_text
from clusterforge.provision.interrupt import poll_often, stopped_by_signals
from clusterforge.provision.summary import RunSummary

EventHandler = Callable[[Mapping[str, Any]], None]


@dataclass
class Run:
    """What to run: site.yml (or another playbook of the project) against inventories, with options."""

    project: Path
    inventories: Sequence[Path]
    private_dir: Path
    playbook: str = "site.yml"
    limit: str | None = None
    check: bool = False
    diff: bool = False  # show file changes; tasks with no_log (the munge key) show none
    tags: str | None = None
    skip_tags: str | None = None
    extra_vars_files: Sequence[Path] = ()
    extra_vars: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    forks: int | None = None
    fast: bool = False  # Mitogen's strategy: same roles and modules, several times less overhead per task
    list_hosts: bool = False  # only name the hosts the plays would run on (after the limit); contact none

    def cmdline(self) -> list[str]:
        args: list[str] = []
        for path in self.extra_vars_files:
            args += ["-e", f"@{path}"]
        if self.extra_vars:
            args += ["-e", json.dumps(self.extra_vars, sort_keys=True)]
        if self.check:
            args.append("--check")
        if self.diff:
            args.append("--diff")
        if self.tags:
            args += ["--tags", self.tags]
        if self.skip_tags:
            args += ["--skip-tags", self.skip_tags]
        if self.forks:
            args += ["--forks", str(self.forks)]
        if self.list_hosts:
            args.append("--list-hosts")
        return args


@dataclass(frozen=True)
class Outcome:
    summary: RunSummary
    rc: int
    stdout: str

    def problem(self, what: str) -> Problem:
        """Why the run failed: the first error of each failed host, or the end of the output when the playbook
        stopped before any host ran (a syntax error, a missing variable)."""
        errors = [f"{h.host}: {h.errors[0]}" for h in self.summary.hosts.values() if h.errors]
        if not errors:
            errors = [line for line in self.stdout.strip().splitlines() if line.strip()][-6:]
        return Problem(f"{what} failed: " + " | ".join(errors), "site.yml")


def _binaries() -> Path:
    """The directory of the running interpreter's ansible-playbook (a venv need not be on PATH)."""
    here = Path(sys.executable).parent
    if (here / "ansible-playbook").exists():
        return here
    found = shutil.which("ansible-playbook")
    if found is None:
        raise ClusterforgeError(Problem("ansible-playbook not found", "ansible",
                                        hint="pip install 'clusterforge[ansible]' (ansible-core, ansible-runner)"))
    return Path(found).parent


def mitogen_env() -> dict[str, str]:
    """Environment that makes ansible-playbook use Mitogen's linear strategy (the `ansible` extra installs it)."""
    try:
        import ansible_mitogen  # type: ignore[import-untyped]
    except ImportError:
        raise ClusterforgeError(Problem("mitogen is not installed", "ansible",
                                        hint="pip install 'clusterforge[ansible]', or run without --fast")) from None
    plugins = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"
    return {"ANSIBLE_STRATEGY_PLUGINS": str(plugins), "ANSIBLE_STRATEGY": "mitogen_linear"}


def base_env(project: Path) -> dict[str, str]:
    """What every Ansible run of the project gets: its ansible.cfg, the roles' collection (clusterforge.cluster,
    whose plugins the roles name), no colour, and this interpreter's Ansible."""
    from clusterforge.files.checkout import ansible_environment

    # ansible-runner turns host key checking off unless told otherwise; ansible.cfg's setting stands.
    return {"ANSIBLE_CONFIG": str(project / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1", **ansible_environment(project),
            "ANSIBLE_HOST_KEY_CHECKING": "True", "PATH": f"{_binaries()}{os.pathsep}{os.environ.get('PATH', '')}"}


def execute(run: Run, on_event: EventHandler | None = None) -> Outcome:
    """Run the playbook to the end; failed hosts are in the summary, the rest of the cluster finishes."""
    try:
        import ansible_runner  # type: ignore[import-untyped]
    except ImportError:
        raise ClusterforgeError(Problem("ansible-runner is not installed", "ansible",
                                        hint="pip install 'clusterforge[ansible]'")) from None
    summary = RunSummary()

    def handle(event: dict[str, Any]) -> bool:
        stop.seen(event)
        summary.add_event(event)
        if on_event is not None:
            on_event(event)
        return False  # events are folded in memory; nothing per event is written to disk

    run.private_dir.mkdir(parents=True, exist_ok=True)
    poll_often(run.private_dir)
    strategy = mitogen_env() if run.fast else {}
    env = {**base_env(run.project), **strategy, **run.env}
    with stopped_by_signals() as stop:  # Ctrl-C stops the playbook, then ends this command (exit 130)
        try:
            result = ansible_runner.run(
                private_data_dir=str(run.private_dir), project_dir=str(run.project), playbook=run.playbook,
                inventory=[str(i) for i in run.inventories], limit=run.limit, cmdline=shlex.join(run.cmdline()),
                envvars=env, quiet=True, event_handler=handle, rotate_artifacts=3, suppress_env_files=True,
                # Facts are cached where ansible.cfg (or run.env) says, shared with plain ansible-playbook runs;
                # any type but "jsonfile" keeps ansible-runner from moving the cache into its per-run artifacts.
                fact_cache_type="ansible.cfg",
                cancel_callback=stop,  # instead of ansible-runner's own signal handlers (provision.interrupt)
            )
        finally:  # also after a failure or Ctrl-C
            forget_environment(run.private_dir / "artifacts")
    stdout = ""
    if result.stdout is not None:
        stdout = result.stdout.read()
    return Outcome(summary, int(result.rc or 0), stdout)


def forget_environment(artifacts: Path) -> None:
    """Drop the environment ansible-runner records in each run's `command` file: it is this process's whole
    environment, cloud credentials and tokens included. The command line and directory stay."""
    for record in artifacts.glob("*/command"):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("env"), dict):
            data["env"] = "not kept: it held the caller's environment, credentials included"
            write_text(record, json.dumps(data))
