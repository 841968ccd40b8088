"""``logscan gate`` (a CI gate over a policy and a baseline) and ``logscan diff`` (two starts side by side)."""
from __future__ import annotations

import json
import sys
from typing import Optional

import click

from ..sources import interrupt
from ..sources.opening import stdin_isatty
from .common import (EXIT_FAIL_ON, EXIT_OK, EXIT_USAGE, _check_gpu, _check_version, _exit_interrupted,
                     _engine_releases, _input_errors, packs_for)

GATE_FORMATS = ("text", "json", "junit", "sarif", "github", "markdown", "html")


def _gate_renderer(fmt: str):
    import importlib

    return importlib.import_module(f"logscan.formats.{fmt}").render


def _rename_stdin(report, name: Optional[str]) -> None:
    """Give ``<stdin>`` a file name (CI annotations and SARIF locations need one)."""
    if not name:
        return
    for st in report.inputs:
        if st.source == "<stdin>":
            st.source = name
    for run in report.runs:
        if run.source == "<stdin>":
            run.source = name
    for ev in report.events:
        if ev.source == "<stdin>":
            ev.source = name


def _parse_outputs(values: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for v in values:
        fmt, sep, path = v.partition("=")
        if not sep or fmt not in GATE_FORMATS or not path:
            raise click.BadParameter(f"{v!r}: expected FORMAT=PATH with FORMAT one of {', '.join(GATE_FORMATS)}",
                                     param_hint="--output")
        out.append((fmt, path))
    return out


def _today(value: Optional[str]):
    import datetime as _dt

    if value is None:
        return _dt.datetime.now(_dt.timezone.utc).date()
    try:
        return _dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD)", param_hint="--today") from None


@click.command()
@click.argument("inputs", nargs=-1, metavar="[PATH|-]...")
@click.option("--policy", "policy_path", default=None, metavar="FILE",
              help="Gate policy (TOML). Default: the shipped policy (fail on emulated, dequant_at_load, "
                   "KERNEL_NOT_FOUND, UNSUPPORTED_ON_ARCH, START_FAILED, NO_KERNEL_SEEN, START_INCOMPLETE, "
                   "INPUT_UNREADABLE; warn on weight_only, UNEXPECTED_FALLBACK, KERNEL_LINE_UNREAD; any other "
                   "finding by its severity: error fails, warning warns).")
@click.option("--baseline", "baseline_path", default=None, metavar="FILE",
              help="A JSON report (or a log) of a known-good start: fail when a layer family's kernel moved "
                   "down its ladder, changed cost class, or went missing. A file is a report when it "
                   "parses as one; one that starts like JSON but does not parse is an error (exit 2); "
                   "anything else is read as a log.")
@click.option("--format", "fmt", type=click.Choice(GATE_FORMATS), default="text", show_default=True,
              help="What to print on stdout.")
@click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH",
              help="Also write FORMAT to PATH (repeatable), e.g. --output junit=logscan.xml --output sarif=logscan.sarif.")
@click.option("--stdin-name", default=None, metavar="NAME",
              help="File name to report for a log read from stdin (annotations and SARIF locations).")
@click.option("--today", "today", default=None, metavar="YYYY-MM-DD", envvar="LOGSCAN_TODAY",
              help="Judge allow-list expiry on this date (default: today, UTC) [env LOGSCAN_TODAY].")
@click.option("--gpu", default=None, metavar="GPU",
              help="The GPU the log came from when the log does not say (sm90, H100, B200, ...), as for "
                   "scan: a selection below the rung that GPU should reach is UNEXPECTED_FALLBACK.")
@click.option("--cuda", default=None, metavar="VERSION",
              help="torch.version.cuda of the engine (e.g. 12.8), as for scan.")
@click.option("--engine-version", default=None, metavar="[ENGINE=]V",
              help="The engine release of runs whose log prints none (a shipped release, e.g. 0.31.0 or "
                   "vllm=0.31.0), as for scan; an unknown release is refused (exit 2) with the nearest ones named.")
