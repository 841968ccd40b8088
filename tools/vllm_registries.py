"""vLLM's kernel registries read from its source with ``ast`` (``tools/derive_ladders.py``'s reader).

vLLM is never imported, so no GPU, CUDA or torch is needed. What it reads (vLLM 0.6.6 -> 0.33.0
layouts):

- linear registries: module-level ``_POSSIBLE_*KERNELS`` dicts (``{PlatformEnum.CUDA: [...]}``)
  and lists (platform ``ANY``) in ``vllm/model_executor/kernels/linear/__init__.py`` (0.18+)
  ``vllm/model_executor/layers/quantization/kernels/{mixed_precision,scaled_mm}/__init__.py``
  (older) and ``.../quantization/kernels/__init__.py`` (0.6.6; a name defined in both files gets the suffix ``@mixed_precision`` / ``@scaled_mm``);
- MoE priority lists: in ``vllm/model_executor/layers/fused_moe/oracle/*.py``, every list or
  tuple of backend-enum members (``Fp8MoeBackend.TRITON``) assigned to a name or returned,
  named ``moe:<module>:<function>.<variable|return>`` (``<module>`` at module level), and keyed
  by the platform of the enclosing ``if current_platform.is_<platform>()`` (else ``ANY``).
  Returned lists count only in ``*priorit*`` functions, module-level lists only when their
  name says supported / available / priority (the others are membership groups), and never
  a list named as an exclusion (``UNSUPPORTED_BACKENDS``).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

LINEAR_FILES = {
    "vllm/model_executor/kernels/linear/__init__.py": "",
    "vllm/model_executor/layers/quantization/kernels/__init__.py": "",  # 0.6.6 -> 0.7.0
    "vllm/model_executor/layers/quantization/kernels/mixed_precision/__init__.py": "mixed_precision",
    "vllm/model_executor/layers/quantization/kernels/scaled_mm/__init__.py": "scaled_mm",
}
MOE_ORACLE_DIR = "vllm/model_executor/layers/fused_moe/oracle"
MODULE_LIST = re.compile(r"(?i)supported|available|priorit")
#: exclusion groups (0.14.1 make_nvfp4_moe_kernel.UNSUPPORTED_BACKENDS) are not ladders
NOT_A_LADDER = re.compile(r"(?i)unsupported|exclu|skip|disabled|incompatible|blocked")
PLATFORM_TESTS = {"is_cuda": "CUDA", "is_cuda_alike": "CUDA", "is_rocm": "ROCM", "is_xpu": "XPU",
                  "is_cpu": "CPU", "is_tpu": "TPU"}
#: how a conditional platform key names its platform ("when ROCm and cfg.routing_method == ...")
PLATFORM_TITLE = {"CUDA": "CUDA", "ROCM": "ROCm", "XPU": "XPU", "CPU": "CPU", "TPU": "TPU"}


class _CfgName(ast.NodeTransformer):
    """Spell the selection function's config parameter ``cfg``, as the ladder gates do."""

    def __init__(self, names: set[str]):
        self.names = names

    def visit_Name(self, node):  # noqa: N802 - ast API
        return ast.copy_location(ast.Name("cfg", node.ctx), node) if node.id in self.names else node


class DeriveError(Exception):
    """The given path holds no vLLM package tree."""


@dataclass
class Derived:
    """A registry read from source: kind, file, and its ordered rungs per platform."""

    name: str
    kind: str  # "linear" or "moe"
    file: str
    platforms: dict[str, list[str]] = field(default_factory=dict)


def find_vllm_root(path: Path) -> Path:
    """The folder that holds ``vllm/`` (a site-packages folder, an unzipped wheel, or ``vllm`` itself).

    Raises ``DeriveError`` when none of them has ``vllm/__init__.py``.
    """
    for cand in (path, path.parent):
        if (cand / "vllm" / "__init__.py").is_file():
            return cand
    raise DeriveError(f"{path}: no vllm/__init__.py here (give site-packages or an unzipped wheel)")


def installed_version(root: Path) -> Optional[str]:
    """``__version__`` from ``vllm/_version.py`` (setuptools-scm), read with ``ast``; None if absent."""
    f = root / "vllm" / "_version.py"
    if not f.is_file():
        return None
    for node in ast.walk(ast.parse(f.read_text(encoding="utf-8", errors="replace"))):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            names |= {e.id for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)}
            if names & {"__version__", "version"}:
                return node.value.value
    return None


def _names(node: ast.AST) -> Optional[list[str]]:
    """``[A, B]`` -> ``["A", "B"]`` for a list/tuple of plain names or ``Enum.MEMBER`` attributes."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    out = []
    for e in node.elts:
        if isinstance(e, ast.Name):
            out.append(e.id)
        elif isinstance(e, ast.Attribute):
            out.append(e.attr)
        else:
            return None
    return out


def _enum_members(node: ast.AST) -> Optional[list[str]]:
    """Members of a list/tuple made only of ``<Something>Backend.MEMBER`` attributes."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    out = []
    for e in node.elts:
        if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id.endswith("Backend")):
            return None
        out.append(e.attr)
    return out


def _platform_key(node: ast.AST) -> Optional[str]:
    """``PlatformEnum.CUDA`` -> ``CUDA``."""
    if isinstance(node, ast.Attribute):
        return node.attr.upper()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.upper()
    return None


