"""``logscan scan``: read logs, print the report (text, json, html), exit by ``--fail-on``.

Only what the chosen format needs is imported: ``--format json`` never loads rich or the HTML
renderer (start-up, issue 18).
"""
from __future__ import annotations

import sys

import click

from ..sources import interrupt
from ..sources.opening import stdin_isatty
from .common import (EXIT_FAIL_ON, EXIT_OK, EXIT_USAGE, _check_gpu, _check_version, _engine_releases,
                     _exit_interrupted, _input_errors, _refuse_unopenable, packs_for)

#: report format -> module of ``logscan.formats`` whose ``render(report)`` prints it
FORMATS = {"text": "text", "json": "json", "html": "html"}
#: cost classes (``models.CostClass`` values), kept here so option parsing does not import the models
COST_CLASSES = ("native", "weight_only", "activation_upcast", "emulated", "dequant_at_load", "portable", "unknown")


def render(fmt: str, report, packs=None) -> str:
    """The report in ``fmt`` (a key of ``FORMATS``), with the packs it was read with (``packs``)."""
    import importlib

    return importlib.import_module(f"logscan.formats.{FORMATS[fmt]}").render(report, packs=packs)


def _parse_fail_on(value: str) -> set[str]:
    items = {v.strip() for v in value.split(",") if v.strip()}
    if not items:  # a policy that matches nothing must not pass silently
        raise click.BadParameter(f"empty list {value!r}: name at least one cost class or finding code "
                                 "(e.g. 'emulated,weight_only'), or leave --fail-on out", param_hint="--fail-on")
    from ..packs.loader import default_packs

    classes = set(COST_CLASSES)
    codes = default_packs().findings.code
    bad = sorted(i for i in items if i not in classes and i not in codes)
    if bad:
        raise click.BadParameter(
            f"unknown cost class or finding code: {', '.join(bad)} "
            f"(cost classes: {', '.join(sorted(classes))}; codes: see 'logscan codes')",
            param_hint="--fail-on")
    gate_only = sorted(i for i in items if i in codes and codes[i].raised_by == "gate")
    if gate_only:
        raise click.BadParameter(
            f"{', '.join(gate_only)}: raised only by 'logscan gate' (run 'logscan gate' on the log; some gate "
            f"codes need --baseline or a --policy), never by scan, so this --fail-on could never fire",
            param_hint="--fail-on")
    return items

def _failed(report, fail_on: set[str]) -> list[str]:
    hits = []
    if "NO_KERNEL_SEEN" in fail_on:  # the gate's code: a run, or a whole input, with no kernel selection
        with_runs = {r.source for r in report.runs}
        hits += [f"{s.source}: NO_KERNEL_SEEN" for s in report.inputs if not s.error and s.source not in with_runs]
        hits += [f"run {r.index + 1}: NO_KERNEL_SEEN (lines {r.first_line}-{r.last_line})"
                 for r in report.runs if not r.selections]
    from ..packs.loader import default_packs

    from ..formats.failure import at_words, head

    lineage = default_packs().findings.lineage  # a parent code (UNSUPPORTED_ON_ARCH) takes its children
    for run in report.runs:
        if "START_FAILED" in fail_on and run.start_failure is not None:
            hits.append(f"run {run.index + 1}: START_FAILED ({at_words(run.start_failure)}): "
                        f"{head(run.start_failure)[1][:160]}")
        for s in run.selections:
            if s.cost_class.value in fail_on:
                hits.append(f"run {run.index + 1}: {s.kernel} is {s.cost_class.value} (line {s.line})")
            if s.ladder and s.ladder.undecided and fail_on.intersection(lineage("FALLBACK_UNEXPLAINED")):
                # the gate's check, from the report's facts (ladder.undecided), like NO_KERNEL_SEEN
                hits.append(f"run {run.index + 1}: FALLBACK_UNEXPLAINED: {s.kernel} (line {s.line}) below "
                            + ", ".join(u.kernel for u in s.ladder.undecided))
        for f in run.findings:
            if fail_on.intersection(lineage(f.code)):
                hits.append(f"run {run.index + 1}: {f.code} (line {f.line})")
    return hits


@click.command()
@click.argument("inputs", nargs=-1, metavar="[PATH|-]...")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
              help="Report format.")
@click.option("--fail-on", default=None, metavar="LIST",
              help="Comma-separated cost classes and/or finding codes that make the exit status 1, "
                   "e.g. 'emulated,weight_only' or 'KERNEL_NOT_FOUND,START_FAILED'. Every code of "
                   "'logscan codes' works except those marked 'gate only' (refused: exit 2).")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
@click.option("--gpu", default=None, metavar="GPU",
              help="The GPU the log came from when the log does not say (sm90, 9.0, H100, B200, ...). "
                   "Used for three things only: the kernel of a layer family an engine never logs, where "
                   "its pack has a [[walk]] table (TGI, llama.cpp, MLC-LLM) and the walk is certain (shown "
                   "as inferred); UNEXPECTED_FALLBACK for a logged selection below the rung this GPU should "
                   "reach; GPU_CONTRADICTS_LOG for a logged kernel this GPU is too old for. It never supplies "
                   "a kernel for an engine that logs its own (vLLM, SGLang): no kernel line stays NO_KERNEL_SEEN.")
