"""Bare-metal servers' BMCs: where each node's BMC answers and which protocol it speaks (`hosts`), how to log in
(`credentials`), what every protocol gives (`interface`) and which there are (`protocols`: `redfish`, the DMTF's
standard on OpenStack's `sushy`, the client Ironic uses; `ipmi`, on OpenStack's `pyghmi`), and the same action for
thousands of nodes at once (`fleet`: bounded concurrency, retries, an answer per node, whatever each speaks).

`clusterforge power` is its face; the power-save programs' on-prem provider and the lab's BMCs use the same parts.
"""
