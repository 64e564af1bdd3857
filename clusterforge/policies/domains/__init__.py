"""The rule domains every target shares, one module each; `clusterforge.policies.discovery` finds them."""
