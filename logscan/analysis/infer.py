"""Infer what an engine does not log: kernels chosen from server arguments plus the GPU.

SGLang resolves several backends after it dumps its arguments and never logs the result
(``fp4_gemm_runner_backend`` stays ``auto`` in the dump; the NVFP4 MoE method turns
``auto`` into Marlin on SM80-SM90 silently). The facts needed to replay that choice are
data in ``patterns/<engine>/infer.toml``: arch predicates (capability window AND CUDA
floor), if/elif auto ladders over them, and the layer families to infer. This module only
evaluates that data; every selection it makes is ``observed=False`` with its reasoning.

The GPU comes from the log when it names one (a capability error, a FlashInfer autotune
path, a ``device_name=`` in a tuning-config path, a pasted ``check_env`` block), from a
*tell* (a run fact only some GPUs produce), or from ``--gpu``; the CUDA version from
``--cuda`` or the log's ``PyTorch: ...+cuNNN``, else the pack's ``assumed_cuda`` (said in
the reasoning).
"""
from __future__ import annotations

from typing import Any, Optional

import regex
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..models import CostClass, RunConfig, Selection, ServerArgs
from ..packs.loader import Pack
from ..packs.model import Chain, InferFile, Predicate
from ..sources.safe import bounded_int
from . import gpus
from .server_args import parse_repr

#: ServerArgs fields read as text / as integers (SGLang ``server_args.py`` names).
_TEXT_FIELDS = ("model_path", "quantization", "dtype", "kv_cache_dtype", "moe_runner_backend",
                "moe_a2a_backend", "fp4_gemm_runner_backend", "fp8_gemm_runner_backend",
                "attention_backend", "prefill_attention_backend", "decode_attention_backend", "device")
_INT_FIELDS = ("tp_size", "dp_size", "ep_size", "pp_size")
#: 0.4.x boolean MoE switches (no backend enum yet).
_FLAG_FIELDS = ("enable_ep_moe", "enable_deepep_moe", "enable_flashinfer_cutlass_moe",
                "enable_flashinfer_trtllm_moe", "enable_triton_kernel_moe", "enable_flashinfer_moe",
                "enable_dp_attention")
_CC_TEXT = lazyre.compile(r"(?i)^\s*(?:sm|cc|compute[ _]?capability)?[ _]?(\d{1,2})(?:\.(\d))?(\d)?[af]?\s*$")


def _text(v: Any) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, str):
        return v
    return str(v)


def server_args_config(text: str, line: int) -> ServerArgs:
    """Parse the text after ``server_args=`` into ``ServerArgs`` (never evaluates it).

    Both shapes are read: ``ServerArgs(k=v, ...)`` (SGLang <= 0.5.16) and the resolved
    dict ``{'k': v, ...}`` (0.5.23). Fields that are not typed are kept in ``other`` as
    printed; a cut dump sets ``truncated``.
    """
    parsed = parse_repr(text)
    sa = ServerArgs(line=line, shape=parsed.shape, truncated=parsed.truncated)
    for key, value in parsed.values.items():
        if key in _TEXT_FIELDS:
            setattr(sa, key, _text(value))
        elif key in _INT_FIELDS and isinstance(value, int) and not isinstance(value, bool):
            setattr(sa, key, value)
        elif key in _FLAG_FIELDS:
            if value is True:
                sa.flags.append(key)
        else:
            sa.other[key] = parsed.raw.get(key, _text(value) or "")
    return sa


def apply_server_args(config: RunConfig, run: Any, sa: ServerArgs) -> None:
    """Copy the run facts the dump states (model, quantization, dtypes, TP) into ``config``.

    A fact already set by an earlier line is kept. ``run.platform`` takes ``device``.
    """
    config.model = config.model or sa.model_path
    if sa.quantization and sa.quantization != "None":
        config.quantization = sa.quantization  # the dump is the engine's own word: it beats a path or a hint
    if sa.dtype:
        config.dtype = config.dtype or sa.dtype
    if sa.kv_cache_dtype and not config.kv_cache_dtype:
        config.kv_cache_dtype = sa.kv_cache_dtype
        if hasattr(run, "kv_requested_line"):
            run.kv_requested_line = sa.line
    if sa.tp_size:
        config.tensor_parallel_size = config.tensor_parallel_size or sa.tp_size
    for short, n in (("pp", sa.pp_size), ("dp", sa.dp_size), ("ep", sa.ep_size)):  # runstate.PARALLEL_FACTS
        if n and n > 1:
            config.extra.setdefault(short, str(n))
    if sa.device and sa.device not in ("auto", "None") and not run.platform:
        run.platform = sa.device.upper()
        if hasattr(run, "platform_line"):
            run.platform_line = sa.line


@dataclass
class Gpu:
    """The compute capabilities the GPU may have (``90`` = sm90; one when known exactly) and from where."""

    ccs: tuple[int, ...]
    source: str

    @property
    def label(self) -> str:
        return "/".join(f"sm{c}" for c in self.ccs)