@click.option("--cuda", default=None, metavar="VERSION",
              help="torch.version.cuda of the engine (e.g. 12.6): SGLang's arch predicates are CUDA-version gates.")
@click.option("--unexplained", "only_unexplained", is_flag=True,
              help="Print only the kernel-relevant lines that gave no selection or finding, one per line "
                   "(SOURCE:LINE<TAB>message): input for writing rules.")
@click.option("--engine-version", default=None, metavar="[ENGINE=]V",
              help="The engine release of runs whose log prints none (a shipped release, e.g. 0.31.0 or "
                   "vllm=0.31.0); an unknown release is refused (exit 2) with the nearest ones named.")
def scan(inputs: tuple[str, ...], fmt: str, fail_on: str, patterns_dir: str | None,
         gpu: str | None, cuda: str | None, only_unexplained: bool = False,
         engine_version: str | None = None) -> None:
    """Scan log files (or - for stdin; .gz read transparently) and report kernels and findings.

    With no PATH the log is read from stdin (a terminal is refused): an empty $LOG in
    'logscan scan $LOG' reads stdin, so quote it.

    Ctrl-C (SIGINT) or SIGTERM stops the read: the report of what was read is printed, marked
    interrupted, and the exit status is 130 (SIGINT) or 143 (SIGTERM); before any input was
    read, one line on stderr and 130. An input not read to its end is exit status 2, one line on
    stderr naming it: a cut gzip after the report of what was read; an input that cannot be
    opened (missing, a directory): with --format json or html the report is printed, that input
    in inputs[] with its error, the others scanned; the text report and --unexplained refuse it
    before any output ('logscan gate' reports the others too, with INPUT_UNREADABLE).

    \b
    Examples:
      logscan scan server.log
      vllm serve MODEL 2>&1 | logscan scan -
      logscan scan --format json --fail-on emulated,weight_only pod.log.gz
      logscan scan --gpu H100 sglang.log
      logscan scan --gpu B200 server.log
    """
    from ..pipeline import scan_inputs

    fail = _parse_fail_on(fail_on) if fail_on is not None else set()
    packs = packs_for(patterns_dir)
    paths = list(inputs) or ["-"]
    if paths == ["-"] and stdin_isatty():
        raise click.UsageError("no input: give a log path, or pipe a log into 'logscan scan -'")
    _check_gpu(gpu)
    _check_version(cuda, "--cuda", "12.8")
    pins = _engine_releases(packs, engine_version) if engine_version else None
    if only_unexplained or fmt == "text":  # before any output: no report of the others, then an error
        _refuse_unopenable(paths)
    # json / html: a document a consumer (a CI gate, a sidecar) reads, so it is printed whatever the
    # inputs: an input that cannot be opened is in it (inputs[].error: its path and why), the others
    # are scanned and reported, and the exit status is still 2 (misc37)
    interrupt.install()
    report = scan_inputs(paths, packs, gpu=gpu, cuda=cuda, engine_version=pins)
    if only_unexplained:
        lines = [(run.source, u) for run in report.runs for u in run.unexplained]
        for source, u in lines:
            click.echo(f"{source}:{u.line}\t{u.message}")
        failed = [run for run in report.runs if run.start_failure is not None]
        if not lines:  # silence must not read as "nothing was there"
            click.echo(f"logscan: no kernel-relevant line left unexplained ({len(report.runs)} run(s) read)"
                       + (f", but {len(failed)} start(s) FAILED" if failed else ""), err=True)
        from ..formats.failure import at_words, head, kernel_words

        for run in failed:  # a traceback's kernel frames are explained by the failed start, not by nothing
            sf = run.start_failure
            _, words = head(sf)
            click.echo(f"logscan: {run.source}:{sf.line}: run {run.index + 1} start FAILED (START_FAILED) at "
                       f"{at_words(sf)}: {words[:200]}"
                       + (f"; {kernel_words(sf)[:200]}" if sf.failing_kernel else "")
                       + "; its traceback lines are the evidence", err=True)
    else:
        click.echo(render(fmt, report, packs), nl=False)
    errors = [s for s in report.inputs if s.error]
    from ..formats.inputs import input_warnings

    for s in report.inputs:  # every repair or doubt about an input, on stderr too: a pipe's reader
        # sees it whatever --format it asked for (a trial: urandom's 'does not look like a log' and
        # invalid UTF-8 reached stdout only, the over-long line both); read errors: _input_errors
        for w in input_warnings(s):
            if not (s.error and w.endswith(s.error[len(s.source) + 2:] if s.error.startswith(s.source + ": ") else s.error)):
                click.echo(f"logscan: {s.source}: {w}", err=True)
    if _input_errors(report):
        _exit_interrupted()
        sys.exit(EXIT_USAGE)
    hits = _failed(report, fail)
    if hits:
        for h in hits:
            click.echo(f"logscan: --fail-on: {h}", err=True)
        sys.exit(EXIT_FAIL_ON)
    sys.exit(EXIT_OK)
