"""Day-two changes: what a blueprint change means for a running cluster, and applying it without losing jobs."""
