"""`check`: the policy verdict."""
