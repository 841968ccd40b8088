"""Command line (click): ``logscan scan``, ``logscan schema``, ``logscan packs``.

Exit status: 0 analysed; 1 a ``--fail-on`` cost class or finding code is present; 2 bad
usage, an unreadable input, or a broken pattern pack (one line on stderr, no traceback).
"""
from __future__ import annotations

import json
import sys

import click

from . import __version__
from .formats import json as json_format
from .formats import text as text_format
from .models import CostClass, Report
from .packs.loader import PackError, default_packs, load_packs

FORMATS = {"text": text_format.render, "json": json_format.render}
EXIT_OK, EXIT_FAIL_ON, EXIT_USAGE = 0, 1, 2


class _Group(click.Group):
    def main(self, *args, **kwargs):  # map click's usage errors to exit 2 (its default too)
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.exceptions.Abort:
            click.echo("logscan: aborted", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            exc.show()
            sys.exit(EXIT_USAGE)
        except PackError as exc:
            click.echo(f"logscan: pattern pack error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except BrokenPipeError:
            sys.exit(EXIT_OK)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="logscan")
def cli() -> None:
    """Read LLM serving-engine logs and tell which quantization kernel actually executes.

    logscan finds the kernel each quantized layer family runs, places it on the engine's
    ordered fallback ladder (rung k of n), gives its cost class (native, weight_only,
    emulated, dequant_at_load, portable) and flags silent degradations.
    """


def _parse_fail_on(value: str) -> set[str]:
    items = {v.strip() for v in value.split(",") if v.strip()}
    classes = {c.value for c in CostClass}
    codes = set(default_packs().findings.code)
    bad = sorted(i for i in items if i not in classes and i not in codes)
    if bad:
        raise click.BadParameter(
            f"unknown cost class or finding code: {', '.join(bad)} "
            f"(cost classes: {', '.join(sorted(classes))}; codes: see 'logscan codes')",
            param_hint="--fail-on")
    return items


def _failed(report: Report, fail_on: set[str]) -> list[str]:
    hits = []
    for run in report.runs:
        for s in run.selections:
            if s.cost_class.value in fail_on:
                hits.append(f"run {run.index + 1}: {s.kernel} is {s.cost_class.value} (line {s.line})")
        for f in run.findings:
            if f.code in fail_on:
                hits.append(f"run {run.index + 1}: {f.code} (line {f.line})")
    return hits


@cli.command()
@click.argument("inputs", nargs=-1, metavar="[PATH|-]...")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
              help="Report format.")
@click.option("--fail-on", default="", metavar="LIST",
              help="Comma-separated cost classes and/or finding codes that make the exit status 1, "
                   "e.g. 'emulated,weight_only' or 'KERNEL_NOT_FOUND'.")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def scan(inputs: tuple[str, ...], fmt: str, fail_on: str, patterns_dir: str | None) -> None:
    """Scan log files (or - for stdin; .gz read transparently) and report kernels and findings.

    \b
    Examples:
      logscan scan server.log
      vllm serve MODEL 2>&1 | logscan scan -
      logscan scan --format json --fail-on emulated,weight_only pod.log.gz
    """
    from .pipeline import scan_inputs

    fail = _parse_fail_on(fail_on) if fail_on else set()
    packs = load_packs(patterns_dir) if patterns_dir else default_packs()
    paths = list(inputs) or ["-"]
    if paths == ["-"] and sys.stdin.isatty():
        raise click.UsageError("no input: give a log path, or pipe a log into 'logscan scan -'")
    report = scan_inputs(paths, packs)
    click.echo(FORMATS[fmt](report), nl=False)
    errors = [s for s in report.inputs if s.error]
    for s in errors:
        click.echo(f"logscan: {s.error}", err=True)
    if any(s.error and s.lines == 0 for s in errors):
        sys.exit(EXIT_USAGE)
    hits = _failed(report, fail)
    if hits:
        for h in hits:
            click.echo(f"logscan: --fail-on: {h}", err=True)
        sys.exit(EXIT_FAIL_ON)
    sys.exit(EXIT_OK)


@cli.command()
def schema() -> None:
    """Print the JSON schema of the report that 'scan --format json' prints."""
    from .models import Report as _Report

    click.echo(json.dumps(_Report.model_json_schema(), indent=2))


@cli.command()
def codes() -> None:
    """List every finding code with its severity and meaning."""
    packs = default_packs()
    for code, info in sorted(packs.findings.code.items()):
        click.echo(f"{code:28} {info.severity:8} {info.title}")


@cli.command()
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None)
def packs(patterns_dir: str | None) -> None:
    """Validate the pattern packs and list them (rules, ladders); exit 2 if a pack is broken."""
    ps = load_packs(patterns_dir) if patterns_dir else default_packs()
    click.echo(f"patterns: {ps.root}")
    for name, p in sorted(ps.packs.items()):
        click.echo(f"{name}: {len(p.rules)} rules, {len(p.prefixes)} line formats, "
                   f"ladders {', '.join(sorted(p.ladders)) or '-'}")


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
