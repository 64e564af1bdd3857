"""`new`: start a blueprint from a team template that already passes `check`."""

from __future__ import annotations

from pathlib import Path

import click

from clusterforge.cli.app import EXIT_POLICY, app, format_option, policy_options
from clusterforge.core.errors import ClusterforgeError, Problem, shown
from clusterforge.formats.escape import plural
from clusterforge.pipeline.analysis import PolicyInputs


def _pairs(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{shown(item)} is not key=value", param_hint="--set")
        out[key.strip()] = value.strip()
    return out


def _refuse_existing(output: Path, force: bool) -> None:
    """`-o` onto a file that exists (an edited blueprint, most likely) needs --force; links, folders and special
    files are refused by the write itself, --force or not."""
    import stat

    try:
        mode = output.lstat().st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and not force:
        raise ClusterforgeError(Problem("exists; pass --force to replace it", str(output)))


@app.command()
@click.argument("template", required=False)
@click.option("--list", "list_", is_flag=True, help="List the templates, one per line: name, then description.")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Set a parameter (repeatable).")
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write the blueprint here (atomically) instead of stdout; an existing file needs --force.")
@click.option("--force", is_flag=True, help="Replace the --output file when it exists.")
@click.option("--interactive", "-i", is_flag=True,
              help="Ask for each parameter not --set: a menu for choices, the default and allowed values shown.")
@click.option("--params", "show_params", is_flag=True, help="Show the template's parameters and exit.")
@click.option("--templates", "templates_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also look for templates in this folder (or set CLUSTERFORGE_TEMPLATES).")
@format_option("text", "json")
@policy_options
def new(template: str | None, list_: bool, sets: tuple[str, ...], output: Path | None, force: bool,
        interactive: bool, show_params: bool, templates_dir: Path | None, fmt: str, inputs: PolicyInputs) -> None:
    """Write a blueprint from TEMPLATE with its defaults or the parameters you set.

    \b
    Examples:
      clusterforge new --list                              the templates, with what each builds
      clusterforge new aws-p6-b200 --params                its parameters: default, allowed values, help
      clusterforge new --list --format json                the same as JSON, for scripts and portals
      clusterforge new aws-p6-b200 --params --format json
      clusterforge new dgx-h100-superpod --set scalable_units=8 -o hall.yaml
      clusterforge new aws-p6-b200 --set nodes=16 --set fsx_capacity_gib=9600 -o train.yaml
      clusterforge new aws-p5-capacity-block -i -o cluster.yaml
                                                           ask for each parameter not --set
      clusterforge new onprem-dev -o dev.yaml --force      replace dev.yaml (without --force: exit 2)

    A value outside a parameter's allowed values is refused, naming the parameter and what it allows (exit 2;
    with -i it is asked again). An existing -o file is kept unless --force. The blueprint is validated and
    checked: exit 1 when it fails the policy check (the file is still written, so you can adjust it).
    """
    from clusterforge.blueprint.templating import discover, get

    if fmt == "json" and not (list_ or show_params):
        raise click.UsageError("--format json is for --list and --params; the blueprint itself is YAML")
    if list_:
        found = discover(templates_dir)
        if fmt == "json":
            from clusterforge.cli.new_view import list_document

            click.echo(list_document(found.values()), nl=False)
            return
        for name, each in found.items():
            click.echo(f"{name:<26} {each.description}")
        return
    if template is None:
        raise click.UsageError("give a TEMPLATE (see --list)")
    chosen = get(template, templates_dir)
    if show_params:
        if fmt == "json":
            from clusterforge.cli.new_view import params_document

            click.echo(params_document(chosen), nl=False)
            return
        from clusterforge.cli.new_view import print_params

        print_params(chosen)
        return
    if output is not None:
        _refuse_inputs(output, chosen.folder, templates_dir, inputs)
        _refuse_existing(output, force)
    given = _pairs(sets)
    if interactive:
        from clusterforge.cli.new_prompts import ask_all, asker

        chosen.parameters(given)  # a bad --set is refused before any question
        given = ask_all(chosen, given, asker())
    text = chosen.render(given)
    _write_checked(text, output, template, inputs)


def _refuse_inputs(output: Path, folder: Path, templates_dir: Path | None, inputs: PolicyInputs) -> None:
    """`-o` must not replace a file this command reads (policy config, waivers, catalogs, the template), nor
    write into the --templates folder, which a later `new` would read as templates."""
    import os

    from clusterforge.files.atomic import refuse_inputs

    refuse_inputs(output, [*inputs.files(), folder / "params.yaml", folder / "blueprint.yaml.j2"])
    for tree in (templates_dir, folder):
        if tree is None or not tree.exists():
            continue
        real_out, real_tree = Path(os.path.realpath(output)), Path(os.path.realpath(tree))
        if real_tree == real_out or real_tree in real_out.parents:
            raise ClusterforgeError(Problem(f"is inside the templates folder {shown(str(tree))}", str(output),
                                            hint="write the blueprint outside --templates"))


def _write_checked(text: str, output: Path | None, template: str, inputs: PolicyInputs) -> None:
    from clusterforge.blueprint.load import load_text
    from clusterforge.pipeline.analysis import analyze, read_policy

    policy = read_policy(inputs)
    file = str(output) if output else f"<{template}>"
    try:
        loaded = load_text(text, file, policy.catalog)
    except ClusterforgeError as error:
        raise ClusterforgeError([*error.problems, *ClusterforgeError(
            f"template {template} produced an invalid blueprint for these parameters").problems]) from None
    if output is None:
        click.echo(text, nl=False)
    else:
        from clusterforge.files.atomic import write_text

        write_text(output, text)
    verdict = analyze(loaded, policy, detail=False).verdict
    summary = f"{plural(verdict.count('error'), 'error')}, {plural(verdict.count('warning'), 'warning')}"
    where = f"wrote {output}: " if output else ""
    if verdict.failed:
        for finding in verdict.errors[:10]:
            click.echo(f"{finding.render()}", err=True)
        if len(verdict.errors) > 10:
            click.echo(f"… and {len(verdict.errors) - 10} more (clusterforge check {file})", err=True)
        click.echo(f"{where}check FAILS ({summary}); adjust the parameters or the file", err=True)
        raise click.exceptions.Exit(EXIT_POLICY)
    click.echo(f"{where}check passes ({summary}); next: clusterforge check {output or 'FILE'}", err=True)
