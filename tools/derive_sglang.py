#!/usr/bin/env python3
"""Maintainers' tool: derive SGLang's selection ladders from one release's source, with ``ast``.

SGLang chooses a GEMM / MoE backend with if/elif code over server arguments and platform
predicates (``initialize_fp4_gemm_config``, ``dispatch_w8a8_block_fp8_linear``,
``Fp8LinearMethod.apply``, ``ModelOptNvFp4FusedMoEMethod.create_moe_runner``), not with registry
lists as vLLM does. ``tools/derive_sglang_recipes.toml`` holds, per ladder, where the chain is and
how a branch's rung is recognised (the callable returned, the backend literal or enum member
assigned, the runner-backend method tested). ``derive`` walks each function in source order:
the rungs come out ordered as the chain tries them, each with the branch's test expression
(``ast.unparse``; nested tests joined by ``and``, an ``else`` as ``not (...)``) as its gate
source. SGLang is never imported; nothing is built.

A release whose files hold none of a recipe's functions lacks that registry. Ladders the
recipes list as ``[[handmade]]`` are not derived (the reason is kept with them in the history).

Usage::

    python tools/derive_sglang.py /path/holding/sglang          # print the derived ladders
Exit status: 0 printed, 2 no SGLang tree / bad recipe.
"""
from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPES = Path(__file__).resolve().parent / "derive_sglang_recipes.toml"


class DeriveError(Exception):
    """No SGLang tree, or a recipe that cannot be read."""


@dataclass
class Derived:
    """One derived ladder: ``platforms`` {platform: [rung]}, ``gates`` {platform: [gate source]}
    (same length, the test expression each rung's branch holds), ``file`` under the package root."""

    name: str
    kind: str
    file: str
    platforms: dict[str, list[str]] = field(default_factory=dict)
    gates: dict[str, list[str]] = field(default_factory=dict)


