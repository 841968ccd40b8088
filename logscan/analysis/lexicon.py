"""The kernel lexicon: what a kernel or backend name says, for names no shipped ladder holds.

Data in ``patterns/lexicon.toml`` (``LexiconFile``); this module normalises a printed name
and applies the entries. It is the last resort after the ladders and the engine pack's own
``[[name_cost]]`` table, and every use is marked "classified by name" with the entry's
reasoning (``Selection.reasoning``). It also says which packages are tied to a kernel or a
backend (``OPTIONAL_PACKAGE_MISSING`` needs one).
"""
from __future__ import annotations

from typing import Optional

import regex

from .. import rxcache
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..packs.model import LexiconFile

#: ``Fp4GemmRunnerBackend.FLASHINFER_CUTLASS`` -> ``FLASHINFER_CUTLASS``: an enum class (CamelCase,
#: ending in Backend / Method / Type / Mode / Kind / Enum) followed by an UPPER_CASE member
_ENUM_MEMBER = rxcache.compile(r"^(?:[A-Za-z_]\w{0,60}\.)?[A-Z]\w{0,60}(?:Backend|Method|Type|Mode|Kind|Enum|Runner)\.(?P<m>[A-Z][A-Z0-9_]{1,60})$")
_QUOTES = "'\"`"


def normalise(name: str) -> str:
    """A printed kernel name as the lexicon and the ladders read it.

    Quotes and surrounding spaces are dropped, an enum member is reduced to its member,
    inner runs of spaces collapse to one (spaced names such as ``FlashInfer MXFP4 MOE`` are
    kept whole). Returns ``""`` for a name that is only quotes or spaces.
    """
    n = " ".join(name.strip().strip(_QUOTES).split())
    m = _ENUM_MEMBER.match(n)
    return m.group("m") if m else n


@dataclass(frozen=True)
class ByName:
    """A lexicon verdict: the cost class, the entry id and the reasoning (for the report)."""

    cost_class: str
    entry: str
    why: str

    @property
    def reasoning(self) -> str:
        return f"classified by name (lexicon entry {self.entry}): {self.why}"


_CACHE: dict[tuple, tuple] = {}


def _cached(lexicon: LexiconFile, what: str, make):
    """Compiled forms of a (frozen) lexicon, kept per object for the life of the process."""
    key = (id(lexicon), what)
    hit = _CACHE.get(key)  # type: ignore[call-overload]
    if hit is None or hit[0] is not lexicon:
        hit = _CACHE[key] = (lexicon, make())  # type: ignore[index]
    return hit[1]


def _compiled(lexicon: LexiconFile):
    return _cached(lexicon, "names", lambda: [(e, rxcache.compile(e.pattern), rxcache.compile(e.scheme) if e.scheme else None)
                                              for e in lexicon.name])


def classify(lexicon: LexiconFile, name: str, scheme: str = "") -> Optional[ByName]:
    """The first lexicon entry whose pattern matches ``name`` (normalised) and whose scheme
    regex, when it has one, matches ``scheme`` (the run's quantization and the layer family,
    joined). None when no entry applies."""
    n = normalise(name)
    if not n:
        return None
    for entry, rx, srx in _compiled(lexicon):
        if rx.search(n) and (srx is None or srx.search(scheme or "")):
            return ByName(entry.cost_class, entry.id, entry.why)
    return None


def _packages(lexicon: LexiconFile):
    return _cached(lexicon, "packages", lambda: rxcache.compile(lexicon.packages.pattern)
                   if lexicon.packages is not None else None)


def kernel_package(lexicon: LexiconFile, package: str) -> Optional[bool]:
    """Whether ``package`` (``flashinfer``, ``flashinfer.fused_moe``, ``vllm._C``) is tied to a
    kernel or a backend. None when the lexicon has no package list (nothing to decide by)."""
    rx = _packages(lexicon)
    if rx is None:
        return None
    p = regex.split(r"[\[<>=~! ]", package.strip().strip(_QUOTES).strip(), maxsplit=1)[0].lower()
    if not p:
        return False
    return bool(rx.match(p) or rx.match(p.split(".")[0]) or rx.match(".".join(p.split(".")[:2])))
