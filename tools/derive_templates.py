#!/usr/bin/env python3
"""Maintainers' library: read an engine release's log templates from its source with ``ast``.

A template is the format string of a logging call (``logger.info("Using %s for %s", ...)``,
``logger.warning_once(f"... {x} ...")``, ``init_logger(...)`` objects included: any
``<name>.<level>(...)`` whose receiver's name contains ``log``) or of a raised exception
(``raise ValueError("...")``). f-string fields become ``{expr}``; ``%``-formats stay as written;
``"...".format(...)`` keeps its ``{}`` fields. Nothing is imported or executed.

``template_regex`` (shared with ``logscan/analysis/template_era.py``) turns a template into an anchored regex (literal text escaped, each field a
lazy wildcard), used to ask which templates a logged line (or a rule's example) came from.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
import sys
from typing import Iterator, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from logscan.analysis.template_era import FIELD, literal_chars, specific_enough, template_regex  # noqa: E402,F401

LEVELS = {"debug", "info", "warning", "warn", "error", "exception", "critical",
          "debug_once", "info_once", "warning_once", "error_once"}
def _text(node: ast.AST) -> Optional[str]:
    """The format string of a call's first argument, or None when it is not literal enough."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value.replace("{", "{{").replace("}", "}}"))
            elif isinstance(v, ast.FormattedValue):
                parts.append("{" + ast.unparse(v.value) + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _text(node.left), _text(node.right)
        if a is None and b is None:
            return None
        return (a if a is not None else "{}") + (b if b is not None else "{}")
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        return node.func.value.value
    return None


def templates_of(source: str) -> Iterator[tuple[str, str]]:
    """``(level, template)`` of every logging call and literal ``raise X("...")`` in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LEVELS:
            recv = node.func.value
            name = recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
            if "log" in name.lower() and node.args:
                t = _text(node.args[0])
                if t and t.strip():
                    lv = node.func.attr.removesuffix("_once")
                    yield ("warning" if lv == "warn" else lv), t
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            t = _text(node.exc.args[0])
            if t and t.strip():
                yield "raise", t


def release_templates(tree: Path, package: str = "vllm") -> dict[str, str]:
    """Every template of a release tree (a folder holding ``<package>/``): template -> level."""
    out: dict[str, str] = {}
    for f in sorted((tree / package).rglob("*.py")):
        for level, t in templates_of(f.read_text(encoding="utf-8", errors="replace")):
            out.setdefault(t, level)
    return out


def best_templates(example: str, templates: list[tuple[str, re.Pattern, int]], min_ratio: float = 0.5) -> list[str]:
    """The most specific templates that produce ``example`` (a rule example, a logged message).

    Among ``(template, regex, literal_chars)`` whose regex matches ``example`` whole, those with
    the most literal text; none when that text is not ``specific_enough`` (under ``min_ratio``
    of the example, a one-token field value counting for 16 characters at most: a ``"Using %s backend."``
    shape says nothing about which release printed a line, but a long sentence printed with a
    long path does). The same test as the era inference's (``logscan/analysis/template_era.py``).
    """
    m = [(lc, t, hit) for t, rx, lc in templates if (hit := rx.match(example))]
    if not m:
        return []
    best = max(lc for lc, _, _ in m)
    return [t for lc, t, hit in m if lc == best and specific_enough(lc, hit, min_ratio)]


def rule_templates(rules, by_release: dict[str, dict[str, str]], min_literal: int = 12) -> dict[str, dict]:
    """Templates that some rule's example comes from: template -> {level, releases (oldest first)}.

    ``rules``: pack ``Rule`` objects (``examples``); ``by_release``: release -> template -> level.
    """
    from packaging.version import Version

    holding: dict[str, list[str]] = {}
    level: dict[str, str] = {}
    for rel in sorted(by_release, key=Version):
        for t, lv in by_release[rel].items():
            holding.setdefault(t, []).append(rel)
            level.setdefault(t, lv)
    cands = [(t, template_regex(t), literal_chars(t)) for t in holding if literal_chars(t) >= min_literal]
    out: dict[str, dict] = {}
    for r in rules:
        for ex in r.examples:
            for t in best_templates(ex, cands):
                out.setdefault(t, {"level": level[t], "releases": holding[t]})
    return out
