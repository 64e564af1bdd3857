"""The command line: the only place that prints problems and chooses exit codes."""
