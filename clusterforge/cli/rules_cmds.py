"""`rules`: list and document the policy rules (ids, levels, thresholds and where their defaults come from)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from clusterforge.cli.app import app
from clusterforge.core.errors import shown
from clusterforge.formats.escape import log_line

if TYPE_CHECKING:
    from clusterforge.policies.reference import SettingDoc


@app.group("rules", invoke_without_command=True)
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="text table; markdown: the reference page (docs/policies.md); json.")
@click.pass_context
def rules_group(ctx: click.Context, fmt: str) -> None:
    """List every policy rule: id, level, domain and title.

    \b
    Examples:
      clusterforge rules
      clusterforge rules show PWR-002          one rule, its settings and defaults
      clusterforge rules --format markdown > docs/policies.md
    """
    if ctx.invoked_subcommand is not None:
        return
    from clusterforge.policies import reference

    rules = reference.rules()
    if fmt == "markdown":
        click.echo(reference.page(), nl=False)
    elif fmt == "json":
        click.echo(json.dumps([reference.rule_summary(r) for r in rules], indent=2, ensure_ascii=False))
    else:
        from rich.table import Table

        from clusterforge.cli import terminal

        table = Table(title=f"clusterforge rules ({len(rules)})", caption="`clusterforge rules show ID` for details")
        for column in ("id", "level", "domain", "title"):
            table.add_column(column, overflow="fold")
        for rule in rules:
            table.add_row(rule.id, rule.level, rule.domain, rule.title)
        terminal.print_table(terminal.console(), table)


@rules_group.command("show")
@click.argument("rule_id", metavar="ID")
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format.")
def show(rule_id: str, fmt: str) -> None:
    """Show rule ID: what it checks, its default level, source, and each policy-config setting with its default."""
    from clusterforge.core.validation import closest
    from clusterforge.policies import reference

    known = {r.id: r for r in reference.rules()}
    rule = known.get(rule_id.upper())
    if rule is None:
        suggestion = closest(rule_id.upper(), known)
        hint = f"did you mean {suggestion}?" if suggestion else "see `clusterforge rules`"
        raise click.BadParameter(log_line(f"unknown rule {shown(rule_id)} ({hint})"), param_hint="ID")
    if fmt == "json":
        click.echo(json.dumps(reference.rule_summary(rule), indent=2, ensure_ascii=False))
        return
    if fmt == "markdown":
        click.echo("\n".join(reference.rule_markdown(rule)), nl=False)
        return
    from clusterforge.cli import terminal

    summary = reference.rule_summary(rule)
    fields = [("level", f"{rule.level} (default)"), ("domain", rule.domain), ("applies to", summary["applies_to"]),
              ("source", rule.source), ("", summary["checks"]), ("inputs", ", ".join(summary["inputs"]))]
    if summary["catalog"]:
        fields.append(("catalog", ", ".join(summary["catalog"])))
    if summary["shared_settings"]:
        fields.append(("config", ", ".join(f"{section}.*" for section in summary["shared_settings"])))
    for label, key in (("also", "also"), ("preview", "crossguard")):
        if summary[key]:
            fields.append((label, summary[key]))
    columns = terminal.width()
    lines = [*terminal.wrap(f"{rule.id}: {rule.title}", columns, 4), ""]
    for label, value in fields:
        if not label:  # what the rule checks: a paragraph of its own
            lines += ["", *terminal.wrap(value, columns), ""]
            continue
        lines += terminal.wrap(f"{label + ':':<12}{value}", columns, 12)
    lines += ["", *terminal.wrap(f"settings (policy config `rules: {{{rule.id}: {{key: value}}}}`):", columns, 2)]
    lines += _settings(reference.setting_docs(rule), columns)
    click.echo("\n".join(lines))


def _settings(settings: list[SettingDoc], columns: int) -> list[str]:
    """`  key  default  description`, aligned, the description wrapped under itself; where that leaves the
    description fewer than 30 columns, each setting is `  key  default` with its description indented below."""
    from clusterforge.cli import terminal

    width = max(len(s.key) for s in settings)
    default_width = max(len(s.default) for s in settings)
    lead = 2 + width + 2 + default_width + 2
    if columns - lead >= 30:
        return [line for s in settings
                for line in terminal.wrap(f"  {s.key:<{width}}  {s.default:<{default_width}}  {s.description}",
                                          columns, lead)]
    return [line for s in settings
            for line in [*terminal.wrap(f"  {s.key}  {s.default}", columns, 4),
                         *terminal.wrap(f"    {s.description}", columns, 4)]]
