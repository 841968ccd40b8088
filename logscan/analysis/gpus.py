"""Resolve a GPU description (``H100``, ``sm90``, ``9.0``, ``NVIDIA H100 80GB HBM3``) to a compute capability.

The name table is data (``patterns/gpus.toml``): aliases are matched as whole words, the
longest alias first, so ``A100`` wins over ``A10`` and ``H200`` over ``H20``.
"""

import functools
from pathlib import Path
from typing import Optional

import regex

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
class GpuFile(PlainModel):
    """``patterns/gpus.toml``: GPU names, platform facts and the package names ``--with`` accepts."""

    gpu: dict[str, GpuEntry]
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
    return regex.compile(r"(?<![A-Za-z0-9])" + r"[\s_-]{0,2}".join(words) + r"(?![A-Za-z0-9])", regex.I)


_SM = lazyre.compile(r"^(?:sm[_ ]?|cc[_ ]?)?(\d{2,3})[a-z]?$", regex.I)
_DOT = lazyre.compile(r"^(?:cc[_ ]?)?(\d{1,2})\.(\d)$")


def resolve_gpu(text: Optional[str]) -> Optional[Gpu]:
    """``"H100"`` -> Gpu("H100", 90, "CUDA"); ``"sm_120"`` / ``"12.0"`` / ``"120"`` -> cc 120.

    Returns None when ``text`` names nothing known (the caller says so; nothing is guessed).
    """
    if not text or not text.strip():
        return None
    t = text.strip()
    m = _SM.match(t)
    if m:
        return Gpu(f"sm{m.group(1)}", int(m.group(1)), "CUDA")
    m = _DOT.match(t)
    if m:
        cc = int(m.group(1)) * 10 + int(m.group(2))
        return Gpu(f"sm{cc}", cc, "CUDA")
    if regex.fullmatch(r"(?i)gfx[0-9a-f]{3,4}", t):  # a ROCm arch: the table's device of that arch
        g = t.lower()
        for name, entry in gpu_file().gpu.items():
            if entry.gfx == g:
                return Gpu(name, entry.cc, entry.platform, entry.gfx)
        return Gpu(g, None, "ROCM", g)
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
    for hit in difflib.get_close_matches(text.lower(), list(aliases), n=6, cutoff=0.5):
        if aliases[hit] not in close:
            close.append(aliases[hit])
    near = f"did you mean {', '.join(close[:4])}? " if close else ""
    return (f"unknown GPU {text!r}: {near}known names: {', '.join(names)}; "
            f"or smNN / a compute capability like 9.0")
