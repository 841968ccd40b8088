"""Command line (click): ``logscan scan``, ``gate``, ``diff``, ``follow``, ``schema``, ``codes``, ``packs``.

Exit status: 0 analysed (gate: passed); 1 a ``--fail-on`` cost class or finding code is
present (gate: failed; diff: a family moved down, changed cost class or went missing); 2 bad
usage, an input not read to its end, a broken pattern pack or policy (one line on stderr, no
traceback); 130 / 143: scan or gate stopped by SIGINT / SIGTERM, after printing the report of
what was read, marked interrupted (docs/fail-closed.md).
"""
from __future__ import annotations

import json
import sys
from typing import Optional

import click

from . import __version__
from .formats import html as html_format
from .formats import json as json_format
from .formats import text as text_format
from .models import CostClass, Report
from .packs.loader import PackError, default_packs, load_packs
from .sources import interrupt
from .sources.interrupt import Interrupted
from .sources.prefilter import PrefilterError
from .sources.reader import stdin_isatty

FORMATS = {"text": text_format.render, "json": json_format.render, "html": html_format.render}
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
        except PrefilterError as exc:
            click.echo(f"logscan: {exc}", err=True)
            sys.exit(EXIT_USAGE)
        except BrokenPipeError:
            sys.exit(EXIT_OK)
        except Interrupted as exc:  # a second SIGINT/SIGTERM while the report was being written
            click.echo(f"logscan: interrupted by {exc}", err=True)
            interrupt.exit_now(128 + exc.signum)


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


def _parse_fail_on(value: str) -> set[str]:
    items = {v.strip() for v in value.split(",") if v.strip()}
    classes = {c.value for c in CostClass}
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
            f"{', '.join(gate_only)}: raised only by 'logscan gate' (it needs --baseline or a --policy), "
            f"never by scan, so this --fail-on could never fire", param_hint="--fail-on")
    return items


def _input_errors(report: Report) -> int:
    """One stderr line, naming the file, per input that could not be read to its end; their count.

    The rule of every subcommand (docs/fail-closed.md): such an input (missing, a directory,
    unreadable, a compressed stream that ends early or is corrupt) makes the exit status 2,
    after the report of what was read.
    """
    from .formats.text import input_error

    errors = [e for e in (input_error(s) for s in report.inputs) if e]
    for e in errors:
        click.echo(f"logscan: {e}", err=True)
    return len(errors)


def _exit_interrupted() -> None:
    """After SIGINT/SIGTERM: leave with 128 + the signal number (the report is already out)."""
    code = interrupt.status()
    if code is not None:
        interrupt.exit_now(code)


def _failed(report: Report, fail_on: set[str]) -> list[str]:
    hits = []
    if "NO_KERNEL_SEEN" in fail_on:  # the gate's code: a run, or a whole input, with no kernel selection
        with_runs = {r.source for r in report.runs}
        hits += [f"{s.source}: NO_KERNEL_SEEN" for s in report.inputs if not s.error and s.source not in with_runs]
        hits += [f"run {r.index + 1}: NO_KERNEL_SEEN (lines {r.first_line}-{r.last_line})"
                 for r in report.runs if not r.selections]
    lineage = default_packs().findings.lineage  # a parent code (UNSUPPORTED_ON_ARCH) takes its children
    for run in report.runs:
        if "START_FAILED" in fail_on and run.start_failure is not None:
            hits.append(f"run {run.index + 1}: START_FAILED (line {run.start_failure.line})")
        for s in run.selections:
            if s.cost_class.value in fail_on:
                hits.append(f"run {run.index + 1}: {s.kernel} is {s.cost_class.value} (line {s.line})")
        for f in run.findings:
            if fail_on.intersection(lineage(f.code)):
                hits.append(f"run {run.index + 1}: {f.code} (line {f.line})")
    return hits


@cli.command()
@click.argument("inputs", nargs=-1, metavar="[PATH|-]...")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True,
              help="Report format.")
@click.option("--fail-on", default="", metavar="LIST",
              help="Comma-separated cost classes and/or finding codes that make the exit status 1, "
                   "e.g. 'emulated,weight_only' or 'KERNEL_NOT_FOUND,START_FAILED'. Every code of "
                   "'logscan codes' works except those marked 'gate only' (refused: exit 2).")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
