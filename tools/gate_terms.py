"""Maintainers' tool: read the mechanical gate rendering of ``ladders-<v>.json`` into gate terms.

The reference notation (shared/reference/vllm/README.md): sections ``is_supported: ...``,
``can_implement: ...``, ``where f(): ...`` joined by `` | ``; clauses ``requires X``,
``accepts when X`` (an early ``return True``: an alternative path) and ``when C: requires X``
joined by ``; ``; atoms ``cc>=N``, ``cc==N``, ``cc-major==M``, ``env:NAME``, ``CUDA``,
``package 'x' importable``. Helper predicates whose logic the rendering cannot show (C++ ops,
constants) come from the pack's ``gates.toml``. Anything not understood becomes an ``opaque``
term, which evaluates to unknown: a gate is never guessed.
"""
from __future__ import annotations

import re
from typing import Optional

PLATFORM_WORDS = {"CUDA": ["CUDA"], "ROCm": ["ROCM"], "ROCM": ["ROCM"], "XPU": ["XPU"], "CPU": ["CPU"],
                  "TPU": ["TPU"], "CUDA-or-ROCm": ["CUDA", "ROCM"]}
ALL_PLATFORMS = ["CUDA", "ROCM", "XPU", "CPU", "TPU"]
DTYPES = r"torch\.(\w+)|scalar_types\.(\w+)"
LAYER_HINT = re.compile(r"cfg\.|shape|features|group|act_|weight_|_dtype|_type|scale|\bN\b|\bK\b|input_|out_|quant_key|zero_points|has_g_idx|symmetric|static|channelwise|_key\b|can_implement")


def _split_top(text: str, seps: tuple[str, ...]) -> list[str]:
    """Split ``text`` on any of ``seps`` outside parentheses/brackets."""
    out, depth, i, start = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            for s in seps:
                if text.startswith(s, i):
                    out.append(text[start:i])
                    i += len(s)
                    start = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    out.append(text[start:])
    return [o.strip() for o in out if o.strip()]


def _strip_parens(text: str) -> str:
    t = text.strip()
    while t.startswith("(") and t.endswith(")") and len(_split_top(t[1:-1], ("\x00",))) == 1:
        depth = 0
        ok = True
        for i, c in enumerate(t):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(t) - 1:
                ok = False
                break
        if not ok:
            break
        t = t[1:-1].strip()
    return t


