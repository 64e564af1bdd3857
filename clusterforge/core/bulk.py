"""The cycle collector paused while a command builds objects that live to its end (a blueprint, its plan, its
findings): a pipeline stage of its own, used by loading, analysis, shared-site composition and `check`."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Set by the command-line entry point, whose process ends with its command (cli.main._leave): what a command
# built is kept to the end and never needs collecting. Unset where commands run inside a longer-lived process
# (tests, other programs), which must collect as usual.
PROCESS_ENDS_WITH_COMMAND = False


@contextmanager
def bulk_objects(kept: bool = False) -> Iterator[None]:
    """Pause the cycle collector while a blueprint is parsed, validated, planned and evaluated.

    That work builds hundreds of thousands of acyclic objects that live to the end, and the collector would walk
    them again on every pass (a fifth of a 100,000-GPU check). Inputs are bounded by `clusterforge.core.limits`, so
    memory stays bounded with it paused; reference counting still frees everything that is not a cycle.
    `kept`: the objects stay until the command's end (a whole `check`); where the process ends with it
    (PROCESS_ENDS_WITH_COMMAND) they are moved out of the collector's sight instead of walked once more when it
    resumes (60 ms at 100,000 GPUs).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if kept and PROCESS_ENDS_WITH_COMMAND:
                gc.freeze()
            gc.enable()
