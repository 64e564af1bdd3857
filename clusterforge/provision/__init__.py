"""Run site.yml through ansible-runner: events in, per-host progress and a summary out."""
