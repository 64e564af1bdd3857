"""Bare-metal servers as a power-save provider: SLURM powers an on-prem pool's idle servers off, and on again for
a job, through each server's BMC in the protocol the BMC document names for it (Redfish or IPMI: clusterforge.bmc,
the parts `clusterforge power` uses).

A server is not made or destroyed, only powered: a node's "instance" is its server (id and name the node's), live
while its BMC says On; launch powers servers on, terminate powers them off (ForceOff: SLURM suspends a node only
when it is idle, and the image is stateless). Its address is its name, which the site's DNS resolves as for every
on-prem node. Where each node's BMC answers is the BMC document (docs/bare-metal.md), installed by the slurm role
beside the power-save file; the login is a file only SlurmUser can read, never the document or the blueprint.

What this costs the BMCs, at 12,500 servers: resume and suspend ask only the servers slurmctld names, and each
of them once: a server is powered in place (`in_place`), so the programs skip the `find` a cloud needs and the
power-on or -off itself reads the server first (the read, then the reset and the reads until it took: three or
four requests each, `fleet.DEFAULT_CONCURRENCY` at once; a server already in the state asked gets the read only).
Reconcile runs every minute and must not read 12,500 BMCs a minute, so each pass reads a slice of at most `SWEEP`
servers, in turn: a full round over 12,500 takes 49 passes, about 4 requests a second. A server left On while
slurmctld holds it powered down (a lost suspend) is found and powered off within that round; a server that
remediation gave up on is power-cycled through the same round.

How long a call can take, whatever the BMCs do (a silent one, one that drips its answer, one that never ends it):
each ask is at most `TIMEOUT_S` whole (clusterforge.bmc.transport), so a node's asking ends within `fleet.bound_s`'s
figure. For a resume of up to `fleet.DEFAULT_CONCURRENCY` nodes that is `RESUME_BOUND_S`: the power-on with its
settling, and the power-off of an all-or-nothing launch that fell short, well inside slurmctld's ResumeTimeout
(1,800 s by default with power saving); a suspend is a power-off, `SUSPEND_BOUND_S`. Only the nodes whose BMC failed
are left without a server: resume marks them DOWN with the reason. A BMC's answer is read at most 1 MiB and never
leaves its own host, so one compromised BMC cannot make this controller power off another server.

This module is copied to controllers (`clusterforge.powersave.payload`) with clusterforge.bmc and
what it imports, and nothing else of this target's package.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from clusterforge.bmc import credentials as bmc_credentials
from clusterforge.bmc import fleet, hosts
from clusterforge.bmc.interface import NodeBmc
from clusterforge.core import hostlist
from clusterforge.powersave.config import NodeGroup, PowerSaveConfig
from clusterforge.powersave.provider import Instance, Launch

BMCS_FILE = "/etc/slurm/clusterforge-bmcs.yaml"  # the BMC document, as the slurm role installs it
CREDENTIALS_FILE = "/etc/slurm/clusterforge-bmc.credentials"  # YAML username/password, 0600, SlurmUser's
SWEEP = 256  # servers reconcile reads per pass
PASS_S = 60  # the reconcile timer's period: which slice a pass reads follows the clock
SETTLE_S = 120.0  # how long a program waits for a BMC to report the state it asked for
TIMEOUT_S = 20.0  # one ask of one BMC, whole (the service root, the system, the reset)
_ONE_WAVE = fleet.DEFAULT_CONCURRENCY
RESUME_BOUND_S = round(2 * fleet.bound_s(_ONE_WAVE, timeout_s=TIMEOUT_S, settle_s=SETTLE_S))  # on, give-back
SUSPEND_BOUND_S = round(fleet.bound_s(_ONE_WAVE, timeout_s=TIMEOUT_S, settle_s=SETTLE_S))
log = logging.getLogger("clusterforge.powersave")


def _path(variable: str, default: str) -> Path:
    return Path(os.environ.get(variable) or default)


class BmcProvider:
    """The servers of on-prem pools with a `bmc:`, through their BMCs (each in the protocol its BMC speaks)."""

    OS_PACKAGES = ("python3-sushy", "python3-pyghmi", "python3-yaml")  # Redfish's and IPMI's clients, the document
    CONTROLLER_FILES = (Path(BMCS_FILE).name, Path(CREDENTIALS_FILE).name)

    def __init__(self, config: PowerSaveConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.bmcs_file = _path("CLUSTERFORGE_BMCS", BMCS_FILE)
        self.credentials_file = _path("CLUSTERFORGE_BMC_CREDENTIALS", CREDENTIALS_FILE)
        self._targets: dict[str, NodeBmc] | None = None
        self._logins: bmc_credentials.Logins | None = None

    def _bmcs(self) -> dict[str, NodeBmc]:
        if self._targets is None:
            self._targets = hosts.load(self.bmcs_file)
            self._logins = bmc_credentials.from_file(self.credentials_file)
        return self._targets

    def _run(self, nodes: Sequence[str], action: str) -> fleet.FleetResult:
        """`action` on the nodes' BMCs; the nodes the document lacks fail with that reason, the others run."""
        known = self._bmcs()
        assert self._logins is not None
        missing = [n for n in nodes if n not in known]
        result = fleet.run([known[n] for n in nodes if n in known], self._logins, action, timeout_s=TIMEOUT_S,
                           settle_s=SETTLE_S)
        result.failed.update(dict.fromkeys(missing, f"no BMC in {self.bmcs_file}"))
        return result

    @staticmethod
    def _server(node: str) -> Instance:
        return Instance(id=node, node=node, address=node)

    def in_place(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """Every server among `nodes`, unread: a server is powered in place, and `launch` and `terminate` read
        each one before they change it, so resume and suspend ask them directly (one read per node per action)."""
        return {n: self._server(n) for n in nodes}

    def find(self, nodes: Sequence[str]) -> dict[str, Instance]:
        """The servers among `nodes` whose BMC says On (one read each). The programs do not ask it of servers
        (`in_place`); it is the provider's face for a caller that only wants to know."""
        read = self._run(nodes, "status")
        return {n: self._server(n) for n, outcome in read.done.items() if outcome.power == "On"}

    def launch(self, group: NodeGroup, nodes: Sequence[str], minimum: int) -> Launch:
        done = self._run(nodes, "on")
        already = frozenset(n for n, outcome in done.done.items() if outcome.did.startswith("already"))
        launch = Launch({n: self._server(n) for n in done.done}, dict(done.failed), already)
        if len(launch.instances) < minimum:  # all-or-nothing: the job cannot start on part of its servers
            self.terminate(list(launch.instances.values()))
            short = f"only {len(launch.instances)} of {len(nodes)} servers powered on"
            launch.failed.update({n: launch.failed.get(n, short) for n in nodes})
            launch.instances = {}
        return launch

    def addresses(self, instances: Sequence[Instance]) -> dict[str, str]:
        return {i.node: i.address for i in instances if i.address}

    def terminate(self, instances: Sequence[Instance]) -> None:
        if not instances:
            return
        done = self._run([i.node for i in instances], "off")
        by_reason: dict[str, list[str]] = {}
        for node, why in done.failed.items():
            by_reason.setdefault(why, []).append(node)
        for why, nodes in sorted(by_reason.items()):  # slurmctld goes on; reconcile's round finds the server again
            log.warning("%d servers did not power off (%s): %s", len(nodes), why, hostlist.compress(nodes))

    def slice(self) -> list[str]:
        """The servers this reconcile pass reads: the clock picks which `SWEEP` of them, in turn."""
        every = sorted(n for g in self.config.groups for n in g.members)
        if len(every) <= SWEEP:
            return every
        rounds = -(-len(every) // SWEEP)
        start = (int(self.clock() // PASS_S) % rounds) * SWEEP
        return every[start:start + SWEEP]

    def everything(self) -> list[Instance]:
        """The servers of this pass's slice that are On (a BMC that does not answer is not a server that is off:
        it is left out, and read again next round)."""
        read = self._run(self.slice(), "status")
        return [self._server(n) for n, outcome in sorted(read.done.items()) if outcome.power == "On"]

    def impaired(self) -> list[Instance]:
        """None: on bare metal a failed server is found on the node (the health role's checks, remediation), not
        by its BMC; a node remediation gave up on is power-cycled by reconcile."""
        return []


PROVIDER = BmcProvider  # what the programs make for this target (clusterforge.powersave.programs.provider_for)
