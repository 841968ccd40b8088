"""``logscan schema``, ``codes`` and ``packs``: what the report, the codes and the packs are."""
from __future__ import annotations

import json

import click

from .common import packs_for


@click.command()
@click.option("--gate", "gated", is_flag=True, help="The schema of 'gate --format json' (the report plus 'gate').")
def schema(gated: bool) -> None:
    """Print the JSON schema of the report that 'scan --format json' prints."""
    from ..models import Report as _Report

    if gated:
        from ..gate.evaluate import GatedReport

        click.echo(json.dumps(GatedReport.model_json_schema(), indent=2))
        return
    click.echo(json.dumps(_Report.model_json_schema(), indent=2))


@click.command()
def codes() -> None:
    """List every finding code with its severity and meaning (a child code names its parent).

    Codes marked 'gate only' need a policy or a baseline: only 'logscan gate' raises them,
    and 'scan --fail-on' refuses them. Every other code works in 'scan --fail-on'.
    """
    from ..packs.loader import default_packs

    packs = default_packs()
    for code, info in sorted(packs.findings.code.items()):
        mark = "gate only" if info.raised_by == "gate" else ""
        parent = f" (kind of {info.parent}: a filter on it takes this code)" if info.parent else ""
        click.echo(f"{code:28} {info.severity:8} {mark:10} {info.title}{parent}")


@click.command("packs")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Validate the packs of this folder instead of the shipped ones.")
def packs_command(patterns_dir: str | None) -> None:
    """Validate the pattern packs and list them (rules, ladders); exit 2 if a pack is broken."""
    ps = packs_for(patterns_dir)
    click.echo(f"patterns: {ps.root}")
    for name, p in sorted(ps.packs.items()):
        click.echo(f"{name}: {len(p.rules)} rules, {len(p.prefixes)} line formats, "
                   f"ladders {', '.join(sorted(p.ladders, key=_release_key)) or '-'}")


def _release_key(release: str):
    """Sort releases as versions (0.6.6.post1 before 0.33.0), unparsable ones last, by text."""
    from packaging.version import InvalidVersion, Version

    try:
        return (0, Version(release), "")
    except InvalidVersion:
        return (1, Version("0"), release)
