"""SW-001 for Neuron pools (AWS Trainium and Inferentia), read from the Neuron SDK's table (software.py): a release
has an oldest driver. The rule finds it through the registry (`vendor_function`),
with the helpers every vendor's checks share (clusterforge/policies/software_compat.py)."""

from __future__ import annotations

from collections.abc import Iterator

from clusterforge.accelerators.aws_neuron.software import NeuronRow
from clusterforge.catalog.software import SoftwareCatalog
from clusterforge.model import Software
from clusterforge.policies.findings import Draft
from clusterforge.policies.pool_software import PoolSet
from clusterforge.policies.software_compat import lookup, older


def neuron(sw: Software, tables: SoftwareCatalog) -> Iterator[Draft]:
    """The Neuron SDK is a known release and its driver no older than the release's (the EFA installer series the
    release pins is target aws's to check, where its nodes install EFA)."""
    assert sw.pin("neuron_sdk") is not None and sw.pin("neuron_driver") is not None
    release, driver = sw.version("neuron_sdk"), sw.version("neuron_driver")
    row, draft = lookup(tables, NeuronRow, release, "Neuron SDK", "its driver and EFA series are not checked")
    if draft is not None:
        yield draft
    if not isinstance(row, NeuronRow):
        return
    if older(driver, row.neuron_driver):
        yield Draft(("software", "neuron_driver"), f"aws-neuronx-dkms {driver} is older than "
                    f"{row.neuron_driver}, the driver of Neuron {release}", f"use ≥ {row.neuron_driver}")


def software_checks(pool_set: PoolSet, tables: SoftwareCatalog, complete: bool) -> Iterator[Draft]:
    """SW-001 on a Neuron set: its release and driver fit, once the SDK and driver are pinned."""
    if complete:
        yield from neuron(pool_set.software, tables)
