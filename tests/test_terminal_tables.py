"""Tables go through rich: plain and unwrapped when piped (the layout the snapshots pin), wrapped
at word boundaries and coloured on a terminal (a real pseudo-terminal here, ``COLUMNS`` wide)."""
from __future__ import annotations

import os
import pty
import subprocess
import sys

import regex

from logscan.formats.table import render_table
from tests.conftest import ROOT

ANSI = regex.compile(r"\x1b\[[0-9;]*m")
LOG = ROOT / "fixtures" / "vllm" / "vllm-005.log"  # real; its table row: linear (NVFP4) Marlin 6/14 weight_only
ROWS = [["LAYER FAMILY", "KERNEL", "COST CLASS"],
        ["MoE (NvFp4 experts, tensor parallel)", "FlashInferCutlassMoEPrepareAndFinalizeNoEPKernel", "weight_only"],
        ["linear (NVFP4)", "Marlin", "emulated"]]


def _on_pty(argv: list[str], columns: int) -> str:
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(argv, stdout=child, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_piped_tables_are_plain_and_unwrapped():
    lines = render_table(ROWS, terminal=False)
    assert not any(ANSI.search(x) for x in lines)
    assert lines[1] == "  MoE (NvFp4 experts, tensor parallel)  FlashInferCutlassMoEPrepareAndFinalizeNoEPKernel  weight_only"
    out = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", str(LOG)], capture_output=True, text=True).stdout
    assert "\x1b[" not in out and "  linear (NVFP4)  Marlin  6/14?  weight_only  TP0,TP1  16" in out


def test_terminal_tables_wrap_at_words_fold_long_names_and_colour_cost_classes():
    lines = render_table(ROWS, terminal=True, width=70)
    plain = [ANSI.sub("", x) for x in lines]
    assert all(len(x) <= 70 for x in plain)
    assert len(plain) > len(ROWS)  # wrapped
    words = " ".join(" ".join(plain).split())
    for w in ("MoE", "(NvFp4", "experts,", "tensor", "parallel)", "weight_only", "emulated"):
        assert regex.search(rf"(^|\s){regex.escape(w)}(\s|$)", words), w  # no word cut
    start = plain[1].index("FlashInfer")
    kernel = "".join(x[start:].split("  ")[0].strip() for x in plain[1:] if len(x) > start and x[start] != " ")
    assert kernel.startswith("FlashInferCutlassMoEPrepareAndFinalizeNoEPKernel")  # a long name folded, not lost
    assert any("\x1b[" in x and "emulated" in x for x in lines)


def test_logscan_scan_on_a_real_terminal():
    out = _on_pty([sys.executable, "-m", "logscan.cli", "scan", str(LOG)], columns=60)
    assert "\x1b[" in out  # coloured
    # the rows, up to the legend (prose the terminal wraps) or the fall line
    table = out.split("LAYER FAMILY", 1)[1].split("Marlin: fell", 1)[0].split("RUNG k/n?", 1)[0]
    rows = [ANSI.sub("", x) for x in ("LAYER FAMILY" + table).splitlines() if x.strip()]
    assert all(len(x) <= 60 for x in rows), rows
    assert "weight_only" in " ".join(rows) and "TP0,TP1" in " ".join(rows)
