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

from clusterforge.errors import ClusterforgeError, Problem
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
    tags: str | None = None
    skip_tags: str | None = None
    extra_vars_files: Sequence[Path] = ()
    extra_vars: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    forks: int | None = None

    def cmdline(self) -> list[str]:
        args: list[str] = []
        for path in self.extra_vars_files:
            args += ["-e", f"@{path}"]
        if self.extra_vars:
            args += ["-e", json.dumps(self.extra_vars, sort_keys=True)]
        if self.check:
            args.append("--check")
        if self.tags:
            args += ["--tags", self.tags]
        if self.skip_tags:
            args += ["--skip-tags", self.skip_tags]
        if self.forks:
            args += ["--forks", str(self.forks)]
        return args


@dataclass(frozen=True)
class Outcome:
    summary: RunSummary
    rc: int
    stdout: str


def _binaries() -> Path:
    """The directory of the running interpreter's ansible-playbook (a venv need not be on PATH)."""
    here = Path(sys.executable).parent
    if (here / "ansible-playbook").exists():
        return here
    found = shutil.which("ansible-playbook")
    if found is None:
        raise ClusterforgeError(Problem("ansible-playbook not found", "ansible",
                                        hint="pip install 'clusterforge[ansible]' (ansible-core, ansible, ansible-runner)"))
    return Path(found).parent


def execute(run: Run, on_event: EventHandler | None = None) -> Outcome:
    """Run the playbook to the end; failed hosts are in the summary, the rest of the cluster finishes."""
    try:
        import ansible_runner  # type: ignore[import-untyped]
    except ImportError:
        raise ClusterforgeError(Problem("ansible-runner is not installed", "ansible",
                                        hint="pip install 'clusterforge[ansible]'")) from None
    binaries = _binaries()
    summary = RunSummary()

    def handle(event: dict[str, Any]) -> bool:
        summary.add_event(event)
        if on_event is not None:
            on_event(event)
        return False  # events are folded in memory; nothing per event is written to disk

    run.private_dir.mkdir(parents=True, exist_ok=True)
    env = {"ANSIBLE_CONFIG": str(run.project / "ansible.cfg"), "ANSIBLE_FORCE_COLOR": "0",
           "PATH": f"{binaries}{os.pathsep}{os.environ.get('PATH', '')}", **run.env}
    result = ansible_runner.run(
        private_data_dir=str(run.private_dir), project_dir=str(run.project), playbook=run.playbook,
        inventory=[str(i) for i in run.inventories], limit=run.limit, cmdline=shlex.join(run.cmdline()),
        envvars=env, quiet=True, event_handler=handle, rotate_artifacts=3,
        binary=str(binaries / "ansible-playbook"), suppress_env_files=True,
    )
    stdout = ""
    if result.stdout is not None:
        stdout = result.stdout.read()
    return Outcome(summary, int(result.rc or 0), stdout)
