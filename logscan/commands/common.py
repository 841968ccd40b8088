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


def _unopenable(paths) -> list[str]:
    """The inputs among ``paths`` (``-`` is stdin) that cannot be opened at all, each as
    ``PATH: why`` (missing, a directory, permission denied, an empty path): checked before any
    output, so a command that prints nothing but what it read (``scan --unexplained``) never
    writes a line about the good inputs and then an error, nor a "nothing unexplained" that no
    read supports. A regular file is opened and closed again; anything else (a FIFO, a process
    substitution's ``/dev/fd/N``) is only looked up, since opening it would block or consume it.
    An input that goes away after this check is still reported by the reader (exit 2)."""
    import os
    import stat

    bad = []
    for path in paths:
        if path == "-":
            continue
        if path == "":
            bad.append("'': an empty path (an unset variable in the command line?)")
            continue
        try:
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):
                bad.append(f"{path}: is a directory")
            elif stat.S_ISREG(mode):
                with open(path, "rb"):
                    pass
            elif not os.access(path, os.R_OK):
                bad.append(f"{path}: Permission denied")
        except OSError as exc:
            bad.append(f"{path}: {exc.strerror or exc}")
    return bad


def _refuse_unopenable(paths) -> None:
    """``_unopenable``: one stderr line per input that cannot be opened (``logscan: PATH: why``),
    then exit 2, before any output; returns when every input can be opened."""
    import sys

    bad = _unopenable(paths)
    for line in bad:
        click.echo(f"logscan: {line}", err=True)
    if bad:
        sys.exit(EXIT_USAGE)


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
