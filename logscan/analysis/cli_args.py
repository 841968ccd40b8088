"""A pasted launch command's arguments, read the way the engine's argument parser reads them.

A report reads the command a reporter pasted before the log (``vllm serve <model> --flag v``,
the arguments after a ``docker run ... vllm/vllm-openai:<tag>`` image) for what the run was
asked: model, quantization, dtype, parallel sizes. Which flags take a value is the engine's
parser's business, so it is pack data (``[pack.cli]``, ``packs.model_pack.CliSpec``): after a
boolean flag (``--enforce-eager``) the next word is the next argument, so in ``vllm serve
--enforce-eager Qwen/Qwen3-8B`` the model is the positional ``Qwen/Qwen3-8B``, not the flag's
value.

Words are split as a POSIX shell does (``shlex``: quotes, ``\\`` line continuations); a shell
operator (``|``, ``>``, ``&&``, ``;``) or a comment ends the command. Text a shell could not
split (an unbalanced quote in a cut paste) is split on whitespace instead: never an error.
"""
from __future__ import annotations

import shlex
from typing import Iterator, Optional

from .. import lazyre
from ..packs.model_pack import CliSpec

#: a shell line continuation (`` \\`` before a space or the end) left inside joined lines
_CONTINUATION = lazyre.compile(r"(?:^|(?<=\s))\\(?=\s|$)")
_OPERATOR = frozenset("();<>|&")
_EMPTY = CliSpec()


def words(text: str) -> list[str]:
    """The shell words of ``text`` up to its first operator or comment (``2>&1``, ``| tee``)."""
    text = _CONTINUATION.sub(" ", text)
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        out: list[str] = []
        for w in lex:
            if w and all(ch in _OPERATOR for ch in w):
                if w[0] in "<>" and out and out[-1].isdigit():
                    out.pop()  # a redirection's file descriptor ('2>&1'), no argument
                break
            out.append(w)
        return out
    except ValueError:  # an unbalanced quote (a paste cut mid-argument): plain words
        return [w.strip("'\"") for w in text.split() if w.strip("'\"")]


def arguments(text: str, spec: Optional[CliSpec] = None) -> Iterator[tuple[str, str]]:
    """``(name, value)`` pairs of a command line's arguments, in order.

    ``name`` is the argument's dest (dashes as underscores: ``--tensor-parallel-size`` ->
    ``tensor_parallel_size``; a short alias through ``spec.short``, a long one through
    ``spec.names``: SGLang's ``--model-path`` -> ``model``); a switch of ``spec.switches`` gives
    the fact and value it stands for (SGLang's deprecated ``--enable-flashinfer-cutlass-moe`` ->
    ``("moe_backend", "flashinfer_cutlass")``); a boolean flag gives
    ``"true"`` (``"false"`` for its ``no-`` spelling, or the ``true``/``false`` word after it);
    a value flag with no value after it gives ``"true"`` too. The first positional word gives
    ``(spec.positional, word)`` when the spec names one. A value that is an unexpanded shell
    variable (``$MODEL_PATH``, ``${MODEL_ID}``) names nothing and is left out (its flag or
    positional slot is still taken). ``spec`` None: no booleans, no aliases.
    """
    for key, value in _arguments(text, spec):
        if not value.startswith("$"):
            yield key, value


def _arguments(text: str, spec: Optional[CliSpec]) -> Iterator[tuple[str, str]]:
    spec = spec or _EMPTY
    booleans = set(spec.booleans)
    toks = words(text)
    n, i, positional_seen = len(toks), 0, False
    while i < n:
        w = toks[i]
        i += 1
        if w == "--":
            continue
        if w.startswith("-") and len(w) > 1 and not w[1].isdigit():
            long = w.startswith("--")
            name, eq, val = w[2 if long else 1:].partition("=")
            if not name:
                continue
            if not long:
                name = spec.short.get(name, "")
                if not name:  # a short flag the spec does not know (docker's -e, -p): skip its value
                    if not eq and i < n and not toks[i].startswith("-"):
                        i += 1
                    continue
            negated = bool(spec.negation) and name.startswith(spec.negation) and \
                name[len(spec.negation):] in booleans
            base = name[len(spec.negation):] if negated else name
            key = spec.names.get(base) or base.replace("-", "_")
            if eq:
                yield key, val
            elif base in spec.switches and not negated:  # a switch that states another fact's value
                fact, _, value = spec.switches[base].partition("=")
                yield fact, value
            elif base in booleans:
                if i < n and toks[i].lower() in spec.bool_words:
                    yield key, toks[i].lower()
                    i += 1
                else:
                    yield key, "false" if negated else "true"
            elif i < n and not toks[i].startswith("-"):
                yield key, toks[i]
                i += 1
            else:
                yield key, "true"
        elif spec.positional and not positional_seen and w not in spec.not_positional:
            positional_seen = True
            yield spec.positional, w
