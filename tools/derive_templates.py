#!/usr/bin/env python3
"""Maintainers' library: read an engine release's log templates from its source with ``ast``.

A template is the format string of a logging call (``logger.info("Using %s for %s", ...)``,
``logger.warning_once(f"... {x} ...")``, ``init_logger(...)`` objects included: any
``<name>.<level>(...)`` whose receiver's name contains ``log``; or of a call to a logging
helper such as SGLang's ``log_info_on_rank0(logger, msg)``, detected by ``tools/log_helpers.py``)
or of a raised exception
(``raise ValueError("...")``). f-string fields become ``{expr}``; ``%``-formats stay as written;
``"...".format(...)`` keeps its ``{}`` fields. Nothing is imported or executed.

``template_regex`` (shared with ``logscan/analysis/template_era.py``) turns a template into an anchored regex (literal text escaped, each field a
lazy wildcard), used to ask which templates a logged line (or a rule's example) came from.
"""
from __future__ import annotations

import ast
import gc
import hashlib
import json
import re
from pathlib import Path
import sys
from typing import Iterator, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from logscan.analysis.template_era import FIELD, literal_chars, literal_head, specific_enough, template_regex  # noqa: E402,F401
from logscan.sources.safe import ANSI  # noqa: E402

sys.path.append(str(Path(__file__).resolve().parent))  # tools/ is not a package
import log_helpers as lh  # noqa: E402

LEVELS = lh.LEVELS

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


def templates_of(source: str, helpers: Optional[dict] = None) -> Iterator[tuple[str, str]]:
    """``(level, template)`` of every logging call and literal ``raise X("...")`` in ``source``.

    ``helpers``: name -> ``log_helpers.Helper`` (``release_templates`` detects them over the
    whole release); None: those defined in ``source`` itself and ``tools/log_helpers.toml``."""
    try:
        mod = lh.index(ast.parse(source))
    except SyntaxError:
        return
    if helpers is None:
        helpers = lh.find_helpers([mod], _text, lh.known_helpers())
    yield from module_templates(mod, helpers)


def as_logged(template: str) -> str:
    """``template`` as logscan reads the line it prints: ANSI escape codes removed (SGLang's
    ``print_deprecated_warning`` wraps its message in ``\\033[1;33m`` .. ``\\033[0m``;
    ``logscan/sources/safe.py`` removes them from every line)."""
    return ANSI.sub("", template) if "\x1b" in template else template


def module_templates(mod: "lh.Module", helpers: dict) -> Iterator[tuple[str, str]]:
    """``templates_of`` on an indexed module (``log_helpers.index``)."""
    for _, node in mod.calls:
        for level, arg, pre, suf in lh.messages(node, helpers):
            t = _text(arg)
            if t and t.strip():
                t = as_logged(pre + t + suf)
                if t.strip():
                    yield level, t
    for node in mod.raises:
        if isinstance(node.exc, ast.Call) and node.exc.args:
            t = _text(node.exc.args[0])
            if t and t.strip():
                yield "raise", t


