"""`plan` and `render` commands (planner and renderers)."""
