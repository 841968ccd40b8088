"""Compare two reports layer family by layer family: which kernel moved on its ladder, rung by rung.

``compare(old, new)`` pairs the selections of two ``Report``s by layer family (then, for a
family renamed between releases, by the ladder registry) and says for each pair whether the
kernel moved down its ladder, up, or changed cost class. ``load_side`` reads either a saved
JSON report (``logscan scan --format json``, or a gate JSON report) or a log, through the one
pipeline. Used by ``logscan diff`` and ``logscan gate --baseline``.
"""
from __future__ import annotations

import json
from dataclasses import field
from typing import Literal, Optional

from ..models import COST_ORDER, CostClass, Report, Selection
from ..packs.loader import PackSet
from ..plain import PlainModel, plain
from ..sources.safe import safe_text
from .rungs import names_of, rank, same_kernel

Status = Literal["same", "down", "up", "moved", "missing", "new"]
#: ``added`` / ``removed``: the family has a kernel on one side only, so no cost class to compare
CostMove = Literal["same", "worse", "better", "added", "removed"]


@plain
class FamilyState(PlainModel):
    """The kernel of one layer family in one report (the worst one when runs disagree)."""

    family: str
    kernel: str
    cost_class: CostClass
    registry: Optional[str] = None
    platform: Optional[str] = None
    ladder_version: Optional[str] = None
    rung: Optional[int] = None
    rungs: Optional[int] = None
    fell: Optional[int] = None
    source: str
    line: int
    evidence: str
    #: the ladder class the rung is counted for (``ladder.kernel_class``); not dumped
    kernel_class: Optional[str] = field(default=None, metadata={"exclude": True})
    #: the rungs ``rung`` counts on, in order: the run's logged candidate list, else the shipped
    #: list of ``registry`` / ``platform`` at ``ladder_version`` (None: not known); not dumped
    names: Optional[list[str]] = field(default=None, metadata={"exclude": True})

    def rung_text(self) -> str:
        """``6/8`` or ``-`` when the kernel is on no shipped ladder."""
        return f"{self.rung}/{self.rungs}" if self.rung is not None else "-"


@plain
class FamilyChange(PlainModel):
    """One layer family compared between the baseline (``old``) and now (``new``).

    ``status``: ``down`` (another kernel, below the baseline's on a list of the same registry
    that holds both, or more rungs fallen on another registry), ``up``, ``moved`` (another kernel
    that no list ranks against the baseline's: a regression, fail closed), ``same`` (the same
    kernel, whatever its rung number: a list that gained or lost rungs renumbers it),
    ``missing`` (in the baseline only), ``new`` (now only). ``cost``: the cost-class move,
    ranked by ``models.COST_ORDER`` (``worse``, ``better``, ``same``), or ``removed`` (a ``missing``
    family) / ``added`` (a ``new`` one): never ``same`` for a family one side lacks. ``reasoning``
    says how the two were compared.
    """

    family: str
    old: Optional[FamilyState] = None
    new: Optional[FamilyState] = None
    status: Status
    cost: CostMove = "same"
    reasoning: str = ""

    @property
    def regressed(self) -> bool:
        """Moved down, changed to a kernel no list ranks (``moved``: fail closed), changed cost
        class, or went missing (a family added now is no regression)."""
        return self.status in ("down", "moved", "missing") or self.cost_changed

    @property
    def cost_changed(self) -> bool:
        """Both sides have a kernel for the family, in different cost classes."""
        return self.cost in ("worse", "better")

    def move_text(self) -> str:
        """The MOVE cell of the diff and gate tables: ``down, cost worse``, ``missing, family
        removed``, ``new, family added``, ``same``."""
        if self.cost in ("added", "removed"):
            return f"{self.status}, family {self.cost}"
        return self.status + ("" if self.cost == "same" else f", cost {self.cost}")


def _state(run_source: str, s: Selection, packs: Optional[PackSet] = None, engine: Optional[str] = None) -> FamilyState:
    lad = s.ladder
    return FamilyState(
        family=s.family, kernel=s.kernel, cost_class=s.cost_class,
        registry=lad.registry if lad else None, platform=lad.platform if lad else None,
        ladder_version=lad.ladder_version if lad else None, rung=lad.rung if lad else None,
        rungs=lad.rungs if lad else None, fell=lad.fell if lad else None,
        source=run_source, line=s.line, evidence=s.evidence,
        kernel_class=lad.kernel_class if lad else None, names=names_of(lad, packs, engine))


def _badness(st: FamilyState) -> tuple[int, int]:
    return (len(COST_ORDER) - COST_ORDER.index(st.cost_class), st.fell or 0)


