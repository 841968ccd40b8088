#!/usr/bin/env python3
"""Maintainers' library: build, extend, diff and write ``patterns/<engine>/ladder-history.toml``.

A history is kept compact (see ``logscan/packs/history.py``): per registry and platform, one
ordering per run of consecutive releases with the same list. Here it is handled *expanded*,
as ``{release: {registry: (kind, file, {platform: [rungs]})}}``; ``compress`` turns that
back into the file's form, so adding or replacing a release is: expand, set, compress.
Nothing here touches the network (``tools/release_source.py`` does) or imports an engine.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: registry name -> (kind, file, {platform: rungs}[, {platform: gate sources}])
#: (the fourth item only for registries derived from if/elif code: SGLang, one gate per rung)
Release = dict[str, tuple]


def from_derived(derived) -> Release:
    """``derive_ladders.derive(root)`` / ``derive_sglang.derive(root)`` output -> one expanded release."""
    out: Release = {}
    for d in derived:
        plats = {p: list(v) for p, v in d.platforms.items()}
        gates = getattr(d, "gates", None)
        out[d.name] = (d.kind, d.file, plats, {p: list(v) for p, v in gates.items()}) if gates else (d.kind, d.file, plats)
    return out


def _gates(entry: tuple) -> dict[str, list[str]]:
    return entry[3] if len(entry) > 3 else {}


def expand(doc: dict) -> dict[str, Release]:
    """A history document (parsed TOML) -> ``{release: Release}`` for every listed release."""
    rels = list(doc.get("releases", []))
    idx = {r: i for i, r in enumerate(rels)}
    out: dict[str, Release] = {r: {} for r in rels}
    for reg in doc.get("registry", []):
        for o in reg.get("orderings", []):
            for r in rels[idx[o["first"]]: idx[o["last"]] + 1]:
                entry = out[r].setdefault(reg["name"], (reg["kind"], reg.get("file", ""), {}, {}))
                entry[2][o["platform"]] = list(o["rungs"])
                if "gates" in o:
                    entry[3][o["platform"]] = list(o["gates"])
    return {r: {n: (e if e[3] else e[:3]) for n, e in regs.items()} for r, regs in out.items()}


def compress(engine: str, source: str, releases: dict[str, Release],
             handmade: Optional[list[dict]] = None) -> dict:
    """``{release: Release}`` -> a history document, releases oldest first, registries by first sight.

    ``handmade``: registries not derived from source (``{"name", "why"}``), kept as entries
    without orderings so the data says which ladders stay hand-made and why."""
    rels = sorted(releases, key=Version)
    regs: dict[str, dict] = {}
    for i, r in enumerate(rels):
        for name, entry in releases[r].items():
            kind, file, plats = entry[:3]
            gates = _gates(entry)
            reg = regs.setdefault(name, {"name": name, "kind": kind, "file": file, "orderings": []})
            reg["file"] = file or reg["file"]  # the newest file that holds it
            for p, rungs in plats.items():
                g = gates.get(p)
                last = next((o for o in reversed(reg["orderings"]) if o["platform"] == p), None)
                if (last is not None and last["rungs"] == rungs and last.get("gates") == g
                        and last["last"] == (rels[i - 1] if i else None)):
                    last["last"] = r
                else:
                    o = {"platform": p, "first": r, "last": r, "rungs": list(rungs)}
                    if g is not None:
                        o["gates"] = list(g)
                    reg["orderings"].append(o)
    out = list(regs.values())
    if engine == "sglang":
        add_terms(out)
    for h in handmade or []:
        out.append({"name": h["name"], "kind": "if_chain", "file": h.get("file", ""), "orderings": [],
                    "handmade": h["why"]})
    return {"engine": engine, "source": source, "releases": rels, "registry": out}


def add_terms(registries: list[dict]) -> None:
    """Give each registry with gate sources its ``terms``: one ``{gate, terms}`` per distinct gate
    text of its orderings (first-sight order), the text read by ``tools/sglang_gate_terms.py``
    (unknown atoms become ``opaque`` terms). Stored once per text, not per rung or release."""
    sys.path.append(str(Path(__file__).resolve().parent))
    from _common import tool

    sg = tool("sglang_gate_terms")
    for reg in registries:
        texts = list(dict.fromkeys(g for o in reg.get("orderings", []) for g in o.get("gates", [])))
        if texts:
            reg["terms"] = [{"gate": g, "terms": _no_source(sg.translate(reg["name"], g))} for g in texts]


def _no_source(terms: list[dict]) -> list[dict]:
    """Terms without their ``source`` (the gate text beside them says it; keeps the file small)."""
    return [{k: ([_no_source(o) for o in v] if k == "options" else v) for k, v in t.items() if k != "source"}
            for t in terms]


def _inline(v) -> str:
    """A value as inline TOML (strings as JSON strings; tables with false / empty keys dropped)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return _s(v)
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    items = [(k, x) for k, x in v.items() if x not in (False, None, "", [])]
    return "{ " + ", ".join(f"{k} = {_inline(x)}" for k, x in items) + " }" if items else "{}"


