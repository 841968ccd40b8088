"""Pydantic models of the pattern-pack files under ``patterns/`` (rules, prefixes, ladders, codes).

A pack is a folder ``patterns/<engine>/`` holding ``pack.toml`` (line-prefix formats, run
markers), ``rules/*.toml`` (the recognisers) and ``ladders/<release>.toml`` (ordered kernel
registries). ``patterns/findings.toml`` names every finding code. Unknown keys are errors
(``extra="forbid"``) so that a typo in a pack never silently disables a rule.

The models live in ``model_base`` (the strict base), ``model_rules`` (rules, finding codes,
lexicon), ``model_pack`` (``pack.toml``), ``model_ladders`` (ladders, schemes) and
``model_infer`` (``infer.toml``, the matrix); every name stays importable from here.
"""

from .model_base import _Strict
from .model_lexicon import KernelPackages, LexiconFailing, LexiconFile, LexiconKernel, LexiconName, LexiconTarget
from .model_rules import CodeInfo, Continuation, FindingsFile, GpuCeiling, Rule, RuleFile, RuleKind
from .model_pack import (
    ArchCheck, CommonWrapper, FasterMethod, NameCost, NoiseLine, OpaqueLine, PackFile, PackMeta, PlatformHint,
    PrefixFormat, ProcessTag, Uncovered, WalkInfer, WrapperFile,
)
from .model_ladders import (
    DispatchFile, DispatchRegistry, GateKind, GateTerm, LadderFile, LadderKernel, Registry, Scheme, SchemeEngine, SchemeFile,
)
from .model_infer import Chain, ChainStep, InferFile, InferSpec, MatrixFile, Outcome, Predicate, Tell

__all__ = [
    "RuleKind", "Continuation", "GpuCeiling", "Rule", "RuleFile", "PrefixFormat", "ProcessTag", "PackMeta", "NameCost",
    "FasterMethod", "ArchCheck", "CommonWrapper", "WrapperFile",
    "WalkInfer", "PlatformHint", "OpaqueLine", "NoiseLine", "Uncovered",
    "PackFile", "DispatchFile", "DispatchRegistry", "GateKind", "GateTerm", "LadderKernel", "Registry", "LadderFile", "CodeInfo",
    "FindingsFile", "SchemeEngine", "Scheme", "SchemeFile", "Predicate", "ChainStep", "Chain", "Outcome",
    "InferSpec", "Tell", "InferFile", "MatrixFile", "LexiconName", "KernelPackages", "LexiconFile",
    "LexiconKernel", "LexiconFailing", "LexiconTarget",
]
