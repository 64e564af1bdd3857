"""The Neuron SDK's software table: each release's aws-neuronx-dkms driver and the EFA installer series it pins. The
rows are data with a source each (data/software.yaml beside this file); SW-001 checks a Neuron pool's pins against
them (software_checks.py)."""

from __future__ import annotations

from pydantic import Field

from clusterforge.catalog.software import Release, Row


class NeuronRow(Row):
    KEY = "neuron_sdk"
    AFTER = "rocm"
    DOC = ("`neuron_sdk`, `neuron_driver`, `efa_installer`", "Trainium pools: aws-neuronx-dkms is at least the "
           "release's, and on AWS the EFA installer is of the series the release pins")
    neuron_sdk: Release
    neuron_driver: Release = Field(description="aws-neuronx-dkms of the release (the oldest driver it runs on)")
    efa_installer: Release | None = Field(None, description="EFA installer series the release pins")


TABLES = (NeuronRow,)
