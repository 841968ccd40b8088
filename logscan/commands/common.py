"""Helpers shared by the subcommands: exit codes, option checks, input-error lines, release pins.

Imports nothing heavy at module level: each subcommand module imports what it uses.
"""
from __future__ import annotations


import click

from ..sources import interrupt

EXIT_OK, EXIT_FAIL_ON, EXIT_USAGE = 0, 1, 2


def packs_for(patterns_dir):
    """The shipped packs, or those of ``--patterns`` (raises ``PackError`` when broken)."""
    from ..packs.loader import default_packs, load_packs

    return load_packs(patterns_dir) if patterns_dir else default_packs()


def _input_errors(report) -> int:
    """One stderr line, naming the file, per input that could not be read to its end; their count.

    The rule of every subcommand (docs/fail-closed.md): such an input (missing, a directory,
    unreadable, a compressed stream that ends early or is corrupt) makes the exit status 2,
    after the report of what was read.
    """
    from ..formats.inputs import input_error

    errors = [e for e in (input_error(s) for s in report.inputs) if e]
    for e in errors:
        click.echo(f"logscan: {e}", err=True)
    return len(errors)


def _exit_interrupted() -> None:
    """After SIGINT/SIGTERM: leave with 128 + the signal number (the report is already out)."""
    code = interrupt.status()
    if code is not None:
        interrupt.exit_now(code)

def _check_gpu(gpu: str | None) -> None:
    """A ``--gpu`` value must name a known GPU or compute capability; raises ``click.BadParameter``
    (an empty value too: ``--gpu "$GPU"`` with ``$GPU`` unset would judge on no GPU silently)."""
    if gpu is not None and not gpu.strip():
        raise click.BadParameter("empty: give a GPU name or compute capability (H100, sm90, 9.0), or leave --gpu out",
                                 param_hint="--gpu")
    if gpu:
        from ..analysis.gpus import resolve_gpu, unknown_gpu_message

        if resolve_gpu(gpu) is None:
            raise click.BadParameter(unknown_gpu_message(gpu), param_hint="--gpu")


def _check_version(value: str | None, hint: str, example: str) -> None:
    """A version option must parse as PEP 440 (e.g. ``12.8``); raises ``click.BadParameter``."""
    from packaging.version import InvalidVersion, Version

    if value is None:
        return
    try:
        Version(value)
    except InvalidVersion:
        raise click.BadParameter(f"{value!r} is not a version like {example}", param_hint=hint) from None

def _engine_releases(packs, text: str, engine: str | None = None) -> dict[str, str]:
    """``--engine-version [ENGINE=]V`` -> engine -> shipped release, or exit 2 naming the nearest."""
    from ..analysis.releases import ReleaseError, parse_engine_version

    try:
        return parse_engine_version(packs, text, engine)
    except ReleaseError as exc:
        raise click.UsageError(str(exc)) from None