class GateParser:
    """Turns one kernel's gate string into a list of term dicts (see ``logscan.packs.model.GateTerm``)."""

    def __init__(self, predicates: list[dict]):
        self.predicates = [(re.compile(p["match"]), p) for p in predicates]
        self.where: dict[str, list[str]] = {}

    # -- atoms -------------------------------------------------------------------------------
    def atom(self, text: str, depth: int = 0) -> list[dict]:
        t = _strip_parens(text)
        src = t
        for rx, p in self.predicates:
            if rx.fullmatch(t):
                out = [dict(term, source=src) for term in p["terms"]]
                out[0]["why"] = p.get("why", "")
                return out
        if t == "cc is None":  # the no-device default argument: never the case when walking for a device
            return [{"kind": "cc_min", "cc": 0, "negate": True, "source": src}]
        m = re.fullmatch(r"(?:cfg\.)?(activation_quant_key|activation_key|weight_quant_key|weight_key) (==|in) \(?([\w, ]+)\)?", t)
        if m:
            field = "act_quant" if m.group(1).startswith("activation") else "weight_quant"
            vals = [v.strip() for v in m.group(3).split(",") if v.strip()]
            if all(re.fullmatch(r"None|k\w+", v) for v in vals):
                return [{"kind": "layer", "field": field, "values": vals, "source": src}]
        if re.fullmatch(r"per_tensor_activation_scales and per_tensor_weight_scales", t):
            return [{"kind": "layer", "field": "scales", "values": ["per-tensor"], "source": src}]
        m = re.fullmatch(r"NOT (in_features|out_features|N|K) % (\d+)", t)
        if m:
            return [{"kind": "shape", "field": _dim(m.group(1)), "multiple_of": int(m.group(2)), "source": src}]
        ors = _split_top(t, (" OR ", " or "))
        if len(ors) > 1:
            return [{"kind": "any_of", "options": [self.expr(o, depth + 1) for o in ors], "source": src}]
        ands = _split_top(t, (" AND ", " and "))
        if len(ands) > 1:
            return [x for a in ands for x in self.expr(a, depth + 1)]
        if t.startswith("NOT(") and t.endswith(")"):
            t2 = "NOT " + t[3:]
            return self.atom(t2, depth)
        if t.startswith("NOT ") or t.startswith("not "):
            inner = self.atom(t[4:], depth + 1)
            out = negate(inner)
            if len(out) == 1:
                out[0] = dict(out[0], source=src)
            return out
        if t == "always":
            return []
        m = re.fullmatch(r"env:(\w+) is (None|False|True)", t)
        if m:
            if m.group(2) == "None":
                return [{"kind": "option", "name": m.group(1), "values": ["None"], "source": src}]
            return [{"kind": "env", "name": m.group(1), "negate": m.group(2) == "False", "source": src}]
        if t in PLATFORM_WORDS:
            return [{"kind": "platform", "platforms": PLATFORM_WORDS[t], "source": src}]
        m = re.fullmatch(r"(CUDA-or-ROCm|CUDA|ROCm|XPU|CPU)(?: or (CUDA-or-ROCm|CUDA|ROCm|XPU|CPU))+", t)
        if m:
            plats = sorted({p for w in re.findall(r"CUDA-or-ROCm|CUDA|ROCm|XPU|CPU", t) for p in PLATFORM_WORDS[w]})
            return [{"kind": "platform", "platforms": plats, "source": src}]
        m = re.fullmatch(r"cc ?>= ?(\d+)", t)
        if m:
            return [{"kind": "cc_min", "cc": int(m.group(1)), "source": src}]
        m = re.fullmatch(r"cc ?< ?(\d+)", t)
        if m:
            return [{"kind": "cc_min", "cc": int(m.group(1)), "negate": True, "source": src}]
        m = re.fullmatch(r"cc ?== ?(\d+)", t)
        if m:
            return [{"kind": "cc_eq", "cc": int(m.group(1)), "source": src}]
        m = re.fullmatch(r"cc-major ?== ?(\d+)", t)
        if m:
            return [{"kind": "cc_family", "major": int(m.group(1)), "source": src}]
        m = re.fullmatch(r"cc in \((\d+(?:, ?\d+)*)\)", t)
        if m:
            return [{"kind": "any_of", "options": [[{"kind": "cc_eq", "cc": int(x)}] for x in m.group(1).split(",")],
                     "source": src}]
        m = re.fullmatch(r"cc >= (\d+) and cc < (\d+)", t)
        if m:
            return [{"kind": "cc_range", "lo": int(m.group(1)), "hi": int(m.group(2)), "source": src}]
        m = re.fullmatch(r"env:(\w+)", t)
        if m:
            return [{"kind": "env", "name": m.group(1), "source": src}]
        m = re.fullmatch(r"(?:package '([\w.]+)' importable|importable ([\w.]+))", t)
        if m:
            return [{"kind": "package", "name": m.group(1) or m.group(2), "source": src}]
        m = re.fullmatch(r"cfg\.(act_type|out_type|out_dtype|input_dtype|weight_type) == (?:" + DTYPES + ")", t)
        if m:
            return [{"kind": "dtype", "field": _field(m.group(1)), "values": [m.group(2) or m.group(3)], "source": src}]
        m = re.fullmatch(r"cfg\.(act_type|out_type|out_dtype|input_dtype) in \(([^)]*)\)", t)
        if m:
            vals = re.findall(r"torch\.(\w+)", m.group(2))
            if vals:
                return [{"kind": "dtype", "field": _field(m.group(1)), "values": vals, "source": src}]
        m = re.fullmatch(r"cfg\.group_size == (-?\d+)", t)
        if m:
            return [{"kind": "group_size", "values": [m.group(1)], "source": src}]
        m = re.fullmatch(r"cfg\.zero_points", t)
        if m:
            return [{"kind": "layer", "field": "zero_points", "values": ["true"], "source": src}]
        m = re.fullmatch(r"(act|weight)(?:_quant_desc\.group_shape|_group_shape) == GroupShape\((\d+), ?(\d+)\)", t)
        if m:
            return [{"kind": "layer", "field": f"{m.group(1)}_group_shape", "values": [f"{m.group(2)}x{m.group(3)}"],
                     "source": src}]
        m = re.fullmatch(r"(in_features|out_features|N|K) % (\d+) == 0", t)
        if m:
            return [{"kind": "shape", "field": _dim(m.group(1)), "multiple_of": int(m.group(2)), "source": src}]
        m = re.fullmatch(r"(in_features|out_features|N|K) > 0", t)
        if m:
            return []  # every real layer has a positive size
        m = re.fullmatch(r"(\w+)\(\)", t) or re.fullmatch(r"(\w+)\([^()]*\)", t)
        if m and m.group(1) in self.where and depth < 4:
            return self.clauses(self.where[m.group(1)], depth + 1)
        return [{"kind": "opaque", "text": src, "scope": self._scope(src), "source": src}]

    def expr(self, text: str, depth: int = 0) -> list[dict]:
        return self.atom(text, depth)

    @staticmethod
    def _scope(text: str) -> str:
        return "layer" if LAYER_HINT.search(text) else "machine"

    # -- clauses -----------------------------------------------------------------------------
    def clauses(self, items: list[str], depth: int = 0) -> list[dict]:
        req: list[dict] = []
        accepts: list[list[dict]] = []
        for cl in items:
            cl = cl.strip()
            if cl.startswith("requires "):
                req += self.expr(cl[len("requires "):], depth)
            elif cl.startswith("accepts when "):
                accepts.append(self.expr(cl[len("accepts when "):], depth))
            elif cl == "rejects":
                req.append({"kind": "opaque", "text": "rejects otherwise", "scope": "machine", "source": cl})
            else:
                m = re.fullmatch(r"when (.+?): requires (.+)", cl)
                if m:
                    cond, what = m.group(1), m.group(2)
                    if cond in ("cc is None", "not can_implement_base"):
                        continue
                    plats = _platform_cond(cond)
                    if plats is not None:
                        for term in self.expr(what, depth):
                            req.append(dict(term, only_on=plats))
                        continue
                    req.append({"kind": "opaque", "text": cl, "scope": self._scope(cl), "source": cl})
                elif cl.startswith("otherwise:"):
                    continue
                else:
                    req.append({"kind": "opaque", "text": cl, "scope": self._scope(cl), "source": cl})
        if accepts:
            return [{"kind": "any_of", "options": accepts + ([req] if req else []),
                     "source": "; ".join(items)[:200]}]
        return req

    def condition(self, when: str) -> list[dict]:
        """Terms of one if/elif step condition (``when`` of a reference ``steps`` entry)."""
        self.where = {}
        return _dedupe(self.expr(when.strip()))

    def parse(self, gate: str, min_capability: Optional[int]) -> list[dict]:
        """All terms of one gate string (plus ``get_min_capability()`` as ``cc_min``)."""
        self.where = {}
        mains: list[list[str]] = []
        if gate and not gate.startswith("no gate"):
            for sec in gate.split(" | "):
                head, _, body = sec.partition(": ")
                cls = [c for c in body.split("; ")]
                m = re.fullmatch(r"where (\w+)\(\)", head.strip())
                if m:
                    self.where[m.group(1)] = cls
                else:
                    mains.append(cls)
        terms: list[dict] = []
        if min_capability:
            terms.append({"kind": "cc_min", "cc": int(min_capability), "only_on": ["CUDA"],
                          "source": f"get_min_capability() = {min_capability}"})
        for cls in mains:
            terms += self.clauses(cls)
        return _dedupe(terms)