def parse_capability(text: str) -> Optional[int]:
    """``sm90`` / ``sm_120a`` / ``sm_100f`` / ``9.0`` / ``90`` / ``cc100`` -> 90 / 120 / 100 / 90 / 90 / 100 (the
    arch-specific ``a`` and family ``f`` suffixes of nvcc's -arch); None otherwise."""
    m = _CC_TEXT.match(text or "")
    if not m:
        return None
    major, minor, tail = m.group(1), m.group(2), m.group(3)
    if minor is not None:
        return int(major) * 10 + int(minor)
    digits = major + (tail or "")
    n = int(digits)
    if len(digits) == 1:
        return n * 10
    return n if n >= 20 else n * 10


def resolve_gpu(config: RunConfig, hint: Optional[str], data: Optional[InferFile] = None) -> Optional[Gpu]:
    """The GPU's capability: from the log's facts first, then a tell, then the ``--gpu`` hint.

    Looks at ``config.compute_capability`` (a capability error, an autotune path), then
    ``config.gpu`` (a product name such as a tuning path's ``device_name=NVIDIA_H100...``,
    resolved with ``patterns/gpus.toml``), then the pack's ``tell`` table (run facts that
    only some GPUs produce, e.g. SGLang defaulting attention to fa3 only on Hopper), then
    ``hint``. A tell may leave several capabilities possible (a window).
    """
    if config.compute_capability:
        cc = parse_capability(config.compute_capability)
        if cc:
            return Gpu((cc,), f"the log (compute capability {config.compute_capability})")
    if config.gpu:
        g = gpus.resolve_logged_gpu(config.gpu)
        if g is not None and g.cc:
            return Gpu((g.cc,), f"the log ({config.gpu}: {g.name})")
    for t in (data.tell if data is not None else []):
        value = config.extra.get(t.fact)
        if value and rxcache.search(t.value, value):
            return Gpu(tuple(t.ccs), f"the log ({t.fact}={value!r}: {t.why})")
    if hint:
        g = gpus.resolve_logged_gpu(hint)
        if g is not None and g.cc:
            return Gpu((g.cc,), f"--gpu ({hint}: {g.name})")
    return None


def _holds(spec: str, version: Optional[Version]) -> bool:
    if not spec:
        return True
    if version is None:
        return True
    return version in SpecifierSet(spec)


def _cuda_tuple(text: str) -> tuple[int, ...]:
    return tuple(bounded_int(p) or 0 for p in regex.findall(r"\d+", text)[:2])


class _Evaluator:
    """Evaluates one pack's predicates and chains for one GPU / CUDA / engine release."""

    def __init__(self, data: InferFile, cc: int, cuda: Optional[str], version: Optional[Version]):
        self.data, self.cc, self.cuda, self.version = data, cc, cuda, version
        self.notes: list[str] = []

    def predicate(self, name: str) -> bool:
        neg = name.startswith("!")
        name = name.lstrip("!")
        defs = [p for p in self.data.predicate if p.name == name and _holds(p.versions, self.version)]
        if not defs:
            return neg  # unknown predicate: false
        value = self._eval(defs[0])
        return not value if neg else value

    def _eval(self, p: Predicate) -> bool:
        cc = self.cc
        ok = True
        if p.majors:
            ok = ok and cc // 10 in p.majors
        if p.min_cc is not None:
            ok = ok and cc >= p.min_cc
        if p.below_cc is not None:
            ok = ok and cc < p.below_cc
        if p.exact_cc:
            ok = ok and cc in p.exact_cc
        if ok and p.min_cuda:
            cuda = self.cuda or self.data.assumed_cuda
            if not self.cuda:
                note = f"CUDA version not known: assumed {self.data.assumed_cuda} (give --cuda)"
                if note not in self.notes:
                    self.notes.append(note)
            ok = _cuda_tuple(cuda) >= _cuda_tuple(p.min_cuda)
        return ok

    def chain(self, arg: str, quantization: str) -> Optional[tuple[str, str, Chain]]:
        """Resolve ``arg`` through its auto ladder: (value, the step's condition text, chain)."""
        for ch in self.data.chain:
            if ch.arg != arg or not _holds(ch.versions, self.version):
                continue
            if ch.quantization and not rxcache.search(ch.quantization, quantization or ""):
                continue
            for step in ch.steps:
                if all(self.predicate(w) for w in step.when):
                    cond = " and ".join(step.when) or "no earlier branch held"
                    return step.then, cond, ch
        return None


