"""Hardware floors of native low-precision compute (``patterns/hardware-floors.toml``).

A rung whose cost class is ``native`` in a registry whose role quantizes activations (FP8
W8A8, FP4 W4A4, OCP MX) computes in that format on the tensor cores, so it needs a GPU that
has them, whatever the engine's own gate checks (vLLM 0.29.0-0.32.0's CUTLASS FP8 kernel
checks only CUDA: vllm-project/vllm#55008). ``floor_terms`` gives the floor as gate terms
(``cc_min`` on CUDA, ``gfx`` on ROCm, each with ``floor`` set), which ``overlay.rung_terms``
appends for ``ladder``, ``matrix``, ``explain`` and scan's fallback judgement. Weight-only,
emulated and other cost classes, and roles that keep activations in 16 bits, get none.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional

import regex
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .. import rxcache
from ..packs.loader import _read_toml, patterns_root
from ..packs.model import GateTerm
from .gates import lowest_capability


class FloorError(ValueError):
    """``patterns/hardware-floors.toml`` is malformed."""


@functools.lru_cache(maxsize=4)
def load_floors(root: Optional[Path] = None) -> dict[str, dict]:
    """The floors by id (``FP8``, ``FP4``, ``MX``), each with compiled ``roles``. Raises
    ``FloorError`` on a malformed entry; a missing file means no floors."""
    path = (root or patterns_root()) / "hardware-floors.toml"
    if not path.is_file():
        return {}
    out: dict[str, dict] = {}
    for fid, f in _read_toml(path).get("floor", {}).items():
        try:
            roles = [rxcache.compile(r, regex.I) for r in f["roles"]]
            cc = int(f["cuda_cc"])
            gfx = [str(g) for g in f.get("rocm_gfx", [])]
            src = str(f["source"])
            misses = [{"engine": str(m["engine"]), "releases": SpecifierSet(str(m["releases"])),
                       "kernels": [str(k) for k in m["kernels"]], "says": str(m["says"])}
                      for m in f.get("gate_miss", [])]
        except (KeyError, TypeError, ValueError, regex.error, InvalidSpecifier) as exc:
            raise FloorError(f"{path}: floor {fid}: {exc}") from None
        out[fid] = {"roles": roles, "cuda_cc": cc, "rocm_gfx": gfx, "what": str(f.get("what", fid)),
                    "source": src, "gate_miss": misses, "missed_by": [m["says"] for m in misses]}
    return out


def floor_for(role: str) -> Optional[str]:
    """The floor id whose roles match a registry ``role``, or None."""
    for fid, f in load_floors().items():
        if any(rx.search(role or "") for rx in f["roles"]):
            return fid
    return None


@functools.lru_cache(maxsize=64)
def _terms(fid: str) -> tuple[GateTerm, ...]:
    f = load_floors()[fid]
    why = f"{fid} hardware floor: {f['what']}. {f['source']}"
    src = f"hardware floor {fid} (patterns/hardware-floors.toml)"
    out = [GateTerm(kind="cc_min", cc=f["cuda_cc"], only_on=["CUDA"], floor=fid, source=src, why=why)]
    if f["rocm_gfx"]:
        out.append(GateTerm(kind="gfx", values=list(f["rocm_gfx"]), only_on=["ROCM"], floor=fid, source=src, why=why))
    return tuple(out)


def floor_terms(role: str, cost: Optional[str], terms: list[GateTerm],
                platforms: Optional[set[str]] = None) -> list[GateTerm]:
    """The floor terms a rung of a registry with ``role`` and cost class ``cost`` adds to its
    ``terms``: none unless the cost is ``native`` and a floor names the role; only the terms of
    the ``platforms`` whose lists hold the rung (all when None or ``ANY``). Added even when the
    gate holds a capability term as high: a log line stating the GPU lacks the format
    (``Machine.lacks``) refuses the floor term, never an engine's own capability term."""
    if cost != "native":
        return []
    fid = floor_for(role)
    if fid is None:
        return []
    every = not platforms or "ANY" in platforms
    # the rung's own platform terms (``on CUDA``) rule out the other platform's floor term
    only = [set(t.platforms) for t in terms if t.kind == "platform" and not t.negate and not t.only_on]
    return [t for t in _terms(fid) if (every or any(p in platforms for p in t.only_on))
            and all(set(t.only_on) & o for o in only)]


