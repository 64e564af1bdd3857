"""Policy rules that decide whether a design physically fits, and the engine that runs them."""

from clusterforge.policies.config import PolicyConfig
from clusterforge.policies.config_file import load_policy_config
from clusterforge.policies.engine import Verdict, evaluate
from clusterforge.policies.findings import Finding
from clusterforge.policies.waivers import load_waivers

__all__ = ["Finding", "PolicyConfig", "Verdict", "evaluate", "load_policy_config", "load_waivers"]
