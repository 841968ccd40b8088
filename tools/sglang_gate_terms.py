#!/usr/bin/env python3
"""Maintainers' library: SGLang branch tests (Python source text) -> logscan gate terms.

``tools/derive_sglang.py`` stores each if/elif rung's gate as the ``ast.unparse`` text of its
branch's tests (``patterns/sglang/ladder-history.toml``, ``gates``). ``translate`` reads that
text with ``ast`` and returns the conjunction of ``GateTerm`` dicts (``logscan/packs/
model_ladders.py``) it states, for the atoms whose meaning was read from SGLang's source:

- platform probes: ``_is_cuda`` / ``is_cuda()`` (CUDA), ``_is_hip`` / ``is_hip()`` (ROCM),
  ``_is_xpu`` / ``is_xpu()`` (XPU), ``_is_npu`` / ``is_npu()`` (NPU), ``_is_cpu`` (CPU);
- capability probes, ``sglang/srt/utils/common.py`` 0.5.x ``_check_cuda_device_version``
  partials (CUDA, major in the list, CUDA runtime >= the version): ``is_sm100_supported()``
  ([10], 12.8), ``is_sm120_supported()`` ([12], 12.8), ``is_blackwell_supported()``
  ([10, 11, 12], 12.8), ``is_sm90_supported()`` ([9], 12.3), and their 0.5.19+ spellings
  ``get_platform().is_sm100`` etc. (``runtime_context.py`` maps them to the same functions);
- ``get_device_capability()`` compared with ``(major, minor)`` tuples -> ``cc_min`` / ``cc_range``;
- ``cutlass_fp8_supported()`` (major >= 9 with CUDA >= 12.0, or sm89 with CUDA >= 12.4);
- ``is_flashinfer_available()`` (CUDA and flashinfer importable, ``SGLANG_IS_FLASHINFER_AVAILABLE``
  default true); ``_use_aiter`` (``fp8_utils.py``: ROCm and ``SGLANG_USE_AITER``);
- ``get_bool_env_var("SGLANG_X"[, default])`` -> ``env``;
- per registry, a server argument read by a local name (``backend == 'auto'`` in
  ``initialize_fp4_gemm_config`` is ``--fp4-gemm-backend``; ``moe_runner_backend.is_auto()``);
- ``and`` / ``or`` / ``not``, and ``always`` (no test: the chain's last branch).

Anything else (``self.use_marlin``, ``deep_gemm_wrapper.ENABLE_JIT_DEEPGEMM``, local flags)
becomes an ``opaque`` term carrying its text: it evaluates to unknown, so a gate is never
guessed. Raises nothing: unparsable text is one opaque term.
"""
from __future__ import annotations

import ast
from typing import Optional

Term = dict

_PLATFORM = {"_is_cuda": "CUDA", "is_cuda": "CUDA", "_is_hip": "ROCM", "is_hip": "ROCM",
             "_is_xpu": "XPU", "is_xpu": "XPU", "_is_npu": "NPU", "is_npu": "NPU", "_is_cpu": "CPU"}
#: ``_check_cuda_device_version`` partials: name -> (majors, CUDA runtime minimum)
_CUDA_DEVICE = {"is_sm100_supported": ([10], "12.8"), "is_sm120_supported": ([12], "12.8"),
                "is_blackwell_supported": ([10, 11, 12], "12.8"), "is_sm90_supported": ([9], "12.3")}
#: per registry: a server argument's value tested by a local name or method
_OPTIONS = {
    "initialize_fp4_gemm_config": {"backend": ("--fp4-gemm-backend", "auto")},
    "ModelOptNvFp4FusedMoEMethod.create_moe_runner": {"moe_runner_backend": ("--moe-runner-backend", "auto")},
}


def _opaque(node_or_text, why: str = "") -> Term:
    text = node_or_text if isinstance(node_or_text, str) else ast.unparse(node_or_text)
    return {"kind": "opaque", "text": text + (f" ({why})" if why else ""), "source": text}


def _device(majors: list[int], cuda: str, src: str) -> list[Term]:
    fam = ({"kind": "cc_family", "major": majors[0]} if len(majors) == 1 else
           {"kind": "any_of", "options": [[{"kind": "cc_family", "major": m}] for m in majors]})
    return [{"kind": "platform", "platforms": ["CUDA"]}, dict(fam, source=src),
            {"kind": "cuda_min", "version": cuda, "source": src}]


def _neg(terms: list[Term]) -> list[Term]:
    """not (t1 and t2 ...) -> any_of([not t1], [not t2], ...); a single term flips ``negate``."""
    if not terms:
        return [_opaque("not (always)", "never")]
    flipped = [dict(t, negate=not t.get("negate", False)) for t in terms]
    if len(flipped) == 1:
        return flipped
    return [{"kind": "any_of", "options": [[t] for t in flipped]}]


def _call_name(node: ast.AST) -> Optional[str]:
    """``f()`` -> ``f``; ``get_platform().is_sm100`` -> ``is_sm100_supported``."""
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        f = node.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            return f"{f.value.id}.{f.attr}()"
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "get_platform"):
        return f"{node.attr}_supported"
    return None


def _cap_tuple(node: ast.AST) -> Optional[int]:
    if (isinstance(node, ast.Tuple) and len(node.elts) == 2
            and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts)):
        return node.elts[0].value * 10 + node.elts[1].value
    return None


