"""An engine's library embedded by other programs: which identity lines are only the library's.

llama.cpp's numerical library, ggml, is vendored by other programs too (whisper.cpp,
stable-diffusion.cpp and their bindings: pywhispercpp, nodejs-whisper, stable-diffusion-cpp-python).
Their logs carry ggml's own lines ('ggml_cuda_init: found 1 CUDA devices:', a '.../ggml-cuda.cu:101:
CUDA error' path), which name llama.cpp in a llama.cpp log and no engine in theirs (docs/corpus.md,
negative10-2: four such logs were named llama.cpp). The pack says which part of an identity rule's
text is the library's (``Rule.library``, a regex) and which lines are another program's built on it
(an identity rule with ``disowns = true``); ``Analyzer._identify`` applies them per source.
"""
from __future__ import annotations

import regex

from .. import rxcache
from ..packs.loader import CompiledRule

_RX: dict[str, "regex.Pattern"] = {}


def library_only(cr: CompiledRule, message: str) -> bool:
    """Whether identity rule ``cr`` matches ``message`` only through its library's text: with every
    span the rule's ``library`` regex matches blanked out, the rule matches no more
    ('ggml_cuda_init: found 1 CUDA devices:' is ggml's; 'llama_model_loader: loaded meta data' is
    llama.cpp's own, and so is a line holding both)."""
    lib = cr.rule.library
    if not lib:
        return False
    rx = _RX.get(lib)
    if rx is None:
        rx = _RX[lib] = rxcache.compile(lib)
    rest = rx.sub(lambda m: " " * len(m.group(0)), message)
    return rest != message and cr.regex.search(rest) is None
