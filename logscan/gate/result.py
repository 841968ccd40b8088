"""What the gate answers: the verdict of each check and of the whole gate (``evaluate.evaluate``
builds them; the output formats read them). Pydantic models only, no judging.
"""
from __future__ import annotations

from datetime import date
from enum import Enum
from typing import Literal, Optional

from pydantic import BaseModel, Field

from ..models import Report
from ..validate import validator
from .baseline import FamilyChange


class Verdict(str, Enum):
    """A check's outcome, and the gate's (the worst of its checks)."""

    passed = "pass"
    warn = "warn"
    fail = "fail"


VERDICT_ORDER = {Verdict.fail: 0, Verdict.warn: 1, Verdict.passed: 2}


class Allowance(BaseModel):
    """The allow-list entry that matched a check, and whether it had expired on the gate's date."""

    reason: str
    expires: date
    expired: bool
    where: str  #: ``policy.toml:14``


class Check(BaseModel):
    """One thing the gate judged: a selection, a finding, a missing selection, a baseline comparison.

    ``code`` is a finding code (``patterns/findings.toml``) whenever the check is not a pass:
    the rule id of SARIF results and the type of JUnit failures. ``line`` is 1-based in
    ``source`` (None when the check concerns a whole input).
    """

    kind: Literal["selection", "finding", "no_kernel", "baseline", "allow", "start_failure", "input"]
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
    reasons: list[str] = Field(default_factory=list)
    allowance: Optional[Allowance] = None


class CodeRule(BaseModel):
    """A finding code as ``patterns/findings.toml`` describes it (SARIF rules, JUnit types)."""

    severity: str
    title: str
    explanation: str


class GateResult(BaseModel):
    """The gate's answer: verdict (worst check), the checks in report order, what it used."""

    verdict: Verdict
    policy: str  #: the policy file, or ``default``
    baseline: Optional[str] = None
    date: date  #: the date allow-list expiry was judged on
    counts: dict[str, int] = Field(default_factory=dict)  #: checks per verdict
    checks: list[Check] = Field(default_factory=list)
    changes: list[FamilyChange] = Field(default_factory=list)  #: the baseline comparison, family by family
    codes: dict[str, CodeRule] = Field(default_factory=dict)  #: every code a check carries, described


# the pydantic model of the plain Report; ``formats.json.render`` writes the document (the
# docstring is the schema's description: ``logscan schema --gate``)
class GatedReport(validator(Report)):  # type: ignore[misc]
    """``logscan gate --format json``: the report with the gate's result beside it."""

    gate: GateResult