def negate(terms: list[dict]) -> list[dict]:
    """NOT of a conjunction of terms (De Morgan): one term flips, several become an ``any_of``."""
    if not terms:  # NOT(always) is never: kept as an unstructured, always-unknown term
        return [{"kind": "opaque", "text": "never", "scope": "machine"}]
    if len(terms) > 1:
        return [{"kind": "any_of", "options": [negate([t]) for t in terms]}]
    t = terms[0]
    if t["kind"] == "any_of":
        return [x for opt in t["options"] for x in negate(opt)]
    return [dict(t, negate=not t.get("negate", False))]


def _field(name: str) -> str:
    return {"out_type": "out_dtype", "input_dtype": "act_type"}.get(name, name)


def _dim(name: str) -> str:
    return {"N": "out_features", "K": "in_features"}.get(name, name)


def _platform_cond(cond: str) -> Optional[list[str]]:
    c = cond.strip()
    if c in PLATFORM_WORDS:
        return PLATFORM_WORDS[c]
    m = re.fullmatch(r"not (CUDA|ROCm|XPU|CPU)", c)
    if m:
        return [p for p in ALL_PLATFORMS if p not in PLATFORM_WORDS[m.group(1)]]
    return None


def _dedupe(terms: list[dict]) -> list[dict]:
    seen, out = set(), []
    for t in terms:
        key = repr(sorted((k, v) for k, v in t.items() if k not in ("source", "why")))
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out
