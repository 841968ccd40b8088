"""Compare a device's compute capability with the architectures a binary was compiled for.

Engines that choose kernels by the compile-time ``__CUDA_ARCH__`` (llama.cpp's
``ggml_cuda_highest_compiled_arch``, ``ggml/src/ggml-cuda/common.cuh``) run the highest
compiled architecture that is not above the device's. A build whose list holds nothing of
the device's family silently runs an older family's code; one with nothing at or below the
device has no device code at all. Which facts to compare is pack data (``[arch_check]``).
"""
from __future__ import annotations

from typing import Optional

from .. import rxcache
from .. import lazyre  # patterns compiled on first use (start-up, issue 18)
from ..lazydc import dataclass  # processed on first use (start-up, issue 18)

_NUM = lazyre.compile(r"\d{2,4}")


@dataclass(frozen=True)
class ArchVerdict:
    """Outcome of ``check_compiled``: ``runs`` is the compiled arch (as cc digits) that executes, or None."""

    device: int
    compiled: tuple[int, ...]
    runs: Optional[int]
    family_compiled: bool

    @property
    def reason(self) -> str:
        """One sentence saying what runs and why (cc digits shown as ``smNN``)."""
        lst = ",".join(f"sm{c}" for c in self.compiled)
        if self.runs is None:
            return (f"device sm{self.device} (cc {self.device // 10}.{self.device % 10}); the build compiled "
                    f"{lst}: nothing at or below the device, so its kernels have no device code")
        return (f"device sm{self.device} (cc {self.device // 10}.{self.device % 10}); the build compiled {lst}: "
                f"nothing of the sm{self.device // 10}x family, so only the sm{self.runs} code can run, as PTX "
                f"JIT-compiled at first launch (if the build embedded it: CUDA runs no older major's device code), "
                f"and kernels chosen by __CUDA_ARCH__ follow sm{self.runs}")


def parse_compiled(text: str, scale: int) -> tuple[int, ...]:
    """``"750,800,1200"`` with scale 10 -> ``(75, 80, 120)`` (sorted, duplicates dropped)."""
    return tuple(sorted({int(m) // scale for m in _NUM.findall(text or "")}))


def parse_cc(text: Optional[str]) -> Optional[int]:
    """Compute capability as digits: ``"90"`` -> 90, ``"9.0"`` -> 90, ``"sm_120"`` -> 120; None if unreadable."""
    if not text:
        return None
    m = rxcache.search(r"(\d{1,2})\.(\d)", text)
    if m:
        return int(m.group(1)) * 10 + int(m.group(2))
    m = rxcache.search(r"(\d{2,3})", text)
    return int(m.group(1)) if m else None


def check_compiled(device: int, compiled: tuple[int, ...]) -> ArchVerdict:
    """Which compiled arch runs on ``device`` (cc digits, e.g. 100 for 10.0), and is its family compiled?

    The family of cc 100..109 is major 10. Raises nothing; an empty ``compiled`` gives ``runs=None``.
    """
    at_or_below = [c for c in compiled if c <= device]
    runs = max(at_or_below) if at_or_below else None
    family = any(c // 10 == device // 10 and c <= device for c in compiled)
    return ArchVerdict(device=device, compiled=compiled, runs=runs, family_compiled=family)