def family_states(report: Report, packs: Optional[PackSet] = None) -> dict[str, FamilyState]:
    """Layer family -> its kernel; when several runs or ranks disagree, the worst one is kept
    (worst cost class first, then most rungs fallen) so a baseline never hides a bad start.
    ``packs`` (default: the shipped packs) gives each state the list its rung counts on
    (``FamilyState.names``)."""
    if packs is None:
        from ..packs.loader import default_packs

        packs = default_packs()
    out: dict[str, FamilyState] = {}
    for run in report.runs:
        for s in run.selections:
            st = _state(run.source, s, packs, run.engine.read_with or run.engine.name)
            if s.family not in out or _badness(st) > _badness(out[s.family]):
                out[s.family] = st
    return out


def _cost_move(old: CostClass, new: CostClass) -> CostMove:
    if old == new:
        return "same"
    return "worse" if COST_ORDER.index(new) < COST_ORDER.index(old) else "better"


def _pair(family: str, o: FamilyState, n: FamilyState) -> FamilyChange:
    cost = _cost_move(o.cost_class, n.cost_class)
    same = same_kernel(o, n)
    if o.rung is not None and n.rung is not None and o.registry == n.registry and o.platform == n.platform:
        on = f"on {n.registry} ({n.platform})"
        if same:
            status: Status = "same"
            why = f"same kernel {on}" + ("" if o.rung_text() == n.rung_text() else
                                        f"; rung {o.rung_text()} -> {n.rung_text()} only renumbers it (the list "
                                        "gained or lost rungs), the kernel did not move")
        else:
            ranked, why = rank(o, n)
            status = ranked or "moved"
            why = f"another kernel {on}: {why}" + ("" if ranked else "; cannot compare, so not passed as unchanged")
    elif o.fell is not None and n.fell is not None:
        status = "same" if (n.fell == o.fell and same) else (
            "down" if n.fell > o.fell else "up" if n.fell < o.fell else "moved")
        why = (f"inferred: different ladders ({o.registry} -> {n.registry}), compared by rungs fallen "
               f"{o.fell} -> {n.fell}")
    else:
        status = "same" if same else "moved"
        unknown = "both kernels" if o.rung is None and n.rung is None else "one of the kernels"
        why = (f"no shipped ladder places {unknown} (RUNG -): " + (
            "the same kernel by name, its rung not compared" if same else
            "another kernel whose rung cannot be compared, so not passed as unchanged"))
    if cost != "same":
        why += f"; cost class {o.cost_class.value} -> {n.cost_class.value} ({cost})"
    return FamilyChange(family=family, old=o, new=n, status=status, cost=cost, reasoning=why)


#: Layer-family names that say the layer kind but not its scheme: a line such as SGLang's
#: ``Using Marlin kernel`` names the kernel without the checkpoint format it serves
#: (patterns/sglang/rules/30-kernels.toml), a bare ``MoE`` family comes from MoE-runner lines.
_GENERIC_SCHEMES = ("", "quantized")


def _role_scheme(family: str) -> tuple[str, Optional[str]]:
    """``"linear (FP8 W8A8)"`` -> ``("linear", "FP8 W8A8")``; ``"MoE"`` -> ``("MoE", "")``."""
    role, sep, rest = family.partition(" (")
    if not sep:
        return family, ""
    return role, rest[:-1] if rest.endswith(")") else None


def _pair_generic(a: dict[str, FamilyState], b: dict[str, FamilyState]) -> list[tuple[str, FamilyState, FamilyState]]:
    """Pair a family whose name states no scheme (``linear (quantized)``, ``MoE``) with the one
    unpaired family of the same layer kind on the other side; pops what it pairs from ``a``/``b``.

    Without this an old report whose log named Marlin but not the format it serves, compared with
    a new one that names both, reads as one family missing plus one new (a false regression).
    More than one candidate of that kind: nothing is paired (which one moved is not known)."""
    out = []
    for fam in sorted(a):
        role, scheme = _role_scheme(fam)
        cands = [f for f in b if _role_scheme(f)[0] == role]
        if len(cands) != 1:
            continue
        other = cands[0]
        if scheme in _GENERIC_SCHEMES or _role_scheme(other)[1] in _GENERIC_SCHEMES:
            if sum(1 for f in a if _role_scheme(f)[0] == role) == 1:
                out.append((f"{fam} / {other}", a.pop(fam), b.pop(other)))
    return out