def _is_capability(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and (
        getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "get_device_capability" and not node.args


def _compare(node: ast.Compare, registry: str) -> list[Term]:
    src = ast.unparse(node)
    items = [node.left, *node.comparators]
    lo, hi, terms = None, None, []
    for a, op, b in zip(items, node.ops, items[1:]):
        if _is_capability(a) and _cap_tuple(b) is not None:
            cap, v = a, _cap_tuple(b)
        elif _is_capability(b) and _cap_tuple(a) is not None:
            cap, v = b, _cap_tuple(a)
            op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}.get(type(op), op)
        else:
            opt = _OPTIONS.get(registry, {})
            if (len(node.ops) == 1 and isinstance(a, ast.Name) and a.id in opt
                    and isinstance(b, ast.Constant) and isinstance(b.value, str)
                    and isinstance(op, (ast.Eq, ast.NotEq))):
                name, default = opt[a.id]
                return [{"kind": "option", "name": name, "values": [b.value], "default": default,
                         "negate": isinstance(op, ast.NotEq), "source": src}]
            return [_opaque(node)]
        if isinstance(op, ast.GtE):
            lo = v if lo is None else max(lo, v)
        elif isinstance(op, ast.Gt):
            lo = v + 1 if lo is None else max(lo, v + 1)
        elif isinstance(op, ast.Lt):
            hi = v if hi is None else min(hi, v)
        elif isinstance(op, ast.LtE):
            hi = v + 1 if hi is None else min(hi, v + 1)
        elif isinstance(op, ast.Eq):
            terms.append({"kind": "cc_eq", "cc": v, "source": src})
        else:
            return [_opaque(node)]
    if lo is not None and hi is not None:
        terms.append({"kind": "cc_range", "lo": lo, "hi": hi, "source": src})
    elif lo is not None:
        terms.append({"kind": "cc_min", "cc": lo, "source": src})
    elif hi is not None:
        terms.append({"kind": "cc_range", "lo": 0, "hi": hi, "source": src})
    return terms


def _env(node: ast.Call) -> Optional[list[Term]]:
    if not (isinstance(node.func, ast.Name) and node.func.id == "get_bool_env_var"):
        return None
    if not node.args or not isinstance(node.args[0], ast.Constant) or not isinstance(node.args[0].value, str):
        return None
    default = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
    if default is None:
        dv = "false"  # get_bool_env_var(name, default="false")
    elif isinstance(default, ast.Constant) and isinstance(default.value, str):
        dv = default.value
    else:
        return None
    return [{"kind": "env", "name": node.args[0].value, "default": dv, "source": ast.unparse(node)}]


def _atom(node: ast.AST, registry: str) -> list[Term]:
    src = ast.unparse(node)
    if isinstance(node, ast.Name) and node.id in _PLATFORM:
        return [{"kind": "platform", "platforms": [_PLATFORM[node.id]], "source": src}]
    if isinstance(node, ast.Name) and node.id == "_use_aiter":
        return [{"kind": "platform", "platforms": ["ROCM"], "source": src},
                {"kind": "env", "name": "SGLANG_USE_AITER", "default": "false", "source": src}]
    if isinstance(node, ast.Compare):
        return _compare(node, registry)
    if isinstance(node, ast.Call):
        env = _env(node)
        if env is not None:
            return env
    name = _call_name(node)
    if name in _PLATFORM:
        return [{"kind": "platform", "platforms": [_PLATFORM[name]], "source": src}]
    if name in _CUDA_DEVICE:
        return _device(*_CUDA_DEVICE[name], src)
    if name == "cutlass_fp8_supported":
        return [{"kind": "platform", "platforms": ["CUDA"]},
                {"kind": "any_of", "options": [[{"kind": "cc_range", "lo": 89, "hi": 90}, {"kind": "cuda_min", "version": "12.4"}],
                                               [{"kind": "cc_min", "cc": 90}, {"kind": "cuda_min", "version": "12.0"}]],
                 "source": src}]
    if name == "is_flashinfer_available":
        return [{"kind": "platform", "platforms": ["CUDA"], "source": src},
                {"kind": "package", "name": "flashinfer", "source": src},
                {"kind": "env", "name": "SGLANG_IS_FLASHINFER_AVAILABLE", "default": "true", "source": src}]
    opt = _OPTIONS.get(registry, {})
    if name and "." in name:
        obj, meth = name[:-2].split(".", 1)
        if obj in opt and meth.startswith("is_"):
            flag, default = opt[obj]
            return [{"kind": "option", "name": flag, "values": [meth[3:]], "default": default, "source": src}]
    return [_opaque(node)]


def _terms(node: ast.AST, registry: str) -> list[Term]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [t for v in node.values for t in _terms(v, registry)]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return [{"kind": "any_of", "options": [_terms(v, registry) for v in node.values], "source": ast.unparse(node)}]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _neg(_terms(node.operand, registry))
    return _atom(node, registry)


def translate(registry: str, text: str) -> list[Term]:
    """The gate terms (all must hold) of one rung's gate source ``text`` in ``registry``.

    ``always`` -> ``[]``. Atoms not known (module docstring) -> ``opaque`` terms."""
    if text.strip() == "always":
        return []
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return [_opaque(text, "not parsable")]
    return _terms(node, registry)


def is_opaque(terms: list[Term]) -> bool:
    """Whether any term (or nested alternative) is ``opaque``."""
    return any(t["kind"] == "opaque" or any(is_opaque(o) for o in t.get("options", [])) for t in terms)