def infer_selections(pack: Pack, config: RunConfig, version: Optional[str],
                     observed: list[Selection], event_kinds: set[str], gpu_hint: Optional[str],
                     cuda: Optional[str]) -> list[tuple[Selection, Optional[str]]]:
    """Selections the pack's ``infer.toml`` implies for a run, each ``observed=False``.

    Returns ``(selection, registry_hint)`` pairs; the hint (a regex over ladder roles)
    lets the caller place the kernel on a ladder.

    ``version``: the engine release (logged or inferred; None = newest rules). Families
    an observed selection already covers are skipped. Returns [] when the pack has no
    inference data, the run has no quantization, or the GPU is unknown.
    """
    data = pack.infer
    quant = config.quantization or ""
    if data is None or not quant:
        return []
    gpu = resolve_gpu(config, gpu_hint, data)
    if gpu is None:
        return []
    cuda = cuda or config.extra.get("torch_cuda")  # --cuda, else what the log says torch was built with
    try:
        ver = Version(version) if version else None
    except Exception:  # noqa: BLE001 - an unparsable version means "newest rules"
        ver = None
    sa = config.server_args
    out: list[tuple[Selection, Optional[str]]] = []
    for spec in data.infer:
        if not _holds(spec.versions, ver) or not rxcache.search(spec.quantization, quant):
            continue
        if spec.needs_event_kind and not (set(spec.needs_event_kind) & event_kinds) \
                and not _args_prove(spec.or_args, sa):
            continue
        if spec.skip_if_family and any(rxcache.search(spec.skip_if_family, s.family) for s in observed):
            continue
        asked = getattr(sa, spec.arg, None) if sa is not None else None
        asked = asked if isinstance(asked, str) else None
        asked_line = sa.line if asked and sa is not None else None
        if asked is None and isinstance(config.extra.get(spec.arg), str):
            # no dump states it: a pasted launch command's flag asks for it (pack.cli names)
            asked = config.extra[spec.arg].strip("'\"")
        # Evaluate for every capability the GPU may have; infer only when all agree.
        results = set()
        picked = None
        for cc in gpu.ccs:
            got = _decide(spec, data, cc, cuda, ver, asked, quant, asked_line)
            results.add(None if got is None else (got[0].kernel, got[0].cost_class))
            picked = picked or got
        if len(results) != 1 or picked is None or None in results:
            continue
        outcome, steps, notes = picked
        reasoning = (f"inferred, not logged: quantization={quant!r}; GPU {gpu.label} from {gpu.source}; "
                     + "; ".join(steps)
                     + (f"; {outcome.note}" if outcome.note else "")
                     + "".join(f"; {n}" for n in notes)
                     + f"; rule data: {spec.source}")
        line = sa.line if sa is not None else 0
        out.append((Selection(
            family=spec.family, kernel=outcome.kernel, cost_class=CostClass(outcome.cost_class),
            observed=False, reasoning=reasoning, line=line,
            evidence=(f"launch command {spec.arg}={asked}" if asked and asked_line is None
                      else f"server_args {spec.arg}={asked or 'auto'}") + f"; GPU {gpu.label}",
            rule=f"{pack.engine}.infer.{spec.id}",
        ), spec.registry))
    return out


def _args_prove(or_args: dict[str, str], sa: Optional[ServerArgs]) -> bool:
    """True when one server arg named in ``or_args`` prints a value its regex accepts."""
    if sa is None:
        return False
    for arg, rx in or_args.items():
        value = getattr(sa, arg, None) if arg in ServerArgs.model_fields else sa.other.get(arg)
        if value is not None and rxcache.search(rx, str(value)):
            return True
    return False


def _decide(spec, data: InferFile, cc: int, cuda: Optional[str], ver: Optional[Version],
            asked: Optional[str], quant: str, asked_line: Optional[int]):
    """(outcome, reasoning steps, notes) of one inference spec on one capability; None when nothing follows.

    ``asked``: the value the log asks for ``spec.arg``: a server_args dump's (``asked_line``
    its line), else a launch command's (``asked_line`` None)."""
    ev = _Evaluator(data, cc, cuda, ver)
    steps: list[str] = []
    auto_values = {v for ch in data.chain if ch.arg == spec.arg for v in ch.auto} | {"None"}
    on_cli = f"{spec.arg}={asked!r} asked on the launch command"
    if asked and asked not in auto_values:
        value = asked
        steps.append(f"server_args {spec.arg}={asked!r} (line {asked_line})" if asked_line is not None else on_cli)
    else:
        resolved = ev.chain(spec.arg, quant)
        if resolved is None:
            return None
        value, cond, ch = resolved
        said = (f"{spec.arg}={asked!r} in server_args (line {asked_line})" if asked and asked_line is not None
                else on_cli if asked else f"{spec.arg} not in the log (default auto)")
        steps.append(f"{said}; the auto ladder ({ch.source}) picks {value!r} because {cond}")
    outcome = spec.outcomes.get(value)
    if outcome is None:
        return None
    if not all(ev.predicate(r) for r in outcome.requires):
        return None  # SGLang raises here; a log of that start shows the error line instead
    return outcome, steps, ev.notes
