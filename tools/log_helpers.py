#!/usr/bin/env python3
"""Maintainers' library: the logging helpers of a release tree, detected from their bodies.

Engines log many sentences through helpers rather than ``logger.<level>(...)`` itself:
SGLang >= 0.4.6.post4 ``log_info_on_rank0(logger, msg)`` (``sglang/srt/utils.py``, later
``sglang/srt/utils/common.py``: ``logger.info(msg)`` on TP rank 0), ``print_warning_once(msg)``
/ ``print_info_once(msg)`` / ``rank0_log(msg)`` (``logger.warning(msg)`` / ``logger.info(msg)``),
``print_deprecated_warning(message)`` (``logger.warning(f"\\033[1;33m{message}\\033[0m")``);
vLLM < 0.7 ``print_warning_once(msg)`` (``vllm/utils.py``). A helper is any function that
passes one of its parameters (bare, or as a field of an f-string) as the message of a logging
call, ``<name>.<level>(...)`` with a log-named receiver (``logger``, ``self.logger``, a
``logger`` parameter), or of another helper (found over a few rounds, so chains such as
SGLang's ``Logger.info_once(self, msg) -> _print_info_once(logger, msg) -> logger.info(msg)``
resolve). Helpers defined outside the tree (SGLang 0.3 imports vLLM's ``print_warning_once``)
come from ``tools/log_helpers.toml``. Nothing is imported or executed.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DATA = Path(__file__).resolve().parent / "log_helpers.toml"

#: logger methods (``logging.Logger`` and vLLM's / SGLang's ``*_once`` additions)
LEVELS = {"debug", "info", "warning", "warn", "error", "exception", "critical",
          "debug_once", "info_once", "warning_once", "error_once"}
#: a template's fields: ``{expr}`` (f-strings) and ``%``-formats
FIELD_RX = re.compile(r"\{[^{}]*\}|%[-#0 +]*\d*(?:\.\d+)?[sdrfiegxXc]")
#: rounds of helper-of-helper detection (SGLang's deepest chain is 2)
ROUNDS = 3


@dataclass(frozen=True)
class Helper:
    """A function that logs its argument: called as ``name(...)`` / ``x.name(...)``.

    ``index``: the message's 0-based position among the call's positional arguments (a
    method's ``self`` not counted; None when the parameter is keyword-only); ``keyword``: the
    parameter's name; ``level``: the level it logs at; ``prefix`` / ``suffix``: template text
    the helper puts around the message (``"\\x1b[1;33m"``, ``"\\x1b[0m"``), empty for most."""

    name: str
    index: Optional[int]
    keyword: str
    level: str
    prefix: str = ""
    suffix: str = ""

    def message(self, call: ast.Call) -> Optional[ast.AST]:
        """The message argument of a call to this helper, or None (not passed, or after a ``*args``)."""
        for kw in call.keywords:
            if kw.arg == self.keyword:
                return kw.value
        if self.index is None or self.index >= len(call.args):
            return None
        if any(isinstance(a, ast.Starred) for a in call.args[: self.index + 1]):
            return None
        return call.args[self.index]


def known_helpers(path: Path = DATA) -> dict[str, list[Helper]]:
    """The helpers of ``tools/log_helpers.toml`` by name. Raises ``OSError`` / ``tomllib.TOMLDecodeError``."""
    out: dict[str, list[Helper]] = {}
    for h in tomllib.loads(path.read_text(encoding="utf-8")).get("helper", []):
        out.setdefault(h["name"], []).append(Helper(h["name"], h.get("message_arg"), h.get("keyword", ""),
                                                    h["level"]))
    return out


def level_of(attr: str) -> str:
    """``warning_once`` -> ``warning``; ``warn`` -> ``warning``."""
    lv = attr.removesuffix("_once")
    return "warning" if lv == "warn" else lv


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def log_call_level(call: ast.Call) -> Optional[str]:
    """The level of ``<receiver>.<level>(...)`` whose receiver's name contains ``log``, else None."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in LEVELS and "log" in _name(f.value).lower():
        return level_of(f.attr)
    return None


def messages(call: ast.Call, helpers: dict[str, list[Helper]]) -> Iterator[tuple[str, ast.AST, str, str]]:
    """``(level, message node, prefix, suffix)`` of a logging call or of a call to a helper."""
    lv = log_call_level(call)
    if lv is not None:
        if call.args and not isinstance(call.args[0], ast.Starred):
            yield lv, call.args[0], "", ""
        return
    for h in helpers.get(_name(call.func), ()):
        arg = h.message(call)
        if arg is not None:
            yield h.level, arg, h.prefix, h.suffix


def decoration(text: str) -> bool:
    """Whether ``text``, put around a helper's message, only decorates it: no word of three or
    more letters (ANSI colour codes ``"\\x1b[1;33m"``, brackets, a ``{field}`` prefix such as
    ``"[{self.__class__.__name__}] "``). A function that logs ``f"Failed to fetch {key} from
    storage"`` is not a logging helper for its ``key``."""
    return not re.search(r"[A-Za-z]{3,}", FIELD_RX.sub("", text))


def _wrapped_param(arg: ast.AST, params: set[str], text_of: Callable) -> Optional[tuple[str, str, str]]:
    """``(param, prefix, suffix)`` when ``arg`` is a parameter, or an f-string that only
    decorates it (``decoration``)."""
    if isinstance(arg, ast.Name) and arg.id in params:
        return arg.id, "", ""
    if isinstance(arg, ast.JoinedStr):
        hits = [v for v in arg.values if isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name)
                and v.value.id in params and v.conversion == -1 and v.format_spec is None]
        if len(hits) == 1:
            p = hits[0].value.id
            text = text_of(arg) or ""
            mark = "{" + p + "}"
            if text.count(mark) == 1:
                pre, suf = text.split(mark)
                if decoration(pre + suf):
                    return p, pre, suf
    return None


