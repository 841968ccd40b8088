"""The kernel an event line names as its choice: placed on a ladder, or said not understood.

A broad rule reads a line as an event of its kind (vLLM's ``vllm.family.fallback`` reads
'Falling back to EmulationMxfp8LinearKernel' and captures ``to``; ``vllm.moe.prepare-finalize``
reads a bare 'Using EmulationMxfp8LinearKernel'): it names no layer family, so no selection, and
the captured part made the line "read". The run then named no kernel it chose, and a gate passed.
Here such an event's target, by ``patterns/lexicon.toml`` ``[target]``:

- the kernel a choice verb names as its object in the message (group ``kernel`` of ``chosen``),
  else a ``to`` capture holding a kernel-name token of the vocabulary;
- placed (``close.close_run``) when exactly one registry of the run's release holds it (the
  ladders' names and aliases, ``LadderIndex.holders``) and the name says which rung it is
  (``placeable``): a selection whose family is the registry's kind and scheme;
- else listed as not understood (kind ``unread``, so the gate's ``KERNEL_LINE_UNREAD`` and
  ``NO_KERNEL_SEEN`` see it: ``unplaced``), unless a selection of the run names that kernel.
"""
from __future__ import annotations

from typing import Optional

from .. import rxcache
from ..models import Event, Unexplained
from ..models_run import CONFIG_SHOWN
from .lexicon import normalise
from .runstate import fill

#: family words of a registry kind (``Registry.kind``); other kinds (if-chains, attention) are not placed
_FAMILY = {"linear": "linear", "moe": "MoE"}

_RX: dict[str, tuple] = {}


def _compiled(target) -> tuple:
    """``(vocabulary, chosen, excludes)`` compiled (``excludes`` None when empty), once per target."""
    key = "\0".join((target.vocabulary, target.chosen, target.excludes))
    got = _RX.get(key)
    if got is None:
        vocab = "(?:" + target.vocabulary + ")"
        got = _RX[key] = (rxcache.compile(vocab), rxcache.compile(target.chosen.replace("{vocabulary}", vocab)),
                          rxcache.compile(target.excludes) if target.excludes else None)
    return got


def compiled(target) -> tuple:
    """``(vocabulary, chosen, excludes)`` of a lexicon ``[target]``, compiled (the tests' and tools' view)."""
    return _compiled(target)


def event_target(lexicon, ev: Event) -> Optional[tuple[str, str]]:
    """``(kernel, how)`` the event ``ev`` names as its chosen kernel, None when it names none.

    ``how``: ``"'to'"`` (its ``to`` capture) or the choice verb as printed. Only events of the
    lexicon's ``[target]`` ``kinds``; the message must pass ``chosen``'s exclusions (attention,
    sampling, KV-cache lines) also for a ``to`` capture."""
    target = getattr(lexicon, "target", None) if lexicon is not None else None
    if target is None or ev.kind not in target.kinds:
        return None
    msg = ev.message
    if len(msg) > 1000:
        return None  # a dump or a backtrace, not a sentence (the sweep's bound too)
    vocab, chosen, excludes = _compiled(target)
    try:
        if excludes is not None and excludes.search(msg, timeout=0.05):
            return None
        m = chosen.search(msg, timeout=0.05)
        if m is not None:
            # the verb's own object first: a `to` may be what was overridden ('VLLM_BATCH_INVARIANT
            # overrides --linear-backend=MarlinLinearKernel; using the CUTLASS ...')
            return m.group("kernel"), m.group("verb")
        to = (ev.groups.get("to") or "").strip()
        t = vocab.search(to, timeout=0.05) if to else None
    except TimeoutError:
        return None  # no target read in the time a line may take: nothing claimed
    return (t.group(0), "'to'") if t is not None else None


#: run facts (``sets`` keys) every report shows: the text report's ``config`` line
#: (``models_run.CONFIG_SHOWN``); a pack's ``[kernel_facts]`` add theirs
SHOWN_FACTS = frozenset(f or k for k, f in CONFIG_SHOWN)


def stated_fact(kernel: str, sets: dict[str, str], groups: dict[str, str], shown=SHOWN_FACTS) -> bool:
    """Whether a run-fact rule (``sets``) states the named ``kernel`` itself as the value of a fact the
    report shows (``shown``: ``SHOWN_FACTS`` and the engine pack's ``kernel_facts``). vLLM's 'The
    model is convertible to gptq_marlin during runtime. Using gptq_marlin kernel.' sets
    ``quantization = gptq_marlin``: the name reaches the report as the method. A fact rule whose line
    names a kernel as its choice and shows it in no fact swallowed it: not understood."""
    if not sets:
        return False
    k = normalise(kernel).lower()
    return any(k and key in shown and k == normalise(fill(t, groups)).lower() for key, t in sets.items())


#: a name that says which rung it is: a class name (a lower-case letter, then a capital:
#: ``MarlinLinearKernel``), a digit or an underscore (``SM90_FI_MXFP4_BF16``), or a space (a label)
_SPECIFIC = rxcache.compile(r"[a-z][A-Z]|[\d_ ]")


def placeable(name: str) -> bool:
    """Whether ``name`` says which rung it is: a class name, an enum-style member or a spaced label
    ('FlashInfer MXFP4 BF16', an if-chain's alias). A bare vendor word ('CUTLASS', 'Marlin',
    'Triton') is a rung or alias of many registries, even a rung's own name in one: which one the
    line means it does not say (vllm-325 'fell back to weight-only Marlin'; 'using CUTLASS backend
    instead' of a MoE line would land on the INT8 linear registry's rung 'CUTLASS')."""
    return bool(_SPECIFIC.search(name.strip()))


def family_of(registry) -> Optional[str]:
    """The layer family of a selection placed through ``registry``: its kind and scheme
    (``linear (MXFP8 W8A8)``); None for a kind that is no GEMM / MoE family."""
    word = _FAMILY.get(registry.kind)
    if word is None:
        return None
    return f"{word} ({registry.scheme})" if registry.scheme else word


def unplaced(pending: list[tuple[Event, str, str]], selections: list, held: set[int]) -> list[Unexplained]:
    """Not-understood entries (kind ``unread``) of events whose named target no ladder placed.

    ``pending``: ``(event, kernel, how)``; ``selections``: the run's; ``held``: lines a selection
    or finding holds. A kernel a selection of the run already names (one contains the other,
    case-folded) adds no question; a message every rank prints is listed once."""
    names = [normalise(s.kernel).lower() for s in selections if s.kernel]
    out: list[Unexplained] = []
    seen: set[str] = set()
    for ev, kernel, how in pending:
        k = normalise(kernel).lower()
        if ev.line in held or ev.message in seen or any(k in n or n in k for n in names if n):
            continue
        seen.add(ev.message)
        kind = ev.kind.replace("_", " ")
        out.append(Unexplained(
            line=ev.line, rule=ev.rule, kind="unread", message=ev.message[:2000],
            why=(f"names kernel {kernel} as its choice ({how}) but rule {ev.rule} reads it as "
                 f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} event and no ladder of the run's release places it")))
    return out
