"""`rules`: list and document the policy rules."""