@dataclass
class Module:
    """One parsed module's calls (each with its innermost enclosing function, or None) and
    ``raise`` statements, collected in one traversal (``index``)."""

    calls: list[tuple[Optional[ast.AST], ast.Call]]
    raises: list[ast.Raise]


def index(tree: ast.AST) -> Module:
    """``Module`` of a parsed module: a single depth-first walk (a release has ~3,000 files)."""
    calls: list = []
    raises: list = []
    stack: list[tuple[ast.AST, Optional[ast.AST]]] = [(tree, None)]
    fn_types = (ast.FunctionDef, ast.AsyncFunctionDef)
    while stack:
        node, fn = stack.pop()
        if isinstance(node, ast.Call):
            calls.append((fn, node))
        elif isinstance(node, ast.Raise):
            raises.append(node)
        inner = node if isinstance(node, fn_types) else fn
        stack.extend((c, inner) for c in ast.iter_child_nodes(node))
    return Module(calls, raises)


def find_helpers(mods: list[Module], text_of: Callable[[ast.AST], Optional[str]],
                 known: Optional[dict[str, list[Helper]]] = None) -> dict[str, list[Helper]]:
    """Every logging helper defined in ``mods`` (``index`` of each module of one release), plus ``known``.

    ``text_of``: the template reader of a message node (``derive_templates._text``). A function
    named like a logger method (``info``, ``warning_once``...) or a dunder is not a helper: its
    calls on log-named receivers are read as logging calls already, and on others they are not
    logging. Returns name -> helpers (one name may have several shapes, e.g. SGLang's
    ``log_info``/``log_warning`` methods prefixing ``[{self.__class__.__name__}] ``)."""
    helpers = {k: list(v) for k, v in (known or {}).items()}
    by_fn: dict[int, tuple] = {}
    for m in mods:
        for fn, c in m.calls:
            if fn is None or fn.name in LEVELS or fn.name.startswith("__"):
                continue
            if not any(isinstance(a, (ast.Name, ast.JoinedStr)) for a in [*c.args, *(k.value for k in c.keywords)]):
                continue
            w = by_fn.get(id(fn))
            if w is None:
                pos = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                shift = 1 if pos and pos[0] in ("self", "cls") else 0
                params = set(pos[shift:]) | {a.arg for a in fn.args.kwonlyargs}
                w = by_fn[id(fn)] = (fn, pos, shift, params, [])
            w[4].append(c)
    work = [w for w in by_fn.values() if w[3]]
    for _ in range(ROUNDS):
        added = False
        for fn, pos, shift, params, calls in work:
            for call in calls:
                for level, arg, pre, suf in list(messages(call, helpers)):
                    got = _wrapped_param(arg, params, text_of)
                    if got is None:
                        continue
                    p, pre2, suf2 = got
                    idx = pos.index(p) - shift if p in pos else None
                    h = Helper(fn.name, idx, p, level, pre + pre2, suf2 + suf)
                    if h not in helpers.setdefault(fn.name, []):
                        helpers[fn.name].append(h)
                        added = True
        if not added:
            break
    return {k: v for k, v in helpers.items() if v}
