"""What the gate answers: the verdict of each check and of the whole gate (``evaluate.evaluate``
builds them; the output formats read them). Plain classes (``logscan.plain``), no judging: a gate
imports no pydantic (start-up, issue 18); ``GatedReport``, the pydantic model behind ``logscan schema
--gate``, is generated from them on first use (``logscan.validate``).
"""
from __future__ import annotations

from datetime import date
from enum import Enum
from typing import Literal, Optional

from dataclasses import field

from ..models_run import Folded
from ..plain import PlainModel, plain
from .baseline import FamilyChange


class Verdict(str, Enum):
    """A check's outcome, and the gate's (the worst of its checks)."""

    passed = "pass"
    warn = "warn"
    fail = "fail"


VERDICT_ORDER = {Verdict.fail: 0, Verdict.warn: 1, Verdict.passed: 2}


@plain
class Allowance(PlainModel):
    """The allow-list entry that matched a check, and whether it had expired on the gate's date."""

    reason: str
    expires: date
    expired: bool
    where: str  #: ``policy.toml:14``


@plain
class Check(PlainModel):
    """One thing the gate judged: a selection, a finding, a missing selection, a baseline comparison.

    ``code`` is a finding code (``patterns/findings.toml``) whenever the check is not a pass:
    the rule id of SARIF results and the type of JUnit failures. ``line`` is 1-based in
    ``source`` (None when the check concerns a whole input).
    """

    kind: Literal["selection", "finding", "no_kernel", "baseline", "allow", "start_failure", "start", "input",
                  "unread"]
    code: Optional[str] = None
    name: str  #: short and stable, e.g. ``MoE (NvFp4): MARLIN``
    message: str
    verdict: Verdict
    decided_by: str  #: the policy rule (file:line) or ``default: no policy rule matched``
    source: str
    line: Optional[int] = None
    run: Optional[int] = None  #: 1-based run number in the report
    engine: Optional[str] = None
    family: Optional[str] = None
    kernel: Optional[str] = None
    cost_class: Optional[str] = None
    scheme: Optional[str] = None
    evidence: Optional[str] = None
    #: the engine's own reasons, verbatim log text (e.g. each kernel's refusal for KERNEL_NOT_FOUND)
    reasons: list[str] = field(default_factory=list)
    allowance: Optional[Allowance] = None
    #: the check's run folded repeats (``Run.folded``: a crash loop), which the message names
    #: (``gate/repeats.py``); left out of the JSON when None (nothing folded)
    folded: Optional[Folded] = None

    _omit_none = ("folded",)


@plain
class CodeRule(PlainModel):
    """A finding code as ``patterns/findings.toml`` describes it (SARIF rules, JUnit types)."""

    severity: str
    title: str
    explanation: str


@plain
class GateResult(PlainModel):
    """The gate's answer: verdict (worst check), the checks in report order, what it used."""

    verdict: Verdict
    policy: str  #: the policy file, or ``default``
    baseline: Optional[str] = None
    date: date  #: the date allow-list expiry was judged on
    counts: dict[str, int] = field(default_factory=dict)  #: checks per verdict
    checks: list[Check] = field(default_factory=list)
    changes: list[FamilyChange] = field(default_factory=list)  #: the baseline comparison, family by family
    codes: dict[str, CodeRule] = field(default_factory=dict)  #: every code a check carries, described


def _gated_report():
    """The pydantic model of the plain ``Report`` plus ``gate``; ``formats.json.render`` writes the
    document (the docstring is the schema's description: ``logscan schema --gate``)."""
    from pydantic import create_model

    from ..models import Report
    from ..validate import validator

    return create_model("GatedReport", __base__=validator(Report), __module__=__name__,
                        __doc__="``logscan gate --format json``: the report with the gate's result beside it.",
                        gate=(validator(GateResult), ...))


def __getattr__(name: str):
    """PEP 562: ``GatedReport`` is built (pydantic imported) only when asked for."""
    if name == "GatedReport":
        model = _gated_report()
        globals()["GatedReport"] = model
        return model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
