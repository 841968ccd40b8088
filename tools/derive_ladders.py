#!/usr/bin/env python3
"""Maintainers' tool: re-derive vLLM's kernel ladders from an installed vLLM tree and diff them.

Reads the registry lists of an installed (or unzipped) vLLM package with ``ast``
(``tools/vllm_registries.py``); vLLM is never imported, so no GPU, CUDA or torch is needed.
What it reads is described in ``tools/vllm_registries.py`` (vLLM 0.6.6 -> 0.33.0 layouts).

It then diffs the derived registries against a shipped ``patterns/vllm/ladders/<v>.toml``:
registries added or removed, and per registry and platform the rungs added, removed and
moved. If-chain and attention registries of the shipped file are not derived here (they are
selection functions, not lists) and are listed as skipped. ``--write`` writes a ladder TOML
of the derived registries, carrying cost classes over from the shipped file; a rung the
shipped file does not know gets ``cost_class = "unknown"`` for the maintainer to classify.

Usage:
    python tools/derive_ladders.py /path/to/site-packages [--against patterns/vllm/ladders/0.33.0.toml]
                                   [--write new.toml] [--version 0.34.0]
Exit status: 0 no difference, 1 differences found, 2 bad usage or no vLLM tree.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))  # tools/ is not a package: siblings import by name
from vllm_registries import (  # noqa: E402  (the reader; its names stay importable from here)
    LINEAR_FILES, MOE_ORACLE_DIR, MODULE_LIST, NOT_A_LADDER, PLATFORM_TESTS, PLATFORM_TITLE, Derived, DeriveError,
    derive, find_vllm_root, installed_version, read_linear, read_moe,
)

__all__ = ["LINEAR_FILES", "MOE_ORACLE_DIR", "MODULE_LIST", "NOT_A_LADDER", "PLATFORM_TESTS", "PLATFORM_TITLE",
           "Derived", "DeriveError", "RegistryDiff", "derive", "diff", "diff_platform", "find_vllm_root",
           "installed_version", "main", "read_linear", "read_moe", "to_ladder"]


@dataclass
class RegistryDiff:
    """Differences of one registry between the shipped ladder and the derived one."""

    name: str
    status: str  # "same", "changed", "added" (only derived), "removed" (only shipped)
    lines: list[str] = field(default_factory=list)


def diff_platform(old: list[str], new: list[str]) -> list[str]:
    """Rungs added, removed and moved (new position among the rungs both lists hold)."""
    out = []
    for r in new:
        if r not in old:
            out.append(f"+ {r} (rung {new.index(r) + 1})")
    for r in old:
        if r not in new:
            out.append(f"- {r} (was rung {old.index(r) + 1})")
    common_old = [r for r in old if r in new]
    common_new = [r for r in new if r in old]
    if common_old != common_new:
        for r in common_new:
            a, b = old.index(r) + 1, new.index(r) + 1
            if common_old.index(r) != common_new.index(r):
                out.append(f"~ {r} moved: rung {a} -> {b}")
    return out


def diff(shipped: dict, derived: list[Derived]) -> tuple[list[RegistryDiff], list[str]]:
    """Compare a shipped ladder TOML document with derived registries.

    Returns the per-registry diffs (derived-able kinds only) and the names of shipped
    registries that this tool does not derive (if-chains, attention lists).
    """
    ship = {r["name"]: r for r in shipped.get("registry", [])}
    skipped = sorted(n for n, r in ship.items() if r["kind"] not in ("linear", "moe"))
    got = {d.name: d for d in derived}
    out = []
    for name in sorted(set(got) | {n for n, r in ship.items() if r["kind"] in ("linear", "moe")}):
        if name not in ship:
            d = got[name]
            out.append(RegistryDiff(name, "added", [f"[{p}] {', '.join(v)}" for p, v in d.platforms.items()]))
            continue
        if name not in got:
            out.append(RegistryDiff(name, "removed"))
            continue
        old, new = ship[name]["platforms"], got[name].platforms
        lines = []
        for p in sorted(set(old) | set(new)):
            if p not in new:
                lines.append(f"[{p}] platform removed")
            elif p not in old:
                lines.append(f"[{p}] platform added: {', '.join(new[p])}")
            else:
                lines += [f"[{p}] {x}" for x in diff_platform(old[p], new[p])]
        out.append(RegistryDiff(name, "changed" if lines else "same", lines))
    return out, skipped


def to_ladder(derived: list[Derived], shipped: Optional[dict], version: str) -> dict:
    """A ladder TOML document of the derived registries; roles, schemes and costs from ``shipped``."""
    ship = {r["name"]: r for r in (shipped or {}).get("registry", [])}
    kernels = dict((shipped or {}).get("kernel", {}))
    regs = []
    for d in derived:
        old = ship.get(d.name, {})
        entry = {"name": d.name, "kind": d.kind, "file": d.file, "role": old.get("role", d.name),
                 "scheme": old.get("scheme", ""), "platforms": d.platforms}
        cost = {}
        for rungs in d.platforms.values():
            for k in rungs:
                cost[k] = old.get("cost", {}).get(k) or kernels.get(k, {}).get("cost_class", "unknown")
                if d.kind == "linear" and k not in kernels:
                    kernels[k] = {"cost_class": "unknown"}
        entry["cost"] = cost
        if old.get("aliases"):
            entry["aliases"] = old["aliases"]
        regs.append(entry)
    regs += [r for n, r in ship.items() if r["kind"] not in ("linear", "moe")]
    return {"engine": "vllm", "version": version,
            "source": "tools/derive_ladders.py (ast over an installed vLLM)", "registry": regs, "kernel": kernels}


def _dump_toml(doc: dict) -> str:
    try:
        import tomli_w
    except ImportError as exc:  # pragma: no cover - maintainer dependency
        raise DeriveError("--write needs tomli-w: pip install '.[maintainer]'") from exc
    return "# Generated by tools/derive_ladders.py; review cost classes marked unknown.\n" + tomli_w.dumps(doc)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, help="site-packages (or an unzipped wheel) holding vllm/")
    ap.add_argument("--against", type=Path, help="shipped ladder TOML to diff against "
                    "(default: patterns/vllm/ladders/<installed version>.toml)")
    ap.add_argument("--write", type=Path, help="write the derived ladder TOML here")
    ap.add_argument("--version", help="release to record (default: vllm/_version.py)")
    args = ap.parse_args(argv)
    try:
        root = find_vllm_root(args.tree)
        version = args.version or installed_version(root) or "unknown"
        derived = derive(root)
        if not derived:
            raise DeriveError(f"{root}: no _POSSIBLE_*KERNELS registry and no MoE oracle list found")
        against = args.against
        if against is None:
            cand = Path(__file__).resolve().parent.parent / "patterns" / "vllm" / "ladders" / f"{version}.toml"
            against = cand if cand.is_file() else None
        shipped = None
        if against is not None:
            try:
                shipped = tomllib.loads(against.read_text())
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise DeriveError(f"{against}: {exc}") from None
        if args.write:
            args.write.write_text(_dump_toml(to_ladder(derived, shipped, version)))
            print(f"wrote {args.write} ({len(derived)} registries, vLLM {version})")
    except DeriveError as exc:
        print(f"derive_ladders: {exc}", file=sys.stderr)
        return 2
    if shipped is None:
        for d in derived:
            print(f"{d.name} ({d.kind}, {d.file})")
            for p, v in d.platforms.items():
                print(f"  [{p}] {', '.join(v)}")
        return 0
    diffs, skipped = diff(shipped, derived)
    changed = [d for d in diffs if d.status != "same"]
    print(f"vLLM {version} tree vs {against}: {len(diffs) - len(changed)} registries same, {len(changed)} differ")
    for d in changed:
        print(f"{d.status.upper():8} {d.name}")
        for line in d.lines:
            print(f"         {line}")
    if skipped:
        print("not derived (if-chains / attention lists, check by hand): " + ", ".join(skipped))
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
