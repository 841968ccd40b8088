"""Resolve a GPU description (``H100``, ``sm90``, ``9.0``, ``NVIDIA H100 80GB HBM3``) to a compute capability.

The name table is data (``patterns/gpus.toml``): aliases are matched as whole words, the
longest alias first, so ``A100`` wins over ``A10`` and ``H200`` over ``H20``.
"""

import functools
from pathlib import Path
from typing import Optional

import regex

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from ..plain import PlainModel, plain, spec

from ..packs.loader import _read_toml, _validate, patterns_root
from .template_era import in_order  # an alias's words in order: its regex needs compiling only then


@plain(strict=True)
class GpuEntry(PlainModel):
    """One GPU family of the table: compute capability as digits (None off CUDA) and its names."""

    cc: Optional[int] = None
    platform: str = "CUDA"
    gfx: Optional[str] = None  #: ROCm arch name (gfx942)
    aliases: list[str] = spec(min_length=1)


@plain(strict=True)
class PlatformEntry(PlainModel):
    """A platform's facts (``[platform.HPU]``): whether its devices have a compute capability, and
    how reasons name its device when a log names only the platform."""

    compute_capability: bool = True
    device: str = ""


@plain(strict=True)
class CapabilityList(PlainModel):
    """``[capability]``: the compute capabilities NVIDIA lists (digits), the only ones a capability
    given directly (``sm_121a``, ``12.1``) may name."""

    cuda: list[int] = spec(default_factory=list)
    #: the first CUDA runtime that knows an arch (cc digits as text -> version): a GPU of that
    #: arch never runs under an older one (``min_cuda``)
    min_cuda: dict[str, str] = spec(default_factory=dict)


@plain(strict=True)
class GpuSource(PlainModel):
    """``[source.<kind>]``: a kind of line that names a run's GPU (``engine``, ``tool``, ``wrapper``),
    its ``rank`` (the stronger wins) and how reports say it (``words``)."""

    rank: int = spec(ge=0, le=9)
    words: str = spec(min_length=10)


@plain(strict=True)
class GpuFile(PlainModel):
    """``patterns/gpus.toml``: GPU names, platform facts, the kinds of line that name a GPU and the
    package names ``--with`` accepts."""

    gpu: dict[str, GpuEntry]
    source: dict[str, GpuSource] = spec(default_factory=dict)
    capability: CapabilityList = spec(default_factory=CapabilityList)
    platform: dict[str, PlatformEntry] = spec(default_factory=dict)
    package_alias: dict[str, str] = spec(default_factory=dict)


def platform_without_cc(platform: Optional[str]) -> Optional[PlatformEntry]:
    """The ``gpus.toml`` entry of ``platform`` (``HPU``) when its devices have no compute
    capability (a run on it is judged against the platform), else None."""
    entry = gpu_file().platform.get(platform or "")
    return entry if entry is not None and not entry.compute_capability else None


@functools.lru_cache(maxsize=4)
def gpu_file(root: Optional[Path] = None) -> GpuFile:
    """The validated ``gpus.toml``; raises ``PackError`` when broken."""
    path = (root or patterns_root()) / "gpus.toml"
    return _validate(GpuFile, _read_toml(path), path, cache=True)


#: the source kind of a GPU the engine's own line names (a rule that sets ``gpu`` and no ``gpu_source``)
ENGINE_SOURCE = "engine"


def source_rank(kind: Optional[str]) -> int:
    """``patterns/gpus.toml`` ``[source.<kind>]`` rank of a GPU-naming line (``engine`` when
    ``kind`` is None); an unknown kind ranks below every listed one (the loader's tests keep
    every rule's ``gpu_source`` listed)."""
    entry = gpu_file().source.get(kind or ENGINE_SOURCE)
    return entry.rank if entry is not None else -1


def source_words(kind: Optional[str]) -> str:
    """How reports say a GPU source kind (``[source.<kind>] words``), the kind itself when unlisted."""
    entry = gpu_file().source.get(kind or ENGINE_SOURCE)
    return entry.words if entry is not None else str(kind)


def min_cuda(cc: Optional[int]) -> Optional[str]:
    """The lowest CUDA runtime a GPU of compute capability ``cc`` runs under (``patterns/gpus.toml``
    ``[capability] min_cuda``: sm110 13.0, sm100 / sm120 12.8, sm90 11.8; sources there), None
    when the table does not hold it."""
    if cc is None:
        return None
    return gpu_file().capability.min_cuda.get(str(cc))


def package_name(text: str) -> str:
    """Canonical optional-package name for a ``--with`` item (``cutedsl`` -> ``flashinfer.cute_dsl``)."""
    t = text.strip()
    return gpu_file().package_alias.get(t.lower(), t)


@dataclass(frozen=True)
class Gpu:
    """A resolved GPU: ``name`` (table entry or what was given), ``cc`` digits, ``platform``."""

    name: str
    cc: Optional[int]
    platform: str
    gfx: Optional[str] = None


@functools.lru_cache(maxsize=4)
def gpu_table(root: Optional[Path] = None) -> tuple[tuple[tuple[str, ...], int, str, GpuEntry], ...]:
    """The alias table (alias words lowercased, length, alias, entry), longest alias first; each
    alias's regex is ``alias_regex(alias)``. Raises ``PackError`` on a broken file."""
    data = gpu_file(root)
    rows = []
    for name, entry in data.gpu.items():
        for alias in entry.aliases:
            rows.append((tuple(w.lower() for w in alias.split()), len(alias), alias, entry))
    rows.sort(key=lambda r: -r[1])
    return tuple(rows)


