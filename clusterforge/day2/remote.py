"""How a day-two change reaches the cluster: commands on one host, and site.yml on a set of hosts.

The rolling update drives SLURM from its controller (`scontrol`, `squeue`) and runs the health check on the
nodes it changed. On a real cluster both go through Ansible with the rendered inventory, so whatever reaches
the hosts for `provision` (SSH settings, bastions, become) reaches them here; the lab passes its own SSH.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from clusterforge.core.errors import ClusterforgeError, Problem
from clusterforge.provision.runner import EventHandler, Outcome, Run, base_env, execute


@dataclass(frozen=True)
class Result:
    rc: int
    stdout: str
    stderr: str = ""


class Remote(Protocol):
    def run(self, host: str, argv: Sequence[str], timeout: float = 60) -> Result:
        """Run argv on host (as root); never raises for a non-zero exit: the caller decides."""


class Apply(Protocol):
    def __call__(self, hosts: Sequence[str], extra_vars: dict[str, Any]) -> Outcome:
        """Run site.yml on exactly these hosts."""


@dataclass
class AnsibleTarget:
    """Where Ansible finds the cluster: the project, the rendered inventory, the extra vars and environment."""

    project: Path
    inventory: Path
    private_dir: Path
    extra_vars_files: Sequence[Path] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class AnsibleRemote(AnsibleTarget):
    """Commands through ansible-runner's ad-hoc `command` module, with the inventory and extra vars site.yml gets."""

    become: bool = True  # as site.yml runs (become: true)

    def run(self, host: str, argv: Sequence[str], timeout: float = 60) -> Result:
        try:
            import ansible_runner  # type: ignore[import-untyped]
        except ImportError:
            raise ClusterforgeError(Problem("ansible-runner is not installed", "ansible",
                                            hint="pip install 'clusterforge[ansible]'")) from None
        found: list[Result] = []

        def handle(event: dict[str, Any]) -> bool:
            data = event.get("event_data") or {}
            if event.get("event") in ("runner_on_ok", "runner_on_failed", "runner_on_unreachable"):
                res = data.get("res") or {}
                rc = int(res.get("rc", 255 if event["event"] != "runner_on_ok" else 0))
                found.append(Result(rc, str(res.get("stdout", "")), str(res.get("stderr") or res.get("msg", ""))))
            return False

        extra = " ".join(f"-e @{shlex.quote(str(p))}" for p in self.extra_vars_files)
        self.private_dir.mkdir(parents=True, exist_ok=True)
        outcome = ansible_runner.run(
            private_data_dir=str(self.private_dir), host_pattern=host, module="ansible.builtin.command",
            module_args=json.dumps({"argv": list(argv)}), inventory=str(self.inventory), quiet=True,
            cmdline=f"{'--become ' if self.become else ''}--timeout {int(timeout)} {extra}".strip(),
            event_handler=handle,
            envvars={**base_env(self.project), **self.env},
            rotate_artifacts=3, suppress_env_files=True)
        if found:
            return found[0]
        output = outcome.stdout.read() if outcome.stdout is not None else ""
        return Result(255, "", f"no answer from {host}: {output.strip()[-300:]}")


@dataclass
class SiteApply(AnsibleTarget):
    """site.yml limited to a set of hosts, with the options `provision` would use."""

    fast: bool = False
    on_event: EventHandler | None = None

    def __call__(self, hosts: Sequence[str], extra_vars: dict[str, Any]) -> Outcome:
        return execute(Run(project=self.project, inventories=[self.inventory], private_dir=self.private_dir,
                           limit=",".join(hosts), extra_vars_files=self.extra_vars_files, extra_vars=extra_vars,
                           env=self.env, fast=self.fast), self.on_event)