def read_linear(root: Path) -> list[Derived]:
    """Module-level ``_POSSIBLE_*KERNELS`` dicts and lists of the linear registry files, in source order."""
    found: list[tuple[str, str, Derived]] = []
    for rel, suffix in LINEAR_FILES.items():
        f = root / rel
        if not f.is_file():
            continue
        tree = ast.parse(f.read_text(encoding="utf-8", errors="replace"), filename=str(f))
        for node in tree.body:
            target, value = None, None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if not target or not (target.startswith("_POSSIBLE_") and target.endswith("KERNELS")):
                continue
            d = Derived(target, "linear", rel)
            if isinstance(value, ast.Dict):
                for k, v in zip(value.keys, value.values):
                    plat, rungs = _platform_key(k) if k is not None else None, _names(v)
                    if plat and rungs is not None:
                        d.platforms[plat] = rungs
            else:
                rungs = _names(value)
                if rungs is not None:
                    d.platforms["ANY"] = rungs
            if d.platforms:
                found.append((target, suffix, d))
    counts: dict[str, int] = {}
    for target, _, _ in found:
        counts[target] = counts.get(target, 0) + 1
    out = []
    for target, suffix, d in found:
        if counts[target] > 1 and suffix:
            d.name = f"{target}@{suffix}"
        out.append(d)
    return out


class _MoeVisitor(ast.NodeVisitor):
    """Collects backend-enum lists per function, keyed by the enclosing platform test."""

    def __init__(self, module: str, rel: str):
        self.module, self.rel = module, rel
        self.func: list[str] = []
        self.cfg_args: list[set[str]] = []  #: per function: parameters annotated ``...Config``
        self.plat: list[str] = []
        self.found: dict[str, Derived] = {}

    def _add(self, var: str, rungs: list[str]) -> None:
        func = self.func[0] if self.func else "<module>"  # nested helpers fold into their outer function
        name = f"moe:{self.module}:{func}.{var}"
        d = self.found.setdefault(name, Derived(name, "moe", self.rel))
        d.platforms.setdefault(self.plat[-1] if self.plat else "ANY", rungs)

    def visit_FunctionDef(self, node):  # noqa: N802 - ast API
        self.func.append(node.name)
        self.cfg_args.append({a.arg for a in node.args.args + node.args.kwonlyargs
                              if a.annotation is not None and ast.unparse(a.annotation).endswith("Config")})
        self.generic_visit(node)
        self.cfg_args.pop()
        self.func.pop()

    def _platform_of(self, test: ast.AST) -> Optional[str]:
        """``current_platform.is_rocm()`` -> ``ROCM``; ``is_rocm() and <more>`` -> ``when ROCm and <more>``.

        Only a platform test that must hold (the test itself, or a conjunct of a top-level
        ``and``) keys a list; ``is_rocm() or ...`` and a negated test give None.
        """
        def plat_call(n: ast.AST) -> Optional[str]:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in PLATFORM_TESTS:
                return PLATFORM_TESTS[n.func.attr]
            return None

        if (p := plat_call(test)) is not None:
            return p
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            plats = [plat_call(v) for v in test.values]
            hits = [p for p in plats if p]
            if len(hits) == 1:
                rest = [v for v, p in zip(test.values, plats) if not p]
                names = set().union(*self.cfg_args) if self.cfg_args else set()
                text = " and ".join(ast.unparse(_CfgName(names).visit(ast.parse(ast.unparse(v), mode="eval")).body)
                                    for v in rest)
                return f"when {PLATFORM_TITLE.get(hits[0], hits[0])} and {text}"
        return None

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node):  # noqa: N802
        plat = self._platform_of(node.test)
        if plat:
            self.plat.append(plat)
            for n in node.body:
                self.visit(n)
            self.plat.pop()
            for n in node.orelse:
                self.visit(n)
        else:
            self.generic_visit(node)

    def _assign(self, targets, value):
        rungs = _enum_members(value) if value is not None else None
        if rungs is None and isinstance(value, ast.Call) and value.args:  # list((A.X, A.Y))
            rungs = _enum_members(value.args[0])
        if rungs is None:
            return
        for t in targets:
            # module-level constants are mostly membership groups (B12X_BACKENDS); only the
            # supported / available / priority lists there are ladders
            if (isinstance(t, ast.Name) and not NOT_A_LADDER.search(t.id)
                    and (self.func or MODULE_LIST.search(t.id))):
                self._add(t.id, rungs)

    def visit_Assign(self, node):  # noqa: N802
        self._assign(node.targets, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):  # noqa: N802
        self._assign([node.target], node.value)
        self.generic_visit(node)

    def visit_Return(self, node):  # noqa: N802
        rungs = _enum_members(node.value) if node.value is not None else None
        if rungs is not None and self.func and "priorit" in self.func[0]:
            self._add("return", rungs)
        self.generic_visit(node)


def read_moe(root: Path) -> list[Derived]:
    """Backend-enum priority lists of the fused-MoE oracles (0.18.1+), in file and source order."""
    folder = root / MOE_ORACLE_DIR
    out: list[Derived] = []
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("*.py")):
        if f.name in ("__init__.py", "base.py"):
            continue
        v = _MoeVisitor(f.stem, str(f.relative_to(root)))
        v.visit(ast.parse(f.read_text(encoding="utf-8", errors="replace"), filename=str(f)))
        out += list(v.found.values())
    return out


def derive(root: Path) -> list[Derived]:
    """Every linear and MoE registry of the vLLM tree under ``root`` (see ``find_vllm_root``)."""
    return read_linear(root) + read_moe(root)
