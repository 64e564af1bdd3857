"""AWS Trainium and Inferentia: the Neuron SDK, `/dev/neuron<i>` per chip (Slurm's gpu/nrt).

The catalog calls the vendor `aws`; an instance type's `accelerators:` that name no vendor are these chips. No role
installs the Neuron pins, so none are rendered as role variables.
"""

from clusterforge.accelerator_kernel.accelerator import Accelerator, Devices

ACCELERATOR = Accelerator(
    name="aws", title="AWS Neuron", stack="neuron", stack_title="Neuron", pins=("neuron_sdk", "neuron_driver"),
    devices=Devices("/dev/neuron"), instance_default=True)
