"""Bare-metal servers' BMCs through Redfish, the DMTF's standard: where each node's BMC answers (`hosts`), how to
log in (`credentials`), one node's power and boot (`redfish`, on OpenStack's `sushy`, the client Ironic uses), and
the same for thousands of nodes at once (`fleet`: bounded concurrency, retries, an answer per node).

`clusterforge power` is its face; the power-save programs' on-prem provider and the lab's BMCs use the same parts.
"""
