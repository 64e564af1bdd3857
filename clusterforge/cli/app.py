"""The root command group, and the one place where ClusterforgeError becomes `file:line: path: message` + exit 2."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from clusterforge.core.errors import ClusterforgeError
from clusterforge.core.version import __version__

if TYPE_CHECKING:
    from clusterforge.files.yamlsource import Source

EXIT_OK, EXIT_POLICY, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped

INTERRUPTED = "clusterforge: interrupted"


@dataclasses.dataclass
class Interrupt:
    """What this process knows of Ctrl-C. Once it happened, nothing else is reported, whatever the code that ran
    after it did with the KeyboardInterrupt.

    An interrupt is a KeyboardInterrupt raised wherever the main thread happens to be, and code that is not ours
    may drop it: pydantic-core, building a validator, reports one raised in its calls back into Python as
    "Exception ignored" and goes on with a broken validator (the check then printed false errors about the
    built-in catalog, exit 2, or its verdict, exit 0). The SIGINT handler (cli.main) therefore records the
    interrupt before it raises anything, and in the command-line process (`cli`) the record decides: standard
    output and error go to /dev/null at once, and the exit (cli.main._leave) says the one line and exits 130.
    """

    happened: bool = False
    cli: bool = False  # this process is the command line (cli.main.main): silence, and the line said at its exit
    raising: bool = True  # the SIGINT handler raises KeyboardInterrupt; off once the command is over
    stderr: int | None = None  # a copy of the process's own stderr, taken at start, for the one line

    def record(self) -> None:
        self.happened = True
        if self.cli:
            silence()


INTERRUPT = Interrupt()


def silence() -> None:
    """Point standard output and error at /dev/null: once interrupted, no verdict, finding or error line may
    follow, also from code that swallowed the interrupt or from the bytes still in a stream's buffer. The one
    line goes to the copy of stderr kept in INTERRUPT."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
        os.close(null)


def say_interrupted() -> None:
    """The one line Ctrl-C leaves on stderr: no traceback, and not click's "Aborted!" with exit 1 (a verdict).
    On a terminal it starts on a line of its own, after the echoed ^C. In the command-line process it is said
    once, by the exit (cli.main._leave), however many ways the interrupt took; here it is only recorded."""
    if INTERRUPT.cli:
        INTERRUPT.record()
        return
    with contextlib.suppress(BaseException):  # a closed stderr must not turn exit 130 into a traceback
        click.echo(("\n" if sys.stderr.isatty() else "") + INTERRUPTED, err=True)


def interrupted_line(fd: int) -> bytes:
    """The one line as bytes for `fd` (os.write: the streams may be silenced or broken by then)."""
    try:
        terminal = os.isatty(fd)
    except OSError:
        terminal = False
    return (("\n" if terminal else "") + INTERRUPTED + "\n").encode()


