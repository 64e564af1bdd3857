"""clusterforge-aws: the installed clusterforge's program (clusterforge.targets.aws.stack_main), run for this folder.

Relative paths in the stack config start here. `clusterforge stack new aws DIR` writes this same file into a
project of your own; the release in its requirements.txt is the program."""

from pathlib import Path

from clusterforge.targets.aws.stack_main import run

run(Path(__file__).resolve().parent)