def load(path: Path) -> Optional[dict]:
    """The parsed history at ``path``; None when the file does not exist."""
    if not path.is_file():
        return None
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _s(v: str) -> str:
    return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dumps(doc: dict) -> str:
    """A history document as TOML: one inline table per ordering, stable order (diff-friendly)."""
    lines = ["# Generated by tools/refresh.py from each release's own source (ast); do not edit.",
             f"engine = {_s(doc['engine'])}", f"source = {_s(doc['source'])}", "releases = ["]
    for i in range(0, len(doc["releases"]), 8):
        lines.append("    " + ", ".join(_s(r) for r in doc["releases"][i:i + 8]) + ",")
    lines.append("]")
    for reg in doc["registry"]:
        lines += ["", "[[registry]]", f"name = {_s(reg['name'])}", f"kind = {_s(reg['kind'])}",
                  f"file = {_s(reg['file'])}"]
        if reg.get("handmade"):
            lines.append(f"handmade = {_s(reg['handmade'])}")
        lines.append("orderings = [")
        for o in reg["orderings"]:
            g = (f", gates = [{', '.join(_s(x) for x in o['gates'])}]") if "gates" in o else ""
            lines.append(f"    {{ platform = {_s(o['platform'])}, first = {_s(o['first'])}, last = {_s(o['last'])}, "
                         f"rungs = [{', '.join(_s(k) for k in o['rungs'])}]{g} }},")
        lines.append("]")
        if reg.get("terms"):
            lines.append("terms = [")
            lines += [f"    {_inline(t)}," for t in reg["terms"]]
            lines.append("]")
    return "\n".join(lines) + "\n"


def summarize(old: Optional[Release], new: Release, old_name: str, new_name: str) -> list[str]:
    """A reviewer's summary of ``old`` -> ``new``: registries and platforms added or gone,
    kernels new to the release, rungs removed, lists reordered. Empty when equal."""
    if old is None:
        return [f"{new_name}: first release of the history ({len(new)} registries)"]
    out = []
    old_k = {k for e in old.values() for v in e[2].values() for k in v}
    new_k = {k for e in new.values() for v in e[2].values() for k in v}
    for k in sorted(new_k - old_k):
        out.append(f"new kernel      {k}")
    for k in sorted(old_k - new_k):
        out.append(f"gone kernel     {k}")
    for name in sorted(set(new) - set(old)):
        out.append(f"new registry    {name}: " + "; ".join(f"[{p}] {', '.join(v)}" for p, v in new[name][2].items()))
    for name in sorted(set(old) - set(new)):
        out.append(f"gone registry   {name}")
    for name in sorted(set(old) & set(new)):
        op, np_ = old[name][2], new[name][2]
        for p in sorted(set(op) | set(np_)):
            if p not in np_:
                out.append(f"gone platform   {name} [{p}]")
            elif p not in op:
                out.append(f"new platform    {name} [{p}]: {', '.join(np_[p])}")
            elif op[p] != np_[p]:
                a, b = op[p], np_[p]
                for k in b:
                    if k not in a:
                        out.append(f"added rung      {name} [{p}] {k} (rung {b.index(k) + 1}/{len(b)})")
                for k in a:
                    if k not in b:
                        out.append(f"removed rung    {name} [{p}] {k} (was rung {a.index(k) + 1}/{len(a)})")
                ca, cb = [k for k in a if k in b], [k for k in b if k in a]
                if ca != cb:
                    out.append(f"reordered       {name} [{p}]: {', '.join(a)} -> {', '.join(b)}")
            if p in op and p in np_:  # if/elif registries: a rung whose branch test changed
                og, ng = dict(zip(op[p], _gates(old[name]).get(p, []))), dict(zip(np_[p], _gates(new[name]).get(p, [])))
                for k in np_[p]:
                    if k in og and k in ng and og[k] != ng[k]:
                        out.append(f"gate changed    {name} [{p}] {k}: {og[k]} -> {ng[k]}")
    return out