def reader_key() -> str:
    """A digest of this reader (this file, ``log_helpers.py`` and its data): a cached read of a
    release is reused only by the same reader."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in ("derive_templates.py", "log_helpers.py", "log_helpers.toml"):
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def release_templates(tree: Path, package: str = "vllm", cache: bool = False) -> dict[str, str]:
    """Every template of a release tree (a folder holding ``<package>/``): template -> level.

    Logging helpers are detected over the whole tree first (``tools/log_helpers.py``): SGLang
    defines ``log_info_on_rank0`` in ``sglang/srt/utils.py`` and calls it everywhere. With
    ``cache``, the result is kept in ``<tree>/.templates-<package>.json`` (keyed by
    ``reader_key``; for trees outside the repository only), so that ``template_history.py``
    and ``refresh.py --check`` over 110 SGLang releases read each release once (~15 CPU-min)."""
    path = tree / f".templates-{package}.json"
    key = reader_key() if cache else ""
    if cache and path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("reader") == key:
                return doc["templates"]
        except (OSError, ValueError, KeyError):
            pass
    out = _read_release(tree, package)
    if cache:
        try:
            path.write_text(json.dumps({"reader": key, "templates": out}), encoding="utf-8")
        except OSError:
            pass
    return out


def _read_release(tree: Path, package: str) -> dict[str, str]:
    mods = []
    # ~3,000 modules' trees stay alive at once: the cyclic collector, walking them on every
    # allocation burst, made a release's read 2.6x slower (SGLang 0.5.23: 70 s -> 27 s CPU)
    was = gc.isenabled()
    gc.disable()
    try:
        for f in sorted((tree / package).rglob("*.py")):
            try:
                mods.append(lh.index(ast.parse(f.read_text(encoding="utf-8", errors="replace"))))
            except (SyntaxError, ValueError):
                continue
        helpers = lh.find_helpers(mods, _text, lh.known_helpers())
        out: dict[str, str] = {}
        for m in mods:
            for level, t in module_templates(m, helpers):
                out.setdefault(t, level)
    finally:
        if was:
            gc.enable()
    return out


Candidate = tuple  # (template, regex or None until first needed, literal_chars, literal head)


def candidates(templates, min_literal: int = 12) -> list[list]:
    """``[template, None, literal_chars, literal head]`` of each template with at least
    ``min_literal`` literal characters; its regex is compiled on the first example that starts
    with its head (an SGLang build has ~40,000 templates and ~600 examples)."""
    return [[t, None, lc, literal_head(t).lstrip()] for t in templates if (lc := literal_chars(t)) >= min_literal]


def _matches(example: str, templates) -> list[tuple[int, str, "re.Match"]]:
    out = []
    for c in templates:
        if len(c) == 4:  # from ``candidates``: filter by head, compile once
            if not example.startswith(c[3]):
                continue
            if c[1] is None:
                c[1] = template_regex(c[0])
        hit = c[1].match(example)
        if hit:
            out.append((c[2], c[0], hit))
    return out


def best_templates(example: str, templates, min_ratio: float = 0.5) -> list[str]:
    """The most specific templates that produce ``example`` (a rule example, a logged message).

    Among ``(template, regex, literal_chars)`` whose regex matches ``example`` whole, those with
    the most literal text; none when that text is not ``specific_enough`` (under ``min_ratio``
    of the example, a one-token field value counting for 16 characters at most: a ``"Using %s backend."``
    shape says nothing about which release printed a line, but a long sentence printed with a
    long path does). The same test as the era inference's (``logscan/analysis/template_era.py``).
    """
    m = _matches(example, templates)
    if not m:
        return []
    best = max(lc for lc, _, _ in m)
    return [t for lc, t, hit in m if lc == best and specific_enough(lc, hit, min_ratio)]


def rule_templates(rules, by_release: dict[str, dict[str, str]], min_literal: int = 12) -> dict[str, dict]:
    """Templates that some rule's example comes from: template -> {level, releases (oldest first)}.

    ``rules``: pack ``Rule`` objects (``examples``); ``by_release``: release -> template -> level.
    Each example's template is chosen among the templates of every release (``best_templates``);
    ``release_rule_templates`` repeats that choice for one release against this result.
    """
    from packaging.version import Version

    holding: dict[str, list[str]] = {}
    level: dict[str, str] = {}
    for rel in sorted(by_release, key=Version):
        for t, lv in by_release[rel].items():
            holding.setdefault(t, []).append(rel)
            level.setdefault(t, lv)
    cands = candidates(holding, min_literal)
    out: dict[str, dict] = {}
    for r in rules:
        for ex in r.examples:
            for t in best_templates(ex, cands):
                out.setdefault(t, {"level": level[t], "releases": holding[t]})
    return out


def release_rule_templates(rules, mine: dict[str, str], known) -> dict[str, dict]:
    """The rule templates one release's source holds, as ``rule_templates`` over every release
    would credit it: each example's template chosen among ``mine`` (the release's templates:
    template -> level) and ``known`` (the history's templates), kept when ``mine`` holds it.
    Returns template -> {level}. ``refresh.py`` (writing, or ``--check``) uses it.

    It chooses as the build did only when ``known`` holds the build's choices, i.e. a history
    built by the same reader: against the history built before logging helpers were read
    (no 'Capture cuda graph begin. ...' template), SGLang 0.5.2 .. 0.5.4 were credited their
    vaguer 'Capture {'cpu graph' if ... else 'cuda graph'} begin. ...', which the build over
    all releases never chooses (0.4.3.post3 .. 0.5.1.post3 print the sentence itself)."""
    got = rule_templates(rules, {"0": mine, "1": {t: "" for t in known}})
    return {t: {"level": mine[t]} for t in got if t in mine}
