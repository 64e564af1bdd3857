"""mitogen's `mitogen_linear` strategy with a longer bound on starting the interpreter it runs the steps in.

A node's boot phase (clusterforge-boot) runs site.yml on itself under mitogen's strategy, over a `local`
connection. mitogen starts one Python interpreter for the host and gives it 30 s (`mitogen.parent.Options`'
default `connect_timeout`, which mitogen's Ansible plugin passes for SSH but not for `local`) to load mitogen from
source and answer. A server under software emulation (the metal lab) took longer: `python3 -c pass` ran 1.6 s
there, and fact gathering failed with "Connection timed out" after two tries. `CLUSTERFORGE_CONNECT_TIMEOUT_S`
sets the bound (default 300); the rest is mitogen's strategy unchanged.

Used as `ANSIBLE_STRATEGY=clusterforge.cluster.mitogen_linear` with mitogen importable (the boot script puts
it on PYTHONPATH).
"""

from __future__ import annotations

import os

import ansible_mitogen.loaders
import ansible_mitogen.strategy
import mitogen.parent

DEFAULT_CONNECT_TIMEOUT_S = 300.0


def connect_timeout() -> float:
    """The bound in seconds: CLUSTERFORGE_CONNECT_TIMEOUT_S when it is a positive number, else the default."""
    try:
        seconds = float(os.environ.get("CLUSTERFORGE_CONNECT_TIMEOUT_S", DEFAULT_CONNECT_TIMEOUT_S))
    except ValueError:
        return DEFAULT_CONNECT_TIMEOUT_S
    return seconds if 0 < seconds < float("inf") else DEFAULT_CONNECT_TIMEOUT_S


# the class default every connection without its own bound reads; set before the strategy forks mitogen's
# connection process, which inherits it
mitogen.parent.Options.connect_timeout = connect_timeout()

Base = ansible_mitogen.loaders.strategy_loader.get("linear", class_only=True)


class StrategyModule(ansible_mitogen.strategy.StrategyMixin, Base):  # type: ignore[misc,valid-type]
    """mitogen_linear, with the bound above."""
