"""Models of ``patterns/<engine>/ladder-history.toml`` (``logscan.packs.history`` reads them):
per registry, its orderings with the releases they hold in, and the gate terms of if/elif
registries' gate texts. Plain frozen classes (``model_base.strict``), validated on load.
"""

import functools
from dataclasses import field

from packaging.version import Version

from ..plain import after_check
from .model_base import _Strict, strict
from .model_ladders import GateTerm


@functools.lru_cache(maxsize=4096)
def _v(text: str) -> Version:
    """``Version(text)``, parsed once per text (placement compares the same releases thousands of times)."""
    return Version(text)


@strict
class Ordering(_Strict):
    """One platform's ordered list of a registry, holding in releases ``first`` .. ``last``."""

    platform: str
    first: str
    last: str
    rungs: list[str]
    #: per rung, the test expression of its branch (``ast.unparse``; if/elif registries: SGLang)
    gates: list[str] = field(default_factory=list)


@strict
class GateText(_Strict):
    """One gate source text of a registry and the terms ``tools/sglang_gate_terms.py`` read from it
    (``opaque`` where an atom is not known; ``[]`` for ``always``)."""

    gate: str
    terms: list[GateTerm] = field(default_factory=list)


@strict
class HistoryRegistry(_Strict):
    """A registry's orderings across releases (kind ``linear``, ``moe`` or ``if_chain``).

    ``handmade``: why the registry is not derived from source (it has no orderings then; its
    ladders stay the hand-made snapshots')."""

    name: str
    kind: str
    file: str = ""
    orderings: list[Ordering] = field(default_factory=list)
    handmade: str = ""
    #: the gate terms of each distinct gate text of the orderings (SGLang if/elif registries)
    terms: list[GateText] = field(default_factory=list)


@strict
class HistoryFile(_Strict):
    """``patterns/<engine>/ladder-history.toml``."""

    engine: str
    source: str = ""
    releases: list[str]
    #: the orderings list every rung of every registry in every release (TGI's hand-kept eras):
    #: a rung's releases are its orderings' (era hints), not its snapshot's neighbours' too
    exact_rungs: bool = False
    registry: list[HistoryRegistry] = field(default_factory=list)

    @after_check
    def _spans_in_releases(self) -> "HistoryFile":
        idx = {r: i for i, r in enumerate(self.releases)}
        if sorted(self.releases, key=_v) != self.releases or len(idx) != len(self.releases):
            raise ValueError("releases must be unique and oldest first")
        for reg in self.registry:
            for o in reg.orderings:
                if o.first not in idx or o.last not in idx or idx[o.first] > idx[o.last]:
                    raise ValueError(f"{reg.name} [{o.platform}]: {o.first}..{o.last} is not a range of releases")
        return self