@click.option("--partial-log", is_flag=True,
              help="The log is a window of a start (a tail, an excerpt), not the whole start: a run not "
                   "seen to come up or fail (START_INCOMPLETE) is not judged (a note on stderr says so). "
                   "To warn instead, write a policy rule codes = [\"START_INCOMPLETE\"], level = \"warn\".")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def gate(inputs: tuple[str, ...], policy_path: Optional[str], baseline_path: Optional[str], fmt: str,
         outputs: tuple[str, ...], stdin_name: Optional[str], today: Optional[str], gpu: Optional[str],
         cuda: Optional[str], patterns_dir: Optional[str], engine_version: Optional[str] = None,
         partial_log: bool = False) -> None:
    """Fail a CI pipeline when a log shows a kernel the policy forbids (exit 0 pass, 1 fail, 2 error).

    With no PATH the log is read from stdin (a note says so on stderr; a terminal is refused):
    an empty $LOG in 'logscan gate $LOG' reads the runner's stdin, so quote it.

    Every kernel selection, finding, run without a kernel (NO_KERNEL_SEEN) and, with
    --baseline, every layer family compared with the baseline is one check. A rule scoped by
    'versions' is judged, for a log that prints no release, on every release its inferred range
    (or any release) allows, and the worst outcome is kept. A failed start is refused as a
    baseline. An input not read to its end is exit status 2; SIGINT / SIGTERM stop the read,
    print the report of what was read, marked interrupted, and exit 130 / 143. A run that chose
    kernels but shows neither a ready line nor a failure (the log was cut off) is
    START_INCOMPLETE; an input no line of which could be read is INPUT_UNREADABLE.

    \b
    Examples:
      vllm serve MODEL 2>&1 | tee server.log; logscan gate server.log
      logscan gate --policy gate.toml --format github --output junit=logscan.xml --output sarif=logscan.sarif server.log
      logscan gate --baseline good.json --stdin-name server.log - < server.log
      logscan gate --gpu B200 server.log
    """
    from ..gate import default_policy_path
    from ..gate.baseline import SideError, load_side, require_selection
    from ..gate.evaluate import Verdict, evaluate
    from ..gate.policy import PolicyError, load_policy
    from ..pipeline import scan_inputs

    outs = _parse_outputs(outputs)
    day = _today(today)
    _check_gpu(gpu)
    _check_version(cuda, "--cuda", "12.8")
    packs = packs_for(patterns_dir)
    pins = _engine_releases(packs, engine_version) if engine_version else None
    try:
        policy = load_policy(policy_path, set(packs.findings.code), default_policy_path())
    except PolicyError as exc:
        click.echo(f"logscan: policy error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    baseline = None
    if baseline_path:
        try:
            baseline = load_side(baseline_path, packs)
            require_selection(baseline_path, baseline)
        except SideError as exc:
            click.echo(f"logscan: baseline: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    paths = list(inputs) or ["-"]
    if paths == ["-"] and stdin_isatty():
        raise click.UsageError("no input: give a log path, or pipe a log into 'logscan gate -'")
    if not inputs:  # 'logscan gate $LOG' with an empty $LOG: say that stdin is what is judged
        click.echo("logscan: gate: no PATH given: reading the log from stdin (give - to say so, or quote "
                   "the path variable)", err=True)
    interrupt.install()
    report = scan_inputs(paths, packs, gpu=gpu, cuda=cuda, engine_version=pins)
    _rename_stdin(report, stdin_name)
    from ..gate.evaluate import ready_engines_of

    result = evaluate(report, policy, packs.findings, day, baseline=baseline, baseline_name=baseline_path,
                      ready_engines=None if partial_log else ready_engines_of(packs), packs=packs)
    if partial_log:  # the user's word, said where it cannot be missed
        click.echo("logscan: gate: --partial-log: a start not seen to come up or fail (START_INCOMPLETE) "
                   "is not judged", err=True)
    for ofmt, opath in outs:
        rendered = _gate_renderer(ofmt)(report, result, packs)  # before opening: a failure leaves no empty file
        try:
            with open(opath, "w", encoding="utf-8") as fh:
                fh.write(rendered)
        except OSError as exc:
            click.echo(f"logscan: cannot write {opath}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
    click.echo(_gate_renderer(fmt)(report, result, packs), nl=False)
    if _input_errors(report):
        _exit_interrupted()
        sys.exit(EXIT_USAGE)
    failed = [c for c in result.checks if c.verdict == Verdict.fail]
    if failed:
        codes = sorted({c.code or c.kind for c in failed})
        # a failing check of a run with folded repeats (a crash loop) failed that many more times
        runs = {(c.source, c.run): c.folded.runs for c in failed if c.folded is not None}
        again = f"; their run(s) repeated {sum(runs.values()):,} more time(s), folded" if runs else ""
        click.echo(f"logscan: gate FAILED: {len(failed)} check(s) failed ({', '.join(codes)}){again}", err=True)
    sys.exit(EXIT_FAIL_ON if result.verdict == Verdict.fail else EXIT_OK)


@click.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def diff(old: str, new: str, fmt: str, patterns_dir: Optional[str]) -> None:
    """Compare two starts, layer family by family, rung by rung (each side a log or a JSON report).

    A side is a JSON report when it parses as one (``scan --format json``); a file that starts like
    JSON but does not parse (a truncated report) is an error; anything else is read as a log.

    Exit 0 when no family moved down, changed cost class or went missing (a family only NEW has
    is "new, family added": no regression); 1 when one did ("missing, family removed" for a family
    only OLD has), or when a NEW run failed to start or failed while serving (its kernels did not
    serve); 2 on an unreadable, empty or damaged side, or an OLD side with no kernel selection.

    \b
    Examples:
      logscan diff good.json server.log
      logscan diff vllm-0.10.log vllm-0.11.log
    """
    from ..gate.baseline import SideError, compare, load_side, new_side_failures, require_selection

    packs = packs_for(patterns_dir)
    side = "old"
    try:
        a = load_side(old, packs)
        side = "new"
        b = load_side(new, packs)
        side = "old"
        require_selection(old, a)  # an OLD side that compares nothing would show every family as new
    except SideError as exc:
        click.echo(f"logscan: {exc}", err=True)
        if fmt == "json":  # a JSON reader gets a document that says which side failed and why (misc37)
            path = old if side == "old" else new
            msg = str(exc)
            reason = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
            click.echo(json.dumps({"old": old, "new": new, "changes": [], "new_failures": [],
                                   "error": {"side": side, "path": path, "reason": reason}}, indent=2))
        sys.exit(EXIT_USAGE)
    changes = compare(a, b, packs)
    failed = new_side_failures(b)
    if fmt == "json":
        click.echo(json.dumps({"old": old, "new": new, "changes": [c.model_dump(mode="json") for c in changes],
                               "new_failures": failed}, indent=2))
    else:
        from ..formats.markdown import cell

        rows = [["LAYER FAMILY", "OLD KERNEL", "RUNG", "COST CLASS", "NEW KERNEL", "RUNG", "COST CLASS", "MOVE"]]
        for c in changes:
            o, n = c.old, c.new
            rows.append([c.family, o.kernel if o else "-", o.rung_text() if o else "-",
                         o.cost_class.value if o else "-", n.kernel if n else "-", n.rung_text() if n else "-",
                         n.cost_class.value if n else "-",
                         c.move_text()])
        if fmt == "markdown":
            click.echo("| " + " | ".join(rows[0]) + " |")
            click.echo("|" + "---|" * len(rows[0]))
            for r in rows[1:]:
                click.echo("| " + " | ".join(cell(x) for x in r) + " |")
        else:
            click.echo(f"old: {old}\nnew: {new}\n")
            if not changes:
                click.echo("no quantized kernel selection on either side")
            else:
                from ..formats.table import render_table

                for line in render_table(rows):
                    click.echo(line)
                if any(r[2] == "-" or r[5] == "-" for r in rows[1:]):
                    click.echo("  RUNG - means no kernel on that side, or one on no shipped ladder (its place is unknown)")
                for c in changes:
                    click.echo(f"  {c.family}: {c.reasoning}")
        for f in failed:
            other = f["headline_line"] != f["line"]  # said as formats.failure.at_words says it
            at = f"line {f['line']}" + (f", cause line {f['headline_line']}" if other else "")
            began = f" (line {f['line']}: {f['evidence']})" if other else ""
            kern = f"; failing kernel {f['failing_kernel']}" if f.get("failing_kernel") else ""
            click.echo(f"{'- ' if fmt == 'markdown' else '  '}new run {f['run']}: {f['what']} at {at}: "
                       f"{f['headline']}{began}{kern} (its kernels did not serve: a regression whatever the families say)")
    sys.exit(EXIT_FAIL_ON if failed or any(c.regressed for c in changes) else EXIT_OK)
