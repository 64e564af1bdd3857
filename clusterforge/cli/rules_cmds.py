"""`rules`: list and document the policy rules (ids, levels, thresholds and where their defaults come from)."""

from __future__ import annotations

import json

import click

from clusterforge.cli.app import app
from clusterforge.errors import shown
from clusterforge.formats.escape import log_line


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
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"clusterforge rules ({len(rules)})", caption="`clusterforge rules show ID` for details")
        for column in ("id", "level", "domain", "title"):
            table.add_column(column, overflow="fold")
        for rule in rules:
            table.add_row(rule.id, rule.level, rule.domain, rule.title)
        Console(width=120).print(table)


@rules_group.command("show")
@click.argument("rule_id", metavar="ID")
@click.option("--format", "-f", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format.")
def show(rule_id: str, fmt: str) -> None:
    """Show rule ID: what it checks, its default level, source, and each policy-config setting with its default."""
    from clusterforge.policies import reference
    from clusterforge.validation import closest

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
    summary = reference.rule_summary(rule)
    lines = [f"{rule.id}: {rule.title}", "",
             f"level:      {rule.level} (default)", f"domain:     {rule.domain}",
             f"applies to: {summary['applies_to']}", f"source:     {rule.source}", "", summary["checks"], "",
             "inputs:     " + ", ".join(summary["inputs"])]
    if summary["catalog"]:
        lines.append("catalog:    " + ", ".join(summary["catalog"]))
    if summary["shared_settings"]:
        lines.append("config:     " + ", ".join(f"{section}.*" for section in summary["shared_settings"]))
    if summary["also"]:
        lines.append(f"also:       {summary['also']}")
    if summary["crossguard"]:
        lines.append(f"preview:    {summary['crossguard']}")
    settings = reference.setting_docs(rule)
    width = max(len(s.key) for s in settings)
    default_width = max(len(s.default) for s in settings)
    lines += ["", f"settings (policy config `rules: {{{rule.id}: {{key: value}}}}`):"]
    lines += [f"  {s.key:<{width}}  {s.default:<{default_width}}  {s.description}" for s in settings]
    click.echo("\n".join(lines))
