"""The blueprint's `operations:` section: telemetry and alerts, the node health check, and automatic remediation.

Shape only. Which pool runs Prometheus must exist (model/slurm_references.py); what the roles do with these values
is roles/telemetry, roles/monitoring, roles/health and roles/remediation. The defaults are the measured recipe of
docs/operations.md: a node is checked every 5 minutes and before and after every job, a node drained for a
hardware reason is rebooted at most twice a day before it waits for a person.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from clusterforge.core.validation import expected
from clusterforge.model.base import Name, SetsSlurm, Strict

WEBHOOK = r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/+=&?-]*)?$"
Webhook = Annotated[str, StringConstraints(pattern=WEBHOOK, max_length=2000), Field(description=expected(
    WEBHOOK, "an http(s) URL Alertmanager posts alerts to, e.g. https://alerts.example.com/hooks/gpu"))]


class Monitoring(Strict):
    """Prometheus and Alertmanager on one host (the primary controller unless `pool` names a pool: its first
    node), node exporters on every node, the DCGM exporter on NVIDIA GPU nodes, SLURM's state as metrics."""

    enabled: bool = True
    pool: Name | None = None
    scrape_interval_s: Annotated[int, Field(ge=1, le=300)] = 15
    # how long a node must be unreachable before NodeDown fires (Prometheus `for:`)
    node_down_for_s: Annotated[int, Field(ge=0, le=3600)] = 60
    retention_days: Annotated[int, Field(ge=1, le=3650)] = 15
    alert_webhooks: Annotated[list[Webhook], Field(max_length=20)] = []


class Health(Strict):
    """The node health check: SLURM's HealthCheckProgram every `interval_s`, and a fast prolog and epilog around
    every job. A failing check drains the node with a reason code (docs/operations.md)."""

    interval_s: Annotated[int, Field(ge=10, le=86_400), SetsSlurm("HealthCheckInterval")] = 300
    prolog: bool = True
    epilog: bool = True
    # `dcgmi diag -r 1` in the periodic check where DCGM is installed (0: off); deeper levels on demand with
    # `clusterforge health diag`
    dcgm_diag_level: Literal[0, 1] = 1


class Remediation(Strict):
    """What happens to a node the health check drained for a reason a reboot can clear: rebooted when idle
    (`scontrol reboot ASAP nextstate=RESUME`), re-checked and returned, at most `max_reboots` times in `window_h`
    hours; after that it stays drained for a person."""

    enabled: bool = True
    max_reboots: Annotated[int, Field(ge=0, le=10)] = 2
    window_h: Annotated[int, Field(ge=1, le=720)] = 24
    interval_s: Annotated[int, Field(ge=5, le=3600)] = 60


class Operations(Strict):
    monitoring: Monitoring = Monitoring()
    health: Health = Health()
    remediation: Remediation = Remediation()
