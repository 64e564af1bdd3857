"""Importing this module registers every rule, in the order of POLICIES.md."""

from clusterforge.policies import cooling, network, power, rack, security, slurm, software, storage

DOMAINS = (power, rack, cooling, network, storage, software, slurm, security)