def floor_note(rung: int, name: str, fid: str, machine) -> str:
    """The note for a rung the engine's recorded gate lets through on ``machine`` but the ``fid``
    floor refuses: the engine would select it and fail (with the floor's known ``missed_by``)."""
    f = load_floors()[fid]
    gpu = machine.gfx if machine.platform == "ROCM" and machine.gfx else (f"sm{machine.cc}" if machine.cc is not None else "the GPU")
    seen = f" (known: {'; '.join(f['missed_by'])})" if f["missed_by"] else ""
    return (f"rung {rung} {name}: the engine's recorded gate passes here, but {machine.gpu or gpu} ({gpu}) has no "
            f"{f['what']} ({fid} hardware floor, patterns/hardware-floors.toml): if the engine checks nothing more, "
            f"it selects {name} and fails at its first {fid} GEMM{seen}")


def _min_cc(t: GateTerm) -> Optional[int]:
    """The lowest CUDA compute capability a term lets through, or None (no bound)."""
    if t.negate or t.floor or (t.only_on and "CUDA" not in t.only_on):
        return None
    if t.kind == "any_of" and t.options:
        lows = [max((c for c in map(_min_cc, opt) if c is not None), default=None) for opt in t.options]
        return None if any(c is None for c in lows) else min(lows)
    return lowest_capability(t)


def _implied(f: GateTerm, terms: list[GateTerm]) -> bool:
    """Whether the rung's own terms already hold floor term ``f`` (a capability term as high, a
    ROCm arch list inside the floor's)."""
    if f.kind == "cc_min":
        return any((c := _min_cc(t)) is not None and c >= (f.cc or 0) for t in terms)
    return any(t.kind == "gfx" and not t.negate and not t.floor and t.values
               and all(any(v.startswith(p) for p in f.values) for v in t.values) for t in terms)


def shown(terms: list[GateTerm], platform: Optional[str] = None) -> list[GateTerm]:
    """``terms`` as reports show them: a floor term the rung's own terms already imply, or one
    for another platform than ``platform`` (when known), is left out (it still counts in every
    verdict: a log line stating the GPU lacks the format refuses only floor terms)."""
    own = [t for t in terms if not t.floor]
    if len(own) == len(terms):
        return terms
    return [t for t in terms if not t.floor or not (
        _implied(t, own) or (platform and t.only_on and platform not in t.only_on))]


def lacks_floor(fid: str, machine) -> bool:
    """Whether ``machine`` is known to lack floor ``fid``: a CUDA GPU below its ``cuda_cc``, or a
    ROCm GPU whose known arch starts with none of its ``rocm_gfx`` prefixes. False when unknown."""
    f = load_floors()[fid]
    if machine.platform == "CUDA" and machine.cc is not None:
        return machine.cc < f["cuda_cc"]
    if machine.platform == "ROCM" and getattr(machine, "gfx", None):
        return not any(machine.gfx.startswith(p) for p in f["rocm_gfx"])
    return False


def gate_misses(fid: str, engine: str, kernel_class: str, releases: list[str]) -> list[dict]:
    """The floor's ``gate_miss`` entries of ``engine`` naming ``kernel_class`` whose release range
    holds one of ``releases`` (the releases the run may be)."""
    return [m for m in load_floors()[fid]["gate_miss"]
            if m["engine"] == engine and kernel_class in m["kernels"]
            and any(m["releases"].contains(r, prereleases=True) for r in releases)]


def _may_be(info, releases: list[str]) -> list[str]:
    """The releases a run may be: its logged or given one, else the shipped ``releases`` inside its
    inferred range, else all of them."""
    from .ladders import parse_version

    if info.version and info.version_source in ("logged", "given", "reported"):
        return [info.version]
    rng = info.release_range if info.version_source == "inferred" else None
    if rng and len(rng) == 2 and all(parse_version(x) for x in rng):
        lo, hi = parse_version(rng[0]), parse_version(rng[1])
        return [r for r in releases if (v := parse_version(r)) is not None and lo <= v <= hi]
    return list(releases)


