"""``logscan.lazyre.compile``: a module-level pattern compiled on first use (start-up, issue 18)
answers as the compiled ``regex`` pattern does, and a scan leaves the patterns it never needs
uncompiled."""
from __future__ import annotations

import subprocess
import sys

import regex

from logscan import lazyre
from tests.conftest import FIXTURES, ROOT


def test_it_answers_as_the_compiled_pattern():
    src, text = r"(?P<k>\w+)=(?P<v>[^,]*)", "model=Qwen, quantization=fp8,dtype=auto"
    lazy, rx = lazyre.compile(src, regex.I), regex.compile(src, regex.I)
    assert "_rx" not in vars(lazy)
    assert [m.groupdict() for m in lazy.finditer(text)] == [m.groupdict() for m in rx.finditer(text)]
    assert "_rx" in vars(lazy) and "finditer" in vars(lazy)  # kept: the next call is a plain attribute
    assert lazy.sub("-", text) == rx.sub("-", text) and lazy.findall(text) == rx.findall(text)
    assert lazy.search("x") is None and lazy.pattern == src and lazy.flags == rx.flags


def test_a_broken_pattern_fails_at_its_first_use():
    bad = lazyre.compile(r"(unclosed")
    try:
        bad.search("x")
    except regex.error:
        return
    raise AssertionError("no regex.error")


PROBE = """
import sys
from logscan.cli import main
from logscan.lazyre import LazyRegex
try:
    main()
except SystemExit:
    pass
names = sorted(m.__name__ + "." + k for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("logscan")
               for k, v in vars(m).items() if isinstance(v, LazyRegex) and "_rx" not in vars(v))
print(names, file=sys.stderr)
"""


def test_a_scan_compiles_only_the_patterns_its_log_needs():
    r = subprocess.run([sys.executable, "-c", PROBE, "scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-022.log")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    left = eval(r.stderr.strip().splitlines()[-1])  # noqa: S307 - our own probe's list
    assert "logscan.analysis.failhead._EXC_TYPE" in left  # no traceback in this log
    assert "logscan.analysis.runstate._KV" in left  # no config dump either