def compare(old: Report, new: Report, packs: Optional[PackSet] = None) -> list[FamilyChange]:
    """Every layer family of either report, compared; sorted by family name (deterministic).
    ``packs``: the ladders that rank two kernels on lists of different length (default: the
    shipped packs; a release no pack holds is ranked by logged candidate lists only).

    Families are paired by exact name first, then (a family renamed between releases, e.g.
    ``linear (NVFP4 GEMM)`` and ``linear (NVFP4)``) by the ladder registry and platform, then a
    family that names no scheme with the one family of its layer kind on the other side.
    """
    a, b = family_states(old, packs), family_states(new, packs)
    pairs: list[tuple[str, FamilyState, FamilyState]] = []
    for fam in sorted(set(a) & set(b)):
        pairs.append((fam, a.pop(fam), b.pop(fam)))
    for fam in sorted(a):
        o = a[fam]
        if o.registry is None:
            continue
        match = next((f for f in sorted(b) if b[f].registry == o.registry and b[f].platform == o.platform), None)
        if match is not None:
            pairs.append((f"{fam} / {match}" if match != fam else fam, a.pop(fam), b.pop(match)))
    pairs += _pair_generic(a, b)
    changes = [_pair(f, o, n) for f, o, n in pairs]
    changes += [FamilyChange(family=f, old=s, status="missing", cost="removed",
                             reasoning="family removed: the baseline shows this family; the new report shows "
                                       "no kernel for it")
                for f, s in a.items()]
    changes += [FamilyChange(family=f, new=s, status="new", cost="added",
                             reasoning="family added: not in the baseline")
                for f, s in b.items()]
    return sorted(changes, key=lambda c: c.family)


class SideError(Exception):
    """A side of a comparison cannot be read (unreadable file, broken JSON report)."""


#: Keys of a one-line JSON log record (Docker json-file ``log``; python-json-logger ``message``/``msg``),
#: as ``sources/unwrap.py`` reads them: a file of such records is a log, not a broken report.
_LOG_RECORD_KEYS = ("log", "message", "msg")


def _is_log_record(obj: object) -> bool:
    return isinstance(obj, dict) and any(isinstance(obj.get(k), str) for k in _LOG_RECORD_KEYS)


def _first_line_is_log_record(data: bytes) -> bool:
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        return _is_log_record(json.loads(first))
    except (ValueError, RecursionError):
        return False


def _safe_strings(doc):
    """``doc`` (parsed JSON) with every string, key or value, through ``safe_text`` (a ``\\ud800``
    escape gives a lone surrogate that no output could encode). Iterative: any depth json accepts."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k in list(node):
                v = node[k]
                sk = safe_text(k) if isinstance(k, str) else k
                if sk is not k:
                    del node[k]
                node[sk] = safe_text(v) if isinstance(v, str) else v
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str):
                    node[i] = safe_text(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
    return doc


def _utf8(data: bytes) -> bytes:
    """``data`` re-encoded as UTF-8 when it starts with a UTF-16 or UTF-32 byte-order mark (PowerShell's
    ``>`` and ``Out-File`` write UTF-16 LE with a BOM); else unchanged."""
    for bom, enc in ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
                     (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            return data.decode(enc, "replace").encode("utf-8")
    return data


#: What may follow an opening ``[`` in a JSON document (an array of objects, strings, arrays, or
#: an empty one). A log line that opens with ``[`` goes on with a word or a digit instead: SGLang's
#: ``[2025-06-21 10:00:00] ...``, TensorRT-LLM's ``[TensorRT-LLM][INFO] ...`` or ``[10/21/2024-...]``.
_JSON_AFTER_BRACKET = (b"{", b"[", b"]", b'"')


def _looks_like_json(data: bytes) -> bool:
    """True when ``data`` (stripped of leading blanks) that failed to parse still shows a JSON
    document's start: ``{`` (a JSON object: a logscan report is one), or ``[`` then ``{``, ``[``,
    ``]`` or ``"``. Such a file is a damaged report (truncated, edited), not a log to read as empty."""
    if data[:1] == b"{":
        return True
    return data[:1] == b"[" and data[1:].lstrip()[:1] in _JSON_AFTER_BRACKET


def _report_from_json(path: str, data: bytes) -> Optional[Report]:
    """``data`` (a file that starts with ``{`` or ``[``) as a report; None when it is a log: a
    JSON-lines log, or a text log whose lines open with ``[`` (SGLang, TensorRT-LLM) and do not
    parse as JSON.

    Raises ``SideError`` naming ``path`` and the fault when it is neither: JSON that is not a
    report, or a file that fails to parse yet starts like JSON (``_looks_like_json``).
    """
    try:
        doc = json.loads(data)
    except RecursionError:
        raise SideError(f"{path}: JSON nested too deep to be a logscan report") from None
    except ValueError as exc:
        if _first_line_is_log_record(data):
            return None  # docker json-file / JSON-lines log: one JSON object per line
        if not _looks_like_json(data):
            return None  # a log whose first line opens with "[" (a timestamp, a tag): read as a log
        raise SideError(f"{path}: looks like JSON but is not valid JSON ({exc}); "
                        "expected a report saved by 'logscan scan --format json'") from None
    if not isinstance(doc, dict):
        raise SideError(f"{path}: is a JSON {type(doc).__name__}, not a logscan report (a JSON object "
                        "with \"logscan_version\", saved by 'logscan scan --format json')")
    if "logscan_version" not in doc:
        if _is_log_record(doc):
            return None  # a one-line JSON log
        raise SideError(f"{path}: is JSON but not a logscan report: no \"logscan_version\" key "
                        "(save one with 'logscan scan --format json')")
    try:  # a well-formed report is read without pydantic; pydantic judges (and words) anything else
        return Report.model_validate(_safe_strings(doc))
    except RecursionError:
        raise SideError(f"{path}: JSON nested too deep to be a logscan report") from None
    except ValueError as exc:  # pydantic's ValidationError is a ValueError (pydantic is imported by then)
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ())) or "(top level)"
        raise SideError(f"{path}: not a valid logscan JSON report: {where}: {err.get('msg', '')} "
                        f"({exc.error_count()} error(s))") from None


