"""The Python API: ``logscan.scan(...)`` and ``logscan.gate(...)``, the same pipeline as the CLI.

``scan`` reads logs (paths, or the lines of one log) and returns the ``Report`` that
``logscan scan --format json`` prints; ``gate`` judges a report with a policy and returns the
``GateResult`` that ``logscan gate --format json`` prints under ``gate``. Both are stable:
``logscan.__all__`` lists what is public, and the package ships ``py.typed``.
"""
from __future__ import annotations

import datetime as _dt
import os
import tempfile
from typing import IO, Iterable, Optional, Sequence, Union

from .gate import default_policy_path
from .gate.baseline import load_side, require_selection
from .gate.evaluate import GateResult, evaluate
from .gate.policy import Policy, PolicyError, load_policy
from .models import Report
from .packs.loader import PackSet, default_packs, load_packs

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[PathLike, Sequence[PathLike], IO[str], IO[bytes], Iterable[str], Iterable[bytes]]


def _packs(patterns: Optional[PathLike]) -> PackSet:
    return load_packs(str(patterns)) if patterns is not None else default_packs()


def _is_lines(source: object) -> bool:
    if isinstance(source, (str, os.PathLike)):
        return False
    if hasattr(source, "read"):
        return True
    if isinstance(source, (list, tuple)):
        # a list of paths, unless it holds bytes or text that carries its own newlines
        return any(isinstance(x, bytes) or (isinstance(x, str) and ("\n" in x or "\r" in x)) for x in source)
    return True  # a generator or any other iterator: the lines of one log


def _spool(source: object, tmp: IO[bytes]) -> None:
    if hasattr(source, "read"):
        while True:
            chunk = source.read(1 << 20)  # type: ignore[attr-defined]
            if not chunk:
                break
            tmp.write(chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk)
        return
    for line in source:  # type: ignore[attr-defined]
        data = line.encode("utf-8", "surrogateescape") if isinstance(line, str) else bytes(line)
        tmp.write(data if data.endswith(b"\n") else data + b"\n")


def _rename(report: Report, old: str, new: str) -> None:
    for items in (report.inputs, report.runs, report.events):
        for it in items:
            if it.source == old:
                it.source = new


def scan(paths_or_lines: Source, *, name: str = "<lines>", gpu: Optional[str] = None,
         cuda: Optional[str] = None, patterns: Optional[PathLike] = None,
         prefilter: Optional[str] = None) -> Report:
    """Scan logs and return the report (``logscan scan --format json`` is its JSON).

    ``paths_or_lines``: a path (``str`` or ``os.PathLike``; ``"-"`` is stdin; ``.gz`` read by
    magic bytes) or a list/tuple of paths; or the lines of one log: a file object (text or
    binary), a generator or iterator of ``str``/``bytes`` lines, or a list of lines that carry
    their newlines (``f.readlines()``). Lines are reported under ``name``; each line keeps its
    1-based number. ``gpu`` (``H100``, ``sm90``, ``9.0``) and ``cuda`` (``12.8``) describe the
    machine when the log does not (inferences stay ``observed=False``); ``patterns``: a folder
    of pattern packs instead of the shipped ones; ``prefilter``: ``hyperscan``, ``python`` or
    ``off``.

    An input that cannot be read does not raise: its ``report.inputs[i].error`` says why (the
    CLI's exit status 2). Raises ``logscan.packs.loader.PackError`` for a broken pattern
    folder and ``ValueError`` for an unknown GPU name or prefilter engine.
    """
    if gpu is not None:
        from .analysis.gpus import resolve_gpu, unknown_gpu_message

        if resolve_gpu(gpu) is None:
            raise ValueError(unknown_gpu_message(gpu))
    from .pipeline import scan_inputs

    packs = _packs(patterns)
    if not _is_lines(paths_or_lines):
        items = [paths_or_lines] if isinstance(paths_or_lines, (str, os.PathLike)) else list(paths_or_lines)  # type: ignore[arg-type]
        return scan_inputs([os.fspath(p) for p in items], packs, gpu=gpu, cuda=cuda, prefilter=prefilter)
    # the lines of one log: spooled to a private temporary file, so memory stays flat
    with tempfile.NamedTemporaryFile(prefix="logscan-", suffix=".log") as tmp:
        _spool(paths_or_lines, tmp)
        tmp.flush()
        report = scan_inputs([tmp.name], packs, gpu=gpu, cuda=cuda, prefilter=prefilter)
    _rename(report, tmp.name, name)
    return report


def gate(report: Report, policy: Optional[PathLike] = None, *, baseline: Optional[Union[PathLike, Report]] = None,
         today: Optional[_dt.date] = None, patterns: Optional[PathLike] = None,
         partial_log: bool = False) -> GateResult:
    """Judge ``report`` as ``logscan gate`` does; ``result.verdict`` is ``pass``, ``warn`` or ``fail``.

    ``policy``: a policy TOML file (its rules, then the shipped defaults unless it says
    ``defaults = false``), or None for the shipped default policy
    (``patterns/gate-policy.toml``). ``baseline``: a known-good start, as a ``Report`` or a path
    (JSON report or log). ``today`` judges allow-list expiry (default: today, UTC): pass a
    fixed date in tests. ``partial_log``: the log is a window of a start, as ``gate
    --partial-log`` (a run not seen to come up or fail, START_INCOMPLETE, is not judged). Every check is in ``result.checks`` (kind, code, verdict, the rule
    that decided it). Raises ``PolicyError`` for an unreadable or invalid policy and
    ``logscan.gate.baseline.SideError`` for a baseline that is unreadable or holds no kernel
    selection (a baseline that compares nothing must not pass every family as new).
    """
    packs = _packs(patterns)
    pol: Policy = load_policy(None if policy is None else os.fspath(policy), set(packs.findings.code),
                              default_policy_path())
    base: Optional[Report] = None
    base_name: Optional[str] = None
    if isinstance(baseline, Report):
        base, base_name = baseline, "<baseline report>"
        require_selection(base_name, base)
    elif baseline is not None:
        base_name = os.fspath(baseline)
        base = load_side(base_name, packs)
        require_selection(base_name, base)
    day = today or _dt.datetime.now(_dt.timezone.utc).date()
    from .gate.evaluate import ready_engines_of

    return evaluate(report, pol, packs.findings, day, baseline=base, baseline_name=base_name,
                    ready_engines=None if partial_log else ready_engines_of(packs), packs=packs)


__all__ = ["scan", "gate"]