def load_recipes(path: Path = RECIPES) -> dict:
    """The recipe document: ``{"ladder": [...], "handmade": [...]}``. Raises ``DeriveError``."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DeriveError(f"{path}: {exc}") from None
    for r in doc.get("ladder", []):
        missing = {"name", "files", "functions", "rung_from", "platform"} - set(r)
        if missing:
            raise DeriveError(f"{path}: ladder {r.get('name', '?')} lacks {sorted(missing)}")
        bad = set(r["rung_from"]) - {"return", "assign", "test_method"}
        if bad:
            raise DeriveError(f"{path}: ladder {r['name']}: unknown recogniser {sorted(bad)}")
    return doc


def find_sglang_root(path: Path) -> Path:
    """The folder holding ``sglang/`` (``path`` itself, or its ``python/`` child as in the repo)."""
    for cand in (path, path / "python"):
        if (cand / "sglang" / "srt").is_dir():
            return cand
    raise DeriveError(f"{path}: no sglang/srt package folder here")


def _find_function(tree: ast.Module, dotted: str) -> Optional[ast.AST]:
    parts = dotted.split(".")
    scope: list[ast.stmt] = tree.body
    node = None
    for i, part in enumerate(parts):
        want = ast.ClassDef if i < len(parts) - 1 else (ast.FunctionDef, ast.AsyncFunctionDef)
        node = next((n for n in scope if isinstance(n, want) and n.name == part), None)
        if node is None:
            return None
        scope = node.body
    return node


def _callee(node: ast.AST) -> Optional[str]:
    """``f(...)`` / ``x.f(...)`` / ``partial(f, ...)`` / ``f`` -> ``f``."""
    if isinstance(node, ast.Call):
        name = _callee(node.func)
        if name == "partial" and node.args:
            return _callee(node.args[0])
        return name
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"  # `return None`: the chain keeps what it was given (e.g. plain gptq)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _paren(text: str) -> str:
    return f"({text})" if (" or " in text or " if " in text) else text


@dataclass
class _Site:
    token: str
    gates: tuple[str, ...]
    fallback: bool  # innermost frame is an ``else`` (or no test at all)


def _raises(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, ast.Raise) for s in body)


def _walk(body: list[ast.stmt], recipe: dict, gates: tuple[str, ...], fallback: bool) -> Iterator[_Site]:
    """Rung sites of ``body`` in source order (not descending into nested defs)."""
    how = recipe["rung_from"]
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If):
            yield from _walk_if(stmt, recipe, gates)
            continue
        if "return" in how and isinstance(stmt, ast.Return) and stmt.value is not None:
            name = _callee(stmt.value)
            if name:
                yield _Site(name, gates, fallback)
        if "assign" in how and isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == recipe.get("target") for t in stmt.targets):
                v = stmt.value
                tok = (v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                       else v.attr if isinstance(v, ast.Attribute) and v.attr.isupper() else None)
                if tok:
                    yield _Site(tok, gates, fallback)
        for sub in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, sub, None)
            if isinstance(inner, list) and inner and not isinstance(stmt, ast.If):
                stmts = [s for h in inner for s in h.body] if sub == "handlers" else inner
                yield from _walk(stmts, recipe, gates, fallback)


def _walk_if(node: ast.If, recipe: dict, gates: tuple[str, ...]) -> Iterator[_Site]:
    test = ast.unparse(node.test)
    if "test_method" in recipe["rung_from"] and not _raises(node.body):
        # `if not backend.is_x(): <make the runner>` names a backend too (served elsewhere, 0.5.11-0.5.15)
        for sub in ast.walk(node.test):
            if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr.startswith("is_")
                    and recipe.get("receiver", "") in ast.unparse(sub.func.value)):
                yield _Site(sub.func.attr[3:], gates + (ast.unparse(sub),), False)  # the test of this backend
    yield from _walk(node.body, recipe, gates + (test,), False)
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        yield from _walk_if(node.orelse[0], recipe, gates)  # elif: its own test
    elif node.orelse:
        yield from _walk(node.orelse, recipe, gates + (f"not ({test})",), True)


def derive_one(root: Path, recipe: dict) -> Optional[Derived]:
    """One recipe over the tree under ``root`` (holding ``sglang/``); None when its function is absent."""
    for rel in recipe["files"]:
        path = root / rel
        if not path.is_file():
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError as exc:
            raise DeriveError(f"{path}: {exc}") from None
        for fn in recipe["functions"]:
            node = _find_function(tree, fn)
            if node is not None and recipe.get("requires", "") not in ast.unparse(node):
                return None  # the function is there but does not make this choice yet
            if node is not None:
                return _ladder(recipe, rel, node)
    return None


def _ladder(recipe: dict, rel: str, node: ast.AST) -> Derived:
    names: dict[str, str] = recipe.get("names", {})
    only = recipe.get("only_named", False)
    default = recipe["platform"]
    plat_of: dict[str, str] = recipe.get("platform_of", {})
    out = Derived(recipe["name"], "if_chain", rel)
    seen: set[tuple[str, str]] = set()
    for site in _walk(node.body, recipe, (), True):
        if site.token not in names and only:
            continue
        rung = names.get(site.token, site.token)
        if rung == "-":
            continue
        gate = " and ".join(_paren(g) for g in site.gates) or "always"
        inner = site.gates[-1] if site.gates else ""  # the branch's own test, when positive
        plat = next((p for key, p in plat_of.items() if key in inner and not inner.startswith("not (")), default)
        if (plat, rung) in seen:
            # the first branch that reaches a rung is its place on the ladder; any later branch
            # reaching it widens its gate (A or B; an unconditional one makes it ``always``)
            i = out.platforms[plat].index(rung)
            have = out.gates[plat][i]
            if have != "always" and gate != have:
                out.gates[plat][i] = "always" if gate == "always" else f"({have}) or ({gate})"
            continue
        seen.add((plat, rung))
        out.platforms.setdefault(plat, []).append(rung)
        out.gates.setdefault(plat, []).append(gate)
    # The chain's unconditional last rung stays in the default list only: a platform list holds
    # the rungs that platform's own branches reach. Repeating the shared fallback there would
    # make its logged name (Triton block FP8) name no platform, on a CUDA log too.
    return out


def derive(root: Path, recipes: Optional[dict] = None) -> list[Derived]:
    """Every recipe's ladder found under ``root`` (a folder holding ``sglang/``), recipe order."""
    recipes = load_recipes() if recipes is None else recipes
    return [d for r in recipes.get("ladder", []) if (d := derive_one(root, r)) is not None and d.platforms]


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, help="a folder holding sglang/ (an unpacked sdist or wheel)")
    args = ap.parse_args(argv)
    try:
        got = derive(find_sglang_root(args.tree))
    except DeriveError as exc:
        print(f"derive_sglang: {exc}", file=sys.stderr)
        return 2
    for d in got:
        print(f"{d.name}  ({d.file})")
        for p, rungs in d.platforms.items():
            for i, (r, g) in enumerate(zip(rungs, d.gates[p]), 1):
                print(f"  [{p}] {i}/{len(rungs)} {r:<24} if {g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
