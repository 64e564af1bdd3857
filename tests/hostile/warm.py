# ruff: noqa: F401  (imported to be in memory before the fork, not to be used here)
"""What the fork server (forked.py) imports before it forks a command: the modules that the blueprint commands
(validate, check in each format, plan, render, report) import, the policy rules included. Importing is all it
does; nothing here runs a command or reads a file, so a fork starts where a fresh process stands after its
imports."""

import clusterforge.blueprint.load
import clusterforge.cli.main
import clusterforge.cost.estimate
import clusterforge.files.fastyaml
import clusterforge.formats.github
import clusterforge.formats.json_format
import clusterforge.formats.junit
import clusterforge.formats.sarif
import clusterforge.formats.text
import clusterforge.pipeline.analysis
import clusterforge.plan
import clusterforge.plan.topology
import clusterforge.policies.engine
import clusterforge.render
import clusterforge.report
import clusterforge.target_kernel
from clusterforge.policies.discovery import load_rules

load_rules()  # imports every rule module (each registers its rules), as the first check of a process does