def below_floor(run, pack, info, sel, machine, origin, add_finding) -> None:
    """A logged native kernel of a floored role (``floor_for``) on a GPU the run's known facts say
    lacks that floor (``lacks_floor``: ``--gpu``, or a GPU the log names), e.g. vllm-134's
    'Selected CutlassFP8ScaledMMLinearKernel' with ``--gpu A100`` (sm80, FP8 floor sm89).

    BELOW_HARDWARE_FLOOR when a ``gate_miss`` of the floor names the kernel for a release the run
    may be: there the engine selects it on that GPU and fails at its first GEMM, unless ``--gpu``
    is not this log's GPU (vLLM 0.29.0-0.32.0, vllm-project/vllm#55008). Else, for ``--gpu``,
    GPU_CONTRADICTS_LOG: no release the run may be selects it on that GPU, so the log came from
    another machine. A GPU the log names with no gate miss to explain it claims nothing (a device
    line may be another device's). Weight-only, emulated and other cost classes have no floor."""
    from .run_checks import where

    pos = sel.ladder
    fid = floor_for(pos.role) if sel.cost_class.value == "native" else None
    if fid is None or origin not in ("given", "log") or not lacks_floor(fid, machine):
        return
    f = load_floors()[fid]
    misses = gate_misses(fid, pack.engine, pos.kernel_class, _may_be(info, list(pack.ladders)))
    if not misses and origin != "given":
        return
    ev = next((e for e in run.events if e.line == sel.line), run.events[0])
    gpu, at = machine.gpu or where(machine), where(machine)
    said = "from --gpu" if origin == "given" else "named by the log"
    need = f"sm{f['cuda_cc']}+" if machine.platform == "CUDA" else "/".join(f["rocm_gfx"]) + "*"
    first = (f"the log shows {sel.kernel} (rung {pos.rung}/{pos.rungs} of {pos.registry}, {pos.ladder_version}), "
             f"native on a {pos.role} registry: it computes on {f['what']}, {need} ({fid} hardware floor, "
             f"patterns/hardware-floors.toml); {gpu} ({at}, {said}) has none")
    if not misses:
        add_finding("GPU_CONTRADICTS_LOG", ev, sel.rule, kernel=sel.kernel, inferred=True, basis="ladder",
                    family=sel.family, reasons=[
                        first, "no engine gate is known to select it below the floor in a release this run may be "
                        f"({info.version or 'inferred'}): the log is the evidence, so --gpu is probably not the GPU "
                        "this log came from, and what was inferred from --gpu rests on a machine the log contradicts"],
                    title=f"--gpu {gpu} ({at}) cannot run {sel.kernel}, which the log shows: below its {fid} "
                          "hardware floor")
        return
    known = "; ".join(m["says"] for m in misses)
    sure = info.version_source in ("logged", "given", "reported")
    add_finding("BELOW_HARDWARE_FLOOR", ev, sel.rule, kernel=sel.kernel, inferred=True, basis="ladder",
                family=sel.family, reasons=[
                    first, f"the engine's gate is known to let it through below the floor: {known}"
                    + ("" if sure else f" (this run's release is {info.version_source}"
                       + (f", {' .. '.join(info.release_range)}" if info.release_range else "") + ")"),
                    ("so this start selected a kernel its GPU cannot run and fails at its first "
                     f"{fid} GEMM" if sure else f"in such a release this start selected a kernel its GPU cannot run "
                     f"and fails at its first {fid} GEMM; in any other, the engine would not have selected it there")
                    + ("; or --gpu is not the GPU this log came from" if origin == "given" else "")],
                title=f"{sel.kernel} ({sel.family}) is below its {fid} hardware floor on {gpu} ({at}): "
                      f"expect a failure at its first {fid} GEMM")