@click.option("--gpu", default=None, metavar="GPU",
              help="The GPU the log came from when the log does not say (sm90, 9.0, H100, B200, ...): "
                   "used to infer kernels the engine does not log (shown as inferred), and to report "
                   "selections below the rung it should reach as UNEXPECTED_FALLBACK.")
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

    Ctrl-C (SIGINT) or SIGTERM stops the read: the report of what was read is printed, marked
    interrupted, and the exit status is 130 (SIGINT) or 143 (SIGTERM). An input not read to its
    end (missing, a directory, a cut gzip) is exit status 2, one line on stderr naming it.

    \b
    Examples:
      logscan scan server.log
      vllm serve MODEL 2>&1 | logscan scan -
      logscan scan --format json --fail-on emulated,weight_only pod.log.gz
      logscan scan --gpu H100 sglang.log
      logscan scan --gpu B200 server.log
    """
    from .pipeline import scan_inputs

    fail = _parse_fail_on(fail_on) if fail_on else set()
    packs = load_packs(patterns_dir) if patterns_dir else default_packs()
    paths = list(inputs) or ["-"]
    if paths == ["-"] and stdin_isatty():
        raise click.UsageError("no input: give a log path, or pipe a log into 'logscan scan -'")
    _check_gpu(gpu)
    _check_version(cuda, "--cuda", "12.8")
    pins = _engine_releases(packs, engine_version) if engine_version else None
    interrupt.install()
    report = scan_inputs(paths, packs, gpu=gpu, cuda=cuda, engine_version=pins)
    if only_unexplained:
        lines = [(run.source, u) for run in report.runs for u in run.unexplained]
        for source, u in lines:
            click.echo(f"{source}:{u.line}\t{u.message}")
        if not lines:  # silence must not read as "nothing was there"
            click.echo(f"logscan: no kernel-relevant line left unexplained ({len(report.runs)} run(s) read)", err=True)
    else:
        click.echo(FORMATS[fmt](report), nl=False)
    errors = [s for s in report.inputs if s.error]
    for s in report.inputs:
        if s.truncated_lines:
            click.echo(f"logscan: {s.source}: {s.truncated_lines} over-long line(s) cut to the reader's limit",
                       err=True)
    if _input_errors(report):
        _exit_interrupted()
        sys.exit(EXIT_USAGE)
    hits = _failed(report, fail)
    if hits:
        for h in hits:
            click.echo(f"logscan: --fail-on: {h}", err=True)
        sys.exit(EXIT_FAIL_ON)
    sys.exit(EXIT_OK)


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="PATH|GLOB|-...")
@click.option("--state-file", type=click.Path(dir_okay=False), default=None,
              help="Where to keep positions and what was reported, to resume after a restart "
                   "without losing or repeating a line (written atomically).")
@click.option("--metrics-addr", default="127.0.0.1:9464", show_default=True, metavar="HOST:PORT",
              help="Prometheus /metrics, /livez, /readyz; port 0 picks a free one, 'off' disables. "
                   "Binding beyond loopback (0.0.0.0:9464, for Prometheus to scrape a pod) is your choice.")
@click.option("--mode", type=click.Choice(["sidecar", "daemonset"]), default="sidecar", show_default=True,
              help="sidecar: the scrape target is the pod (no pod labels on metrics); daemonset: "
                   "namespace/pod/container labels from /var/log/pods paths.")
@click.option("--namespace", envvar="LOGSCAN_NAMESPACE", default=None, help="Pod namespace for JSON lines [env LOGSCAN_NAMESPACE].")
@click.option("--pod", envvar="LOGSCAN_POD", default=None, help="Pod name for JSON lines [env LOGSCAN_POD].")
@click.option("--container", envvar="LOGSCAN_CONTAINER", default=None, help="Container for JSON lines [env LOGSCAN_CONTAINER].")
@click.option("--poll-interval", type=click.FloatRange(0.01, 60), default=0.25, show_default=True,
              help="Seconds between polls of the followed files.")
@click.option("--idle-flush", type=click.FloatRange(0.05, 3600), default=2.0, show_default=True,
              help="Seconds without new lines after which a multi-line message still gathering "
                   "lines is taken as complete.")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def follow(inputs: tuple[str, ...], state_file: str | None, metrics_addr: str, mode: str, namespace: str | None,
           pod: str | None, container: str | None, poll_interval: float, idle_flush: float,
           patterns_dir: str | None) -> None:
    """Follow logs as they grow (rotations, new files, stdin): JSON lines and Prometheus metrics.

    Each new kernel selection, finding or failed start ("type": "start_failure") is printed as
    one JSON line on stdout as soon as it is seen; with --state-file the state is written before
    each line is printed, so a restart (even after kill -9) never prints one twice. A path that
    is not there yet is said on stderr and keeps /readyz at 503. Stops cleanly on SIGTERM/SIGINT,
    saving --state-file (exit 0).

    \b
    Examples:
      logscan follow /logs/engine.log --state-file /logs/.logscan-state
      logscan follow --mode daemonset --metrics-addr 0.0.0.0:9464 '/var/log/pods/*/*/*.log'
      vllm serve MODEL 2>&1 | logscan follow -
    """
    from .follow.command import run_follow
    from .follow.podinfo import PodLabels

    import os

    if "-" in inputs and sys.stdin is None:  # ``<&-``: nothing to follow
        raise click.BadParameter("standard input is closed: give a file, or pipe a log into 'logscan follow -'",
                                 param_hint="PATH")
    for inp in inputs:
        if inp != "-" and os.path.isdir(inp):
            raise click.BadParameter(f"{inp} is a directory: give a file, or a glob such as "
                                     f"'{inp.rstrip('/')}/*.log'", param_hint="PATH")
    packs = load_packs(patterns_dir) if patterns_dir else default_packs()
    sys.exit(run_follow(list(inputs), packs, state_file, metrics_addr, mode,
                        PodLabels(namespace, pod, container), poll_interval, idle_flush))


@cli.command()
@click.option("--gate", "gated", is_flag=True, help="The schema of 'gate --format json' (the report plus 'gate').")
def schema(gated: bool) -> None:
    """Print the JSON schema of the report that 'scan --format json' prints."""
    from .models import Report as _Report

    if gated:
        from .gate.evaluate import GatedReport

        click.echo(json.dumps(GatedReport.model_json_schema(), indent=2))
        return
    click.echo(json.dumps(_Report.model_json_schema(), indent=2))


@cli.command()
def codes() -> None:
    """List every finding code with its severity and meaning (a child code names its parent).

    Codes marked 'gate only' need a policy or a baseline: only 'logscan gate' raises them,
    and 'scan --fail-on' refuses them. Every other code works in 'scan --fail-on'.
    """
    packs = default_packs()
    for code, info in sorted(packs.findings.code.items()):
        mark = "gate only" if info.raised_by == "gate" else ""
        parent = f" (kind of {info.parent}: a filter on it takes this code)" if info.parent else ""
        click.echo(f"{code:28} {info.severity:8} {mark:10} {info.title}{parent}")


@cli.command()
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Validate the packs of this folder instead of the shipped ones.")
def packs(patterns_dir: str | None) -> None:
    """Validate the pattern packs and list them (rules, ladders); exit 2 if a pack is broken."""
    ps = load_packs(patterns_dir) if patterns_dir else default_packs()
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


GATE_FORMATS = ("text", "json", "junit", "sarif", "github", "markdown", "html")


def _gate_renderer(fmt: str):
    import importlib

    return importlib.import_module(f"logscan.formats.{fmt}").render


def _rename_stdin(report: Report, name: Optional[str]) -> None:
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


@cli.command()
@click.argument("inputs", nargs=-1, metavar="[PATH|-]...")
@click.option("--policy", "policy_path", default=None, metavar="FILE",
              help="Gate policy (TOML). Default: the shipped policy (fail on emulated, dequant_at_load, "
                   "KERNEL_NOT_FOUND, UNSUPPORTED_ON_ARCH, NO_KERNEL_SEEN; warn on weight_only).")
@click.option("--baseline", "baseline_path", default=None, metavar="FILE",
              help="A JSON report (or a log) of a known-good start: fail when a layer family's kernel moved "
                   "down its ladder, changed cost class, or went missing.")
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
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def gate(inputs: tuple[str, ...], policy_path: Optional[str], baseline_path: Optional[str], fmt: str,
         outputs: tuple[str, ...], stdin_name: Optional[str], today: Optional[str], gpu: Optional[str],
         cuda: Optional[str], patterns_dir: Optional[str]) -> None:
    """Fail a CI pipeline when a log shows a kernel the policy forbids (exit 0 pass, 1 fail, 2 error).

    Every kernel selection, finding, run without a kernel (NO_KERNEL_SEEN) and, with
    --baseline, every layer family compared with the baseline is one check. A rule scoped by
    'versions' is judged, for a log that prints no release, on every release its inferred range
    (or any release) allows, and the worst outcome is kept. A failed start is refused as a
    baseline. An input not read to its end is exit status 2; SIGINT / SIGTERM stop the read,
    print the report of what was read, marked interrupted, and exit 130 / 143.

    \b
    Examples:
      vllm serve MODEL 2>&1 | tee server.log; logscan gate server.log
      logscan gate --policy gate.toml --format github --output junit=logscan.xml --output sarif=logscan.sarif server.log
      logscan gate --baseline good.json --stdin-name server.log - < server.log
      logscan gate --gpu B200 server.log
    """
    from .gate import default_policy_path
    from .gate.baseline import SideError, load_side, require_selection
    from .gate.evaluate import Verdict, evaluate
    from .gate.policy import PolicyError, load_policy
    from .pipeline import scan_inputs

    outs = _parse_outputs(outputs)
    day = _today(today)
    _check_gpu(gpu)
    _check_version(cuda, "--cuda", "12.8")
    packs = load_packs(patterns_dir) if patterns_dir else default_packs()
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
    interrupt.install()
    report = scan_inputs(paths, packs, gpu=gpu, cuda=cuda)
    _rename_stdin(report, stdin_name)
    result = evaluate(report, policy, packs.findings, day, baseline=baseline, baseline_name=baseline_path)
    for ofmt, opath in outs:
        rendered = _gate_renderer(ofmt)(report, result)  # before opening: a failure leaves no empty file
        try:
            with open(opath, "w", encoding="utf-8") as fh:
                fh.write(rendered)
        except OSError as exc:
            click.echo(f"logscan: cannot write {opath}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
    click.echo(_gate_renderer(fmt)(report, result), nl=False)
    if _input_errors(report):
        _exit_interrupted()
        sys.exit(EXIT_USAGE)
    failed = [c for c in result.checks if c.verdict == Verdict.fail]
    if failed:
        codes = sorted({c.code or c.kind for c in failed})
        click.echo(f"logscan: gate FAILED: {len(failed)} check(s) failed ({', '.join(codes)})", err=True)
    sys.exit(EXIT_FAIL_ON if result.verdict == Verdict.fail else EXIT_OK)


@cli.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def diff(old: str, new: str, fmt: str, patterns_dir: Optional[str]) -> None:
    """Compare two starts, layer family by family, rung by rung (each side a log or a JSON report).

    Exit 0 when no family moved down, changed cost class or went missing; 1 when one did; 2 on
    an unreadable side.

    \b
    Examples:
      logscan diff good.json server.log
      logscan diff vllm-0.10.log vllm-0.11.log
    """
    from .gate.baseline import SideError, compare, load_side, require_selection

    packs = load_packs(patterns_dir) if patterns_dir else default_packs()
    try:
        a, b = load_side(old, packs), load_side(new, packs)
        require_selection(old, a)  # an OLD side that compares nothing would show every family as new
    except SideError as exc:
        click.echo(f"logscan: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    changes = compare(a, b)
    if fmt == "json":
        click.echo(json.dumps({"old": old, "new": new, "changes": [c.model_dump(mode="json") for c in changes]},
                              indent=2))
    else:
        from .formats.markdown import cell

        rows = [["LAYER FAMILY", "OLD KERNEL", "RUNG", "COST CLASS", "NEW KERNEL", "RUNG", "COST CLASS", "MOVE"]]
        for c in changes:
            o, n = c.old, c.new
            rows.append([c.family, o.kernel if o else "-", o.rung_text() if o else "-",
                         o.cost_class.value if o else "-", n.kernel if n else "-", n.rung_text() if n else "-",
                         n.cost_class.value if n else "-",
                         c.status + ("" if c.cost == "same" else f", cost {c.cost}")])
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
                from .formats.table import render_table

                for line in render_table(rows):
                    click.echo(line)
                if any(r[2] == "-" or r[5] == "-" for r in rows[1:]):
                    click.echo("  RUNG - means no kernel on that side, or one on no shipped ladder (its place is unknown)")
                for c in changes:
                    click.echo(f"  {c.family}: {c.reasoning}")
    sys.exit(EXIT_FAIL_ON if any(c.regressed for c in changes) else EXIT_OK)


def _check_gpu(gpu: str | None) -> None:
    """A ``--gpu`` value must name a known GPU or compute capability; raises ``click.BadParameter``."""
    if gpu:
        from .analysis.gpus import resolve_gpu

        if resolve_gpu(gpu) is None:
            raise click.BadParameter(f"unknown GPU {gpu!r}: give a name from patterns/gpus.toml (H100, B200, "
                                     f"RTX 5090, ...), smNN or a compute capability like 9.0", param_hint="--gpu")


def _check_version(value: str | None, hint: str, example: str) -> None:
    """A version option must parse as PEP 440 (e.g. ``12.8``); raises ``click.BadParameter``."""
    from packaging.version import InvalidVersion, Version

    if value is None:
        return
    try:
        Version(value)
    except InvalidVersion:
        raise click.BadParameter(f"{value!r} is not a version like {example}", param_hint=hint) from None


def _machine(platform: str, gpu: str | None, cuda: str | None, with_: str | None, builds: str | None,
             env: tuple[str, ...], torch: str | None, **ckpt):
    """Build a ``Machine`` from the shared description options; bad values are usage errors."""
    from .analysis.gates import Machine
    from .analysis.gpus import package_name, resolve_gpu

    _check_version(cuda, "--cuda", "12.8")
    _check_version(torch, "--torch", "2.8.0")
    m = Machine(platform=platform.upper(), cuda=cuda, torch=torch)
    if gpu:
        g = resolve_gpu(gpu)
        if g is None:
            raise click.BadParameter(f"unknown GPU {gpu!r}: give a name from patterns/gpus.toml (H100, B200, "
                                     f"RTX 5090, ...), smNN or a compute capability like 9.0", param_hint="--gpu")
        m.cc, m.gpu, m.gfx = g.cc, g.name, g.gfx
        if platform.upper() == "CUDA" and g.platform != "CUDA":
            m.platform = g.platform
        elif platform.upper() != g.platform:
            raise click.BadParameter(f"{g.name} is a {g.platform} device, not {platform.upper()}: "
                                     f"drop --platform or give a {platform.upper()} device", param_hint="--gpu")
    if with_ is not None:
        items = [i.strip() for i in with_.split(",") if i.strip() and i.strip().lower() != "none"]
        m.packages = frozenset(package_name(i) for i in items)
    if builds is not None:
        m.builds = frozenset(b.strip() for b in builds.split(",") if b.strip() and b.strip().lower() != "none")
    for kv in env:
        if "=" not in kv:
            raise click.BadParameter(f"{kv!r} is not NAME=VALUE", param_hint="--env")
        k, v = kv.split("=", 1)
        m.env[k.strip()] = v.strip()
    _checkpoint(m, **ckpt)
    return m


def _checkpoint(m, scales=None, act_scale=None, group_size=None, n=None, k=None, gfx=None, moe=None) -> None:
    """Checkpoint and layer facts of ``ladder`` / ``matrix`` (``--scales``, ``--group-size``, ``--n``/``--k``, ``--gfx``)."""
    from .analysis.gpus import resolve_gpu

    if scales:
        m.checkpoint["scales"] = [scales]
    if act_scale:
        m.checkpoint["act_scale"] = [act_scale]
    if group_size is not None:
        m.checkpoint["group_size"] = [str(group_size)]
    if n is not None:
        m.checkpoint["out_features"] = [str(n)]
    if k is not None:
        m.checkpoint["in_features"] = [str(k)]
    if gfx:
        g = resolve_gpu(gfx)
        if g is None or not g.gfx:
            raise click.BadParameter(f"{gfx!r} is not a ROCm arch like gfx942 or gfx950", param_hint="--gfx")
        m.gfx, m.platform = g.gfx, "ROCM"
        if m.cc is None:
            m.cc, m.gpu = g.cc, m.gpu or g.name


def _scheme_for(scheme: str, scales: str | None, moe: bool | None) -> str:
    """The scheme a planning question names: ``FP8 --scales block`` is FP8-BLOCK, ``--moe`` the MoE variant."""
    from .analysis.predict import SchemeError, find_scheme, load_schemes

    try:
        sid, _ = find_scheme(scheme, load_schemes())
    except SchemeError:
        return scheme
    known = load_schemes().scheme
    if scales == "block" and sid == "FP8":
        sid = "FP8-BLOCK"
    if moe and not sid.endswith("-MOE"):
        base = sid.replace("-BLOCK", "")
        if f"{base}-MOE" not in known:
            raise click.UsageError(f"no MoE scheme is recorded for {sid} (MoE schemes: "
                                   + ", ".join(x for x in sorted(known) if x.endswith("-MOE")) + ")")
        sid = f"{base}-MOE"
    if moe is False and sid.endswith("-MOE"):
        sid = sid[: -len("-MOE")]
    return sid


def _engine_releases(packs, text: str, engine: str | None = None) -> dict[str, str]:
    """``--engine-version [ENGINE=]V`` -> engine -> shipped release, or exit 2 naming the nearest."""
    from .analysis.releases import ReleaseError, parse_engine_version

    try:
        return parse_engine_version(packs, text, engine)
    except ReleaseError as exc:
        raise click.UsageError(str(exc)) from None


def _machine_options(f):
    opts = [
        click.option("--platform", default="cuda", show_default=True, type=click.Choice(["cuda", "rocm", "xpu", "cpu"], case_sensitive=False)),
        click.option("--gpu", default=None, help="GPU name or compute capability: H100, B200, 'RTX 5090', sm90, 9.0."),
        click.option("--cuda", default=None, metavar="VERSION", help="CUDA runtime version, e.g. 12.8 (unknown if not given)."),
        click.option("--with", "with_", default=None, metavar="LIST",
                     help="Optional packages installed, e.g. flashinfer,cutedsl,b12x,deep_gemm. When given, "
                          "anything not listed counts as absent; 'none' for a bare install. Unknown if not given."),
        click.option("--builds", default=None, metavar="LIST",
                     help="Compile-time flags of the engine build, e.g. ENABLE_NVFP4_SM100 (unknown if not given)."),
        click.option("--env", multiple=True, metavar="NAME=VALUE", help="Environment variable or server option (repeatable)."),
        click.option("--torch", default=None, metavar="VERSION", help="PyTorch version (unknown if not given)."),
        click.option("--scales", default=None, type=click.Choice(["per-tensor", "per-channel", "block"]),
                     help="FP8 scale type (per-channel: per-channel weights or per-token activations). Unknown if not given."),
        click.option("--act-scale", default=None, type=click.Choice(["static", "dynamic"]),
                     help="FP8 activation scales: static (calibrated) or dynamic. Unknown if not given."),
        click.option("--group-size", default=None, type=int, help="Quantization group size (-1: per channel)."),
        click.option("--n", "n", default=None, type=click.IntRange(min=1), help="Layer output features N, when a shape is known."),
        click.option("--k", "k", default=None, type=click.IntRange(min=1), help="Layer input features K, when a shape is known."),
        click.option("--gfx", default=None, metavar="ARCH", help="ROCm arch, e.g. gfx942 (MI300X) or gfx950 (MI355X)."),
        click.option("--moe/--dense", "moe", default=None, help="MoE experts or a dense layer (default: the scheme as named)."),
        click.option("--gate-source", is_flag=True, help="Print each gate as its source expression, not in words."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@cli.command()
@click.argument("engine")
@click.argument("scheme")
@_machine_options
@click.option("--engine-version", default=None, metavar="V",
              help="Engine release whose ladder to walk (default newest); an unshipped one is refused (exit 2).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def ladder(engine, scheme, platform, gpu, cuda, with_, builds, env, torch, engine_version, fmt, gate_source, **ckpt):
    """Walk ENGINE's ladder for SCHEME on a described machine: each rung passes, fails or unknown.

    \b
    Examples:
      logscan ladder vllm NVFP4 --gpu H100
      logscan ladder vllm NVFP4 --gpu B200 --cuda 12.8 --with flashinfer,cutedsl
      logscan ladder vllm FP8-BLOCK --gpu 'RTX 5090' --format json
    """
    from .analysis.predict import SchemeError, walk
    from .formats.ladder import render_walk

    m = _machine(platform, gpu, cuda, with_, builds, env, torch, **ckpt)
    scheme = _scheme_for(scheme, ckpt.get("scales"), ckpt.get("moe"))
    packs = default_packs()
    if engine_version and engine.lower() in packs.packs:
        engine_version = _engine_releases(packs, engine_version, engine.lower())[engine.lower()]
    try:
        w = walk(packs, engine.lower(), scheme, m, engine_version)
    except SchemeError as exc:
        raise click.UsageError(str(exc))
    click.echo(w.model_dump_json(indent=2) + "\n" if fmt == "json" else render_walk(w, gate_source), nl=False)


@cli.command()
@click.argument("kernel")
@click.option("--engine-version", default=None, metavar="[ENGINE=]V",
              help="Only this shipped release (e.g. 0.31.0, vllm=0.31.0); an unshipped one is refused (exit 2).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(kernel, engine_version, fmt):
    """Every shipped ladder holding KERNEL: engine, releases, registry, rung k/n, cost class, gate.

    Consecutive releases that agree are one row, named by their release range."""
    from .analysis.predict import explain as _explain
    from .formats.ladder import render_explain

    if not kernel.strip():
        raise click.BadParameter("give a kernel class or backend name, e.g. MarlinNvFp4LinearKernel",
                                 param_hint="KERNEL")
    from .analysis.releases import group_rows

    packs = default_packs()
    rows = _explain(packs, kernel.strip())
    if engine_version:
        pins = _engine_releases(packs, engine_version)
        rows = [r for r in rows if pins.get(r.get("engine")) == r.get("ladder_version")]
    rows = group_rows(rows, packs)
    click.echo(json.dumps({"kernel": kernel, "ladders": rows}, indent=2) + "\n" if fmt == "json"
               else render_explain(kernel, [dict(r, ladder_version=r["releases"]) for r in rows]), nl=False)
    if not rows:  # an unknown name is not an answer: a script must not read it as one
        sys.exit(2)


@cli.command()
@click.argument("scheme")
@_machine_options
@click.option("--engine-version", "engine_versions", multiple=True, metavar="ENGINE=V",
              help="Use this shipped release of ENGINE (repeatable, e.g. vllm=0.31.0); unshipped: exit 2.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def matrix(scheme, platform, gpu, cuda, with_, builds, env, torch, engine_versions, fmt, gate_source, **ckpt):
    """One row per engine (vLLM, SGLang, TensorRT-LLM, llama.cpp, TGI, LMDeploy, MLC-LLM): what would execute SCHEME on the machine.

    \b
    Examples:
      logscan matrix NVFP4 --gpu H100
      logscan matrix NVFP4 --gpu B200 --cuda 12.8 --with flashinfer --format json
    """
    from .analysis.predict import SchemeError
    from .analysis.predict import matrix as _matrix
    from .formats.ladder import render_matrix

    from .analysis.releases import pinned

    m = _machine(platform, gpu, cuda, with_, builds, env, torch, **ckpt)
    scheme = _scheme_for(scheme, ckpt.get("scales"), ckpt.get("moe"))
    packs = default_packs()
    for ev in engine_versions:
        for eng, rel in _engine_releases(packs, ev).items():
            packs = pinned(packs, eng, rel)
    try:
        mx = _matrix(packs, scheme, m)
    except SchemeError as exc:
        raise click.UsageError(str(exc))
    if fmt == "json":
        click.echo(mx.model_dump_json(indent=2))
    else:
        click.echo(render_matrix([r.model_dump() for r in mx.rows], f"{mx.scheme} ({mx.scheme_title})", mx.machine), nl=False)


def main() -> None:
    """Console-script entry point."""
    cli()


if __name__ == "__main__":
    main()