@functools.lru_cache(maxsize=1024)
def alias_regex(alias: str) -> regex.Pattern:
    """An alias's words, case-insensitive, up to two of space, ``_`` or ``-`` between them, not
    inside a longer name: compiled on first need (``resolve_gpu`` tries ~110 aliases)."""
    words = [regex.escape(w) for w in alias.split()]
    return rxcache.compile(r"(?<![A-Za-z0-9])" + r"[\s_-]{0,2}".join(words) + r"(?![A-Za-z0-9])", regex.I)


#: ``sm_121a`` / ``sm100f`` / ``compute_90a`` / ``cc90`` / ``120``: digits, then at most an arch-specific
#: (``a``) or family (``f``) suffix (nvcc's -arch forms); nothing else after the digits
_SM = lazyre.compile(r"^(?:(?:sm|cc|compute)[_ ]?)?(\d{2,3})([af])?$", regex.I)
#: ``12.1`` / ``cc 9.0`` / ``sm 12.1`` / ``12.0a``
_DOT = lazyre.compile(r"^(?:(?:sm|cc|compute[_ ]capability)[_ ]?)?(\d{1,2})\.(\d)([af])?$", regex.I)
_GFX = lazyre.compile(r"^gfx[0-9a-f]{3,4}$", regex.I)


def known_capability(cc: int) -> bool:
    """Whether ``cc`` (digits) is a compute capability NVIDIA lists (``[capability] cuda``) or the cc
    of a ROCm entry of the table: anything else named directly is unknown, not judged by number."""
    data = gpu_file()
    return cc in data.capability.cuda or any(e.cc == cc for e in data.gpu.values() if e.platform == "ROCM")


def capability_of(text: str) -> Optional[int]:
    """The compute capability ``text`` names directly (``sm_121a`` / ``sm100f`` / ``12.1`` / ``120``) as
    digits, known or not; None when it is not such a form."""
    t = text.strip()
    m = _SM.match(t)
    if m:
        return int(m.group(1))
    m = _DOT.match(t)
    if m:
        return int(m.group(1)) * 10 + int(m.group(2))
    return None


def resolve_logged_gpu(name: Optional[str]) -> Optional[Gpu]:
    """A GPU name as a log spells it: as ``resolve_gpu``, else with ``_`` read as a space (a tuning
    config path's ``device_name=NVIDIA_H100_80GB_HBM3``). None when neither names a known GPU."""
    if not name:
        return None
    return resolve_gpu(name) or resolve_gpu(name.replace("_", " "))


def resolve_gpu(text: Optional[str]) -> Optional[Gpu]:
    """``"H100"`` -> Gpu("H100", 90, "CUDA"); ``"sm_120"`` / ``"12.0"`` / ``"120"`` / ``"sm121a"`` -> cc 120 / 121.

    Returns None when ``text`` names nothing known (the caller says so; nothing is guessed): a name
    no alias holds as whole words (``RTX 509``), a capability NVIDIA does not list (``sm_999``), a
    ROCm arch no entry has (``gfx1036``).
    """
    if not text or not text.strip():
        return None
    t = text.strip()
    cc = capability_of(t)
    if cc is not None:
        return Gpu(f"sm{cc}", cc, "CUDA") if known_capability(cc) else None
    if _GFX.match(t):  # a ROCm arch: the table's device of that arch
        g = t.lower()
        for name, entry in gpu_file().gpu.items():
            if entry.gfx == g:
                return Gpu(name, entry.cc, entry.platform, entry.gfx)
        return None
    low = t.lower() if t.isascii() else None  # ASCII: an alias it holds, it holds lowercased
    for words, _, name, entry in gpu_table():
        if low is not None and not in_order(low, words):
            continue  # its regex cannot match: not compiled
        if alias_regex(name).search(t):
            return Gpu(name, entry.cc, entry.platform, entry.gfx)
    return None


def unknown_gpu_message(text: str) -> str:
    """The error for a ``--gpu`` value that names no GPU: the closest known names (difflib over
    the aliases of the shipped GPU table), then the other accepted forms. Raises nothing."""
    import difflib

    names = sorted(gpu_file().gpu)
    aliases = {a.lower(): name for name, e in gpu_file().gpu.items() for a in [name, *e.aliases]}
    close = []
    # a letter O typed for a zero ('H1OO'): the name it spells with zeros comes first
    zeroed = text.lower().replace("o", "0")
    if zeroed in aliases:
        close.append(aliases[zeroed])
    for hit in difflib.get_close_matches(text.lower(), list(aliases), n=6, cutoff=0.5):
        if aliases[hit] not in close:
            close.append(aliases[hit])
    near = f"did you mean {', '.join(close[:4])}? " if close else ""
    cc = capability_of(text)
    if cc is not None:  # a well-formed capability NVIDIA does not list
        ccs = ", ".join(f"{c // 10}.{c % 10}" for c in gpu_file().capability.cuda)
        return (f"unknown compute capability {text!r} (sm{cc}): NVIDIA lists {ccs}; "
                f"give one of them or a GPU name ({', '.join(names)})")
    if _GFX.match(text.strip()):
        gfx = sorted({e.gfx for e in gpu_file().gpu.values() if e.gfx})
        return f"unknown ROCm arch {text!r}: known {', '.join(gfx)}; or a GPU name ({', '.join(names)})"
    n_alias = sum(1 for name, e in gpu_file().gpu.items() for a in e.aliases if a.lower() != name.lower())
    return (f"unknown GPU {text!r}: {near}known names: {', '.join(names)}, and {n_alias} aliases of them "
            f"(H200, L4, RTX 4090, ...); or smNN / a compute capability like 9.0")