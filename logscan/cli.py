"""Command line (click): ``logscan scan``, ``gate``, ``diff``, ``follow``, ``schema``, ``codes``, ``packs``,
``ladder``, ``explain``, ``matrix``.

Exit status: 0 analysed (gate: passed); 1 a ``--fail-on`` cost class or finding code is
present (gate: failed; diff: a family moved down, changed cost class or went missing); 2 bad
usage, an input not read to its end, a broken pattern pack or policy (one line on stderr, no
traceback); 130 / 143: scan or gate stopped by SIGINT / SIGTERM, after printing the report of
what was read, marked interrupted (docs/fail-closed.md); 141 (128 + SIGPIPE): the reader of
standard output closed it early (``logscan scan LOG | head``), with nothing on stderr, as grep
or cat killed by SIGPIPE end: the report was not all delivered, so neither a pass (0) nor a
``--fail-on`` hit (1) is claimed.

Each subcommand lives in ``logscan/commands/`` and is imported only when it runs (or when
``--help`` lists it): ``logscan scan --format json`` loads neither the HTML renderer, rich,
the gate nor the planning code (start-up, issue 18; docs/speed-and-hostile-input.md).
"""
from __future__ import annotations

import errno
import importlib
import os
import sys

import click

from . import __version__

EXIT_OK, EXIT_FAIL_ON, EXIT_USAGE = 0, 1, 2
#: standard output's reader went away (EPIPE): the status a shell shows for a command SIGPIPE killed
EXIT_PIPE_CLOSED = 128 + 13


class _PipeClosed(Exception):
    """Standard output's reader closed it (EPIPE) while a subcommand wrote: raised by
    ``_Group.invoke`` in place of the ``OSError``, which click's own ``main`` would turn into a
    silent exit 1 (the status of a ``--fail-on`` hit)."""

#: command name -> (module under logscan.commands, attribute)
COMMANDS = {
    "codes": ("info", "codes"), "diff": ("gate", "diff"), "explain": ("plan", "explain"),
    "follow": ("follow", "follow"), "gate": ("gate", "gate"), "ladder": ("plan", "ladder"),
    "matrix": ("plan", "matrix"), "packs": ("info", "packs_command"), "scan": ("scan", "scan"),
    "schema": ("info", "schema"),
}

#: names other code imports from ``logscan.cli`` (kept for compatibility), resolved on use
_EXPORTS = {"GATE_FORMATS": "gate", "FORMATS": "scan", "_failed": "scan", "_parse_fail_on": "scan",
            "_machine": "plan", "_scheme_for": "plan", "_release_key": "info", "_check_gpu": "common",
            "_check_version": "common", "_engine_releases": "common", "_input_errors": "common"}


def _raised(exc: BaseException, module: str, name: str) -> bool:
    """``exc`` is an instance of ``module.name``; False when that module was never imported
    (then nothing could have raised its exception), so catching costs no import."""
    mod = sys.modules.get(module)
    cls = getattr(mod, name, None) if mod is not None else None
    return cls is not None and isinstance(exc, cls)


class _Group(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        mod, attr = COMMANDS[name]
        return getattr(importlib.import_module(f"logscan.commands.{mod}"), attr)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise _PipeClosed() from None
            raise

    def main(self, *args, **kwargs):  # map click's usage errors to exit 2 (its default too)
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except _PipeClosed:
            _quiet_stdout()  # the interpreter's last flush of what is still buffered goes nowhere
            sys.exit(EXIT_PIPE_CLOSED)
        except click.exceptions.Abort as exc:
            if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
                # click turns a Ctrl-C before the signal handlers are installed into Abort:
                # an interruption (130), not a usage error (2); ``logscan.entry``
                from .entry import interrupted_early

                interrupted_early()
            click.echo("logscan: aborted", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            exc.show()
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            # the report could not be written (a full disk, /dev/full, a closed or failing pipe
            # end other than EPIPE): one line and exit 2, never a traceback; input errors are
            # reported by the commands themselves before this
            _quiet_stdout()
            where = f" ({exc.filename})" if exc.filename else ""
            click.echo(f"logscan: cannot write the output{where}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
        except Exception as exc:
            if _raised(exc, "logscan.packs.loader", "PackError"):
                click.echo(f"logscan: pattern pack error: {exc}", err=True)
                sys.exit(EXIT_USAGE)
            if _raised(exc, "logscan.sources.prefilter", "PrefilterError"):
                click.echo(f"logscan: {exc}", err=True)
                sys.exit(EXIT_USAGE)
            if _raised(exc, "logscan.sources.interrupt", "Interrupted"):
                # a second SIGINT/SIGTERM while the report was being written
                from .sources import interrupt

                click.echo(f"logscan: interrupted by {exc}", err=True)
                interrupt.exit_now(128 + exc.signum)
            raise


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="logscan")
def cli() -> None:
    """Read LLM serving-engine logs and tell which quantization kernel actually executes.

    logscan finds the kernel each quantized layer family runs, places it on the engine's
    ordered fallback ladder (rung k of n), gives its cost class (native, activation_upcast,
    portable, weight_only, emulated, dequant_at_load, or unknown when the log does not tell)
    and flags silent degradations. Engines: vLLM, SGLang, TensorRT-LLM, llama.cpp, TGI,
    LMDeploy, MLC-LLM.
    """


def __getattr__(name: str):
    """PEP 562: a subcommand object (``from logscan.cli import follow``) or a helper, on first use."""
    if name in COMMANDS:
        mod, attr = COMMANDS[name]
    elif name in _EXPORTS:
        mod, attr = _EXPORTS[name], name
    else:
        raise AttributeError(f"module 'logscan.cli' has no attribute {name!r}")
    return getattr(importlib.import_module(f"logscan.commands.{mod}"), attr)


def _quiet_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's own flush of a stdout that
    cannot be written (a full disk) at exit prints no second error."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.close(fd)
    except OSError:
        pass


def main() -> None:
    """Console-script entry point. Cyclic garbage collection is paused until the packs are
    loaded (``logscan.gcpause``: start-up cost). A closed standard output (``logscan scan x >&-``)
    is refused with exit 2: a report written nowhere would be a silent pass."""
    from . import gcpause

    if sys.stdout is None:
        if sys.stderr is not None:
            sys.stderr.write("logscan: standard output is closed: the report cannot be written "
                             "(redirect it to a file: 'logscan scan LOG > report.txt')\n")
        sys.exit(EXIT_USAGE)
    gcpause.pause()
    cli()


if __name__ == "__main__":
    main()
