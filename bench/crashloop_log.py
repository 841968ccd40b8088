"""Write a crash-loop log: one real engine start-up that fails, repeated with advancing clocks and pids.

A pod whose engine restarts over and over (a Kubernetes ``CrashLoopBackOff`` under a supervisor
that keeps one log, ``while true; do vllm serve ...; done``) logs the same start-up again and
again: banner, kernel lines, warnings, a traceback. ``bench/crashloop.py`` measures logscan on
such a log and ``tests/test_crashloop.py`` builds small ones; both take the windows from here.

The windows are real fixture lines, unchanged but for their clocks and pids:

- ``vllm``: ``fixtures/vllm/vllm-005.log`` (vllm#37296: banner, non-default args, TP=2
  Marlin NVFP4 weight-only warnings) then ``fixtures/vllm/vllm-019.log`` (a ``Worker_TP1``
  DeepGEMM traceback and ``EngineCore failed to start.``), its ``Worker_TP1`` pid made the
  one of vllm-005 so that the two excerpts are one start.
- ``sglang``: the ``server_args=ServerArgs(...)`` line of ``fixtures/sglang/sglang-211.log``
  then lines 45-56 of ``fixtures/sglang/sglang-274.log`` (DeepGEMM JIT, ``Scheduler hit an
  exception`` and its traceback).

Each restart gets its own pids (``pid=N``, a glog line's thread id) and a clock that moves on
(vLLM ``MM-DD HH:MM:SS``, glog ``E0302 07:02:06.240000``, SGLang ``[YYYY-MM-DD HH:MM:SS``).
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"

_PID = re.compile(r"pid=(\d+)")
_VLLM_TS = re.compile(r"\b(INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d\b")
_GLOG_TS = re.compile(r"\b([EWI])\d{4} \d\d:\d\d:\d\d\.\d{6} (\d+) ")
_SGL_TS = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]")


def _lines(rel: str) -> list[str]:
    return (FIX / rel).read_text(encoding="utf-8").split("\n")


def window(engine: str) -> list[str]:
    """The real lines of one failing start of ``engine`` (``vllm`` or ``sglang``), no newline."""
    if engine == "vllm":
        first = [ln for ln in _lines("vllm/vllm-005.log") if ln.strip()]
        second = [ln.replace("pid=8761", "pid=646936") for ln in _lines("vllm/vllm-019.log") if ln.strip()]
        return first + second
    if engine == "sglang":
        args = [ln for ln in _lines("sglang/sglang-211.log") if "server_args=ServerArgs(" in ln]
        return args + [ln for ln in _lines("sglang/sglang-274.log")[44:56] if ln.strip()]
    raise ValueError(f"no crash-loop window for engine {engine!r}")


def restarts(engine: str, start: int = 0) -> Iterator[str]:
    """Yield the window of ``engine`` forever (restart ``start`` first), each restart's text with
    its own pids and a clock 2 minutes after the previous restart's (one second per line)."""
    lines = window(engine)
    t0 = 1_767_225_600  # 2026-01-01 00:00:00 UTC
    i = start
    while True:
        base = t0 + 120 * i
        pids: dict[str, str] = {}

        def pid(m: re.Match) -> str:
            return "pid=" + pids.setdefault(m.group(1), str(1000 + (i * 13 + len(pids) * 7) % 4_000_000))

        out = []
        for k, ln in enumerate(lines):
            st = time.gmtime(base + k)
            ln = _PID.sub(pid, ln)
            ln = _VLLM_TS.sub(lambda m: f"{m.group(1)} {time.strftime('%m-%d %H:%M:%S', st)}", ln)
            ln = _GLOG_TS.sub(lambda m: f"{m.group(1)}{time.strftime('%m%d %H:%M:%S', st)}.000000 "
                              f"{pids.get(m.group(2), m.group(2))} ", ln)
            ln = _SGL_TS.sub(time.strftime("[%Y-%m-%d %H:%M:%S]", st), ln)
            out.append(ln)
        yield "\n".join(out) + "\n"
        i += 1


def write_loop(path: Path, engine: str, size: int = 0, count: int = 0) -> tuple[int, int]:
    """Write restarts of ``engine`` to ``path`` until ``size`` bytes or ``count`` restarts.

    Returns (bytes written, restarts written). Deterministic.
    """
    written = n = 0
    with path.open("wb", buffering=1 << 20) as fh:
        for text in restarts(engine):
            if (size and written >= size) or (count and n >= count) or not (size or count):
                break
            blob = text.encode()
            fh.write(blob)
            written += len(blob)
            n += 1
    return written, n