def load_side(path: str, packs: PackSet, stdin_name: Optional[str] = None) -> Report:
    """A saved JSON report or a log, read through the one pipeline.

    A file is a logscan JSON report (``logscan scan`` or ``gate --format json``) when it parses as
    JSON with the report's shape. A JSON-lines log (Docker json-file records, one object per line
    with a ``log``/``message``/``msg`` string) and a file that does not parse and does not start
    like JSON (``[2025-06-21 10:00:00] ...``, ``[TensorRT-LLM][INFO] ...``) are logs and go through
    ``pipeline.scan_inputs``. Raises ``SideError`` (message: the file and what is wrong) when the
    file cannot be read, is empty, is JSON but not a valid report, or fails to parse yet starts
    like JSON (``{``, or ``[`` then ``{``/``[``/``]``/``"``: a damaged report).
    """
    from ..pipeline import scan_inputs

    if path != "-":
        try:
            with open(path, "rb") as fh:
                head = fh.read(1 << 16)  # a log is streamed by the pipeline; only JSON is read whole
                wide = _utf8(head[:4]) != head[:4]
                if wide:  # UTF-16/32 (a report saved by PowerShell): decoded whole, then as any other
                    head = _utf8(head + fh.read())
                body = head.lstrip(b"\xef\xbb\xbf").lstrip()
                if body[:1] in (b"{", b"[") and not wide:
                    body += fh.read()
        except OSError as exc:
            raise SideError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not body:
            raise SideError(f"{path}: is empty (or blank): a comparison side must be a log or a saved "
                            "logscan JSON report")
        if body[:1] in (b"{", b"["):
            rep = _report_from_json(path, body)
            if rep is not None:
                return rep
        if wide:
            raise SideError(f"{path}: is UTF-16/UTF-32 text but not a logscan JSON report; give a log as "
                            "UTF-8 (the reader takes UTF-8 only)")
    report = scan_inputs([path], packs)
    from ..formats.text import input_error

    errors = [e for e in (input_error(s) for s in report.inputs) if e]
    if errors:
        raise SideError(errors[0])
    return report


def new_side_failures(report: Report) -> list[dict]:
    """The failures of the NEW side of a comparison, one dict per failed run (``run``: 1-based
    index, ``what``: ``start FAILED`` or ``FAILED while serving``, ``line``, ``evidence``): a start
    whose kernels equal the baseline's but that crashed is a regression the families cannot show."""
    from ..formats.clip import clip
    from ..formats.failure import head

    out = []
    for run in report.runs:
        for what, f in (("start FAILED", run.start_failure), ("FAILED while serving", run.serving_failure)):
            if f is not None:
                hl, words = head(f)
                out.append({"run": run.index + 1, "what": what, "line": f.line, "evidence": clip(f.evidence, 120),
                            "headline": clip(words, 300), "headline_line": hl,
                            "failing_kernel": f.failing_kernel})
    return out


def require_selection(path: str, report: Report) -> None:
    """Raise ``SideError`` when ``report`` (the baseline read from ``path``) holds no kernel selection
    (a baseline that compares nothing would let every family pass as ``new``), or when one of its
    runs is a failed start (``Run.start_failure``: its kernels never served)."""
    if not any(run.selections for run in report.runs):
        raise SideError(f"{path}: baseline holds no kernel selection ({len(report.runs)} run(s)); "
                        "a baseline must show the known-good kernels")
    from ..formats.clip import clip

    failed = [run for run in report.runs if run.start_failure is not None]
    if failed:  # its kernels never served: comparing with them would pass a start that is as broken
        run = failed[0]
        from ..formats.failure import head

        sf = run.start_failure
        hl, words = head(sf)
        why = f": {clip(words, 160)} (line {hl})" if sf.cause else ""  # the exception, in the engine's words
        raise SideError(f"{path}: baseline run {run.index + 1} is a failed start (line {sf.line}: "
                        f"{clip(sf.evidence, 120)}){why}; a baseline must be a known-good start")
