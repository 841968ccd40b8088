"""How a ladder gate term reads: one table of per-kind forms for both renderings.

A rung's gate term (``GateTerm``, from the engines' dispatch code: vLLM's
``is_supported`` / ``can_implement`` checks, SGLang's if/elif ladders) is shown two ways:

- **source-shaped** (``gates.describe``): ``cc>=75``, ``pkg flashinfer``, ``group_size in {-1,128}``,
  what ``logscan ladder --gate-source`` prints;
- **in words** (``words.term_words``): ``sm75 or newer``, ``flashinfer installed``, what a capacity
  planner reads.

Each kind has one row here: its source form, its words form and, for kinds whose words say
the negation themselves (``older than sm90``, ``flashinfer not installed``), a negated words
form; any other negated term reads ``NOT <form>`` / ``not <form>``. ``any_of`` (alternatives)
and ``opaque`` kinds of ``GateKind`` not in the table are shaped by the callers / ``opaque``.
"""
from __future__ import annotations

from typing import Optional

from ..packs.model import GateTerm

#: kind -> (source form, words form, words form when negated; None: ``not`` + the words form).
#: Fields: the term's own (``cc``, ``major``, ``lo``, ``hi``, ``version``, ``name``, ``flag``,
#: ``field``, ``multiple_of``) and the joined ones of ``_fields``.
TERM_FORMS: dict[str, tuple[str, str, Optional[str]]] = {
    "platform": ("{platforms_slash}", "on {platforms_or}", None),
    "cc_min": ("cc>={cc}", "sm{cc} or newer", "older than sm{cc}"),
    "cc_eq": ("cc=={cc}", "exactly sm{cc}", None),
    "cc_family": ("sm{major}x", "an sm{major}x GPU (sm{major}0-sm{major}9)", None),
    "cc_range": ("{lo}<=cc<{hi}", "sm{lo} to sm{hi_1}", None),
    "cuda_min": ("CUDA>={version}", "CUDA runtime {version} or newer", "CUDA runtime older than {version}"),
    "torch_min": ("torch>={version}", "torch {version} or newer", "torch older than {version}"),
    "package": ("pkg {name}", "{name} installed", "{name} not installed"),
    "build": ("build {flag}", "built with {flag}", "built without {flag}"),
    "env": ("env {name}{default_sfx}", "{name} set{default_sfx}", "{name} unset/false{default_sfx}"),
    "option": ("{name} in {{{values_csv}}}{default_sfx}", "{name} = {values_or}{default_sfx}", None),
    "dtype": ("{field} in {{{values_csv}}}", "{field_words} {values_or}", None),
    "layer": ("{field} in {{{values_csv}}}", "{field_words} {values_or}", None),
    "group_size": ("group_size in {{{values_csv}}}", "group size {values_slash}", None),
    "shape": ("{field} % {multiple_of} == 0", "{field_words} divisible by {multiple_of}", None),
    "gfx": ("gfx in {{{gfx_csv}}}", "ROCm arch {gfx_or}", None),
    # a condition only the engine's source states (Python code, or prose of it): quoted as code,
    # never with quotes that its own quotes break ('hasattr(torch.ops, '_rocm_C')')
    "opaque": ("?{text}", "source condition `{text_or_source}`", None),
}


def _default_sfx(default) -> str:
    """`` (default 0)``; a default that is itself the word ``default`` (TRT-LLM's
    ``nvfp4_gemm_config.allowed_backends``, llm_args.py) reads `` (unset: "default")``, not
    ``(default default)`` (trial 38)."""
    if default is None:
        return ""
    if str(default).strip().lower() == "default":
        return f' (unset: "{default}")'
    return f" (default {default})"


def _fields(t: GateTerm, words: bool) -> dict[str, object]:
    """The format fields of ``t``; in words a missing capability reads as 0 (``sm0``)."""
    gfx = [f"{v}*" for v in t.values]
    f: dict[str, object] = dict(
        cc=t.cc, major=t.major, lo=t.lo, hi=t.hi, version=t.version, name=t.name, flag=t.flag,
        field=t.field, multiple_of=t.multiple_of, text=t.text, text_or_source=t.text or t.source,
        platforms_slash="/".join(t.platforms), platforms_or=" or ".join(t.platforms),
        values_csv=",".join(t.values), values_or=" or ".join(t.values), values_slash=" / ".join(t.values),
        gfx_csv=",".join(gfx), gfx_or=" or ".join(gfx), field_words=t.field.replace("_", " "),
        default_sfx=_default_sfx(t.default),
    )
    if words:
        f.update(cc=t.cc or 0, lo=t.lo or 0, hi_1=(t.hi or 1) - 1)
    return f


def term_form(t: GateTerm, words: bool = False) -> tuple[str, bool]:
    """``(form, says_negation)``: ``t`` rendered from its kind's row of ``TERM_FORMS``, without
    ``only_on`` and, unless ``says_negation``, without its negation (the caller prefixes it).

    ``words``: the words form, else the source form. A kind with no row (``any_of``: shaped
    by the callers) renders as ``opaque``. Never raises on a term the pack model accepts.
    """
    source, plain, negated = TERM_FORMS.get(t.kind, TERM_FORMS["opaque"])
    if not words:
        return source.format(**_fields(t, False)), False
    if t.negate and negated is not None:
        return negated.format(**_fields(t, True)), True
    return plain.format(**_fields(t, True)), False
