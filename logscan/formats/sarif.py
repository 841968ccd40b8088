"""SARIF 2.1.0: one result per check the gate fails or warns on (or an allow-list entry accepted).

Rule ids are finding codes (``patterns/findings.toml``), each result's location is the log
file and line the check rests on. An accepted (allow-listed, unexpired) check is kept as a
result with an ``external`` suppression whose justification is the entry's reason. Validated
in the tests against the official OASIS SARIF 2.1.0 JSON schema.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional
from urllib.parse import quote

from .. import __version__
from ..models import Report
from ._ci import one_line, reasons_text

if TYPE_CHECKING:
    from ..packs.loader import PackSet
    from ..gate.evaluate import GateResult

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def repo_relative(path: str, root: Optional[str] = None) -> str:
    """``path`` relative to ``root`` (default: ``$GITHUB_WORKSPACE``, else the current directory)
    when it lies under it, with ``/`` separators; else the absolute path. GitHub code scanning
    places a SARIF result by its repository-relative ``uri``: an absolute runner path matches
    no file of the repository. ``<stdin>`` (no file) and a path that cannot be resolved stay as given."""
    import os
    from pathlib import Path

    if not path or path.startswith("<"):
        return path
    try:
        base = Path(root or os.environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
        full = Path(path).expanduser()
        full = (full if full.is_absolute() else Path(os.getcwd()) / full).resolve()
    except (OSError, RuntimeError, ValueError):
        return path
    try:
        return full.relative_to(base).as_posix()
    except ValueError:
        return full.as_posix()


def _uri(path: str) -> str:
    return quote(repo_relative(path).replace("\\", "/"), safe="/:._-~")


def render(report: Report, gate: "Optional[GateResult]" = None, packs: "Optional[PackSet]" = None) -> str:
    """The SARIF log (one run, tool ``logscan``) as indented JSON; deterministic (no timestamps).
    ``packs`` is unused (every format's ``render`` takes the same arguments)."""
    from ..gate.evaluate import Verdict

    checks = [c for c in (gate.checks if gate else [])
              if c.code and (c.verdict != Verdict.passed or c.allowance is not None)]
    codes = gate.codes if gate else {}
    rule_ids = sorted({c.code for c in checks if c.code})
    rules = []
    for code in rule_ids:
        info = codes.get(code)
        rule = {"id": code, "name": "".join(w.capitalize() for w in code.split("_"))}
        if info:
            rule.update(shortDescription={"text": info.title}, fullDescription={"text": info.explanation},
                        defaultConfiguration={"level": _LEVEL.get(info.severity, "warning")})
        rules.append(rule)
    results = []
    for c in checks:
        loc = {"artifactLocation": {"uri": _uri(c.source)}}
        if c.line:
            loc["region"] = {"startLine": c.line}
            if c.evidence:
                loc["region"]["snippet"] = {"text": c.evidence[:2000]}
        res = {
            "ruleId": c.code,
            "ruleIndex": rule_ids.index(c.code),
            "level": "error" if c.verdict == Verdict.fail else "warning" if c.verdict == Verdict.warn else "note",
            "message": {"text": one_line(" ".join(x for x in (c.message, reasons_text(c.reasons)) if x), 4000)},
            "locations": [{"physicalLocation": loc}],
            "properties": {k: v for k, v in (("kind", c.kind), ("verdict", c.verdict.value), ("run", c.run),
                                             ("family", c.family), ("kernel", c.kernel),
                                             ("costClass", c.cost_class), ("scheme", c.scheme),
                                             ("decidedBy", c.decided_by)) if v is not None},
        }
        if c.allowance is not None and not c.allowance.expired:
            res["suppressions"] = [{"kind": "external", "status": "accepted",
                                    "justification": f"{c.allowance.reason} (until {c.allowance.expires.isoformat()}, "
                                                     f"{c.allowance.where})"}]
        results.append(res)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "logscan", "version": __version__, "rules": rules}},
            "artifacts": [{"location": {"uri": _uri(s.source)}, "roles": ["analysisTarget"]}
                          for s in report.inputs],
            "results": results,
            "properties": {"gateVerdict": gate.verdict.value if gate else "none",
                           "policy": gate.policy if gate else None},
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