@contextlib.contextmanager
def _interrupts_exit_130() -> Iterator[None]:
    """Ctrl-C, in a command or at one of click's prompts (which turn it into Abort), ends with exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        say_interrupted()
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except click.exceptions.Abort as abort:
        if not isinstance(abort.__context__, KeyboardInterrupt):  # end of input at a prompt stays click's
            raise
        say_interrupted()
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


def say(text: str) -> None:
    """One line on stderr that may carry a file name or other input: never a CI workflow command."""
    from clusterforge.formats.escape import log_line

    click.echo(log_line(text), err=True)


def print_problems(error: ClusterforgeError) -> None:
    """Each problem as `file:line: path: message`, the file relative to the working directory when below it."""
    from clusterforge.files.paths import report_path

    for problem in error.problems:
        say(dataclasses.replace(problem, file=report_path(problem.file)).render())


# Each top-level command and the module that defines it: a command's module is imported only when that command
# runs (or help lists them all), so `check` does not pay for the lab's, AWS's or provisioning's imports.
COMMAND_MODULES = {
    "catalog": "catalog_cmds", "check": "check_cmds", "health": "health_cmds", "inventory": "inventory_cmds",
    "lab": "lab_cmds", "new": "new_cmds", "plan": "plan_cmds", "provision": "provision_cmds", "render": "plan_cmds",
    "report": "report_cmds", "rules": "rules_cmds", "schema": "blueprint_cmds", "validate": "blueprint_cmds",
    "diff": "diff_cmds", "update": "update_cmds", "cost": "cost_cmds", "image": "image_cmds",
    "affected": "affected_cmds", "power": "power_cmds", "stack": "stack_cmds",
}


class _Group(click.Group):
    """Catches the package's one exception type for every command, nested groups included."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | (set(COMMAND_MODULES) if self is app else set()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if self is app and cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            import importlib

            importlib.import_module(f"clusterforge.cli.{COMMAND_MODULES[cmd_name]}")  # registers on `app`
        return super().get_command(ctx, cmd_name)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        with _interrupts_exit_130():  # the root's own options; a subcommand's are parsed within invoke
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _interrupts_exit_130():
                return super().invoke(ctx)
        except ClusterforgeError as error:
            print_problems(error)
            ctx.exit(EXIT_INPUT)


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(__version__, prog_name="clusterforge")
def app() -> None:
    """Check, plan, render and provision GPU training clusters from one blueprint.

    \b
    Typical flow:
      clusterforge validate cluster.yaml      shape, names and hardware keys
      clusterforge check cluster.yaml         physical and cloud policy verdict
      clusterforge plan cluster.yaml          rack placement, fabric bill of materials, node names
      clusterforge render cluster.yaml -o out inventory, SLURM configs, Pulumi stack config
      clusterforge catalog list               the hardware the checks know

    Exit codes: 0 ok, 1 policy failure, 2 unreadable or invalid input, 3 internal error (a bug: please report
    it; CLUSTERFORGE_DEBUG=1 prints the traceback), 130 interrupted (Ctrl-C).
    """


F = TypeVar("F", bound=Callable[..., Any])


def catalog_option(func: F) -> F:
    return click.option(
        "--catalog", "catalog", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
        help="Extra catalog YAML (repeatable): hardware, whose built-in keys cannot be redefined, and "
             "prices, which replace the built-in ones (docs/cost.md).")(func)


def policy_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """The options that decide a verdict, declared once for every command that reaches one (`check`, `plan`,
    `render`, `report`, `new`); the command receives them together as `inputs: PolicyInputs`."""

    @functools.wraps(func)
    def with_inputs(*args: Any, catalog: tuple[Path, ...], policy_config: Path | None, waivers: Path | None,
                    skip: tuple[str, ...], **kwargs: Any) -> Any:
        # here, not at the top: the policies package is most of a start-up, and commands without a verdict
        # (`validate`, `lab`, `power`) never need it
        from clusterforge.pipeline.analysis import PolicyInputs

        return func(*args, inputs=PolicyInputs(tuple(catalog), policy_config, waivers, tuple(skip)), **kwargs)

    options = (
        catalog_option,
        click.option("--policy-config", "policy_config", type=click.Path(path_type=Path, dir_okay=False),
                     help="YAML overriding thresholds and levels per rule (see `clusterforge rules`)."),
        click.option("--waivers", type=click.Path(path_type=Path, dir_okay=False),
                     help="YAML list of waivers: rule, target, reason, expires, approver."),
        click.option("--skip", multiple=True, metavar="ID", help="Do not run this rule (repeatable)."),
    )
    for option in reversed(options):
        with_inputs = option(with_inputs)
    return with_inputs


def format_option(*choices: str) -> Callable[[F], F]:
    return click.option("--format", "-f", "fmt", type=click.Choice(choices), default=choices[0],
                        show_default=True, help="Output format.")


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def input_files(sources: list[Source], *paths: Path | None) -> list[str]:
    """Every file a command read: the given paths and each blueprint with the files it includes, so an
    output (`-o`) can be refused when it would overwrite one of them."""
    found = [str(p) for p in paths if p is not None]
    todo, seen = list(sources), set()
    while todo:
        source = todo.pop()
        if id(source) not in seen:
            seen.add(id(source))
            found.append(source.file)
            todo.extend(inner for inner, _ in source.includes.values())
    return found
