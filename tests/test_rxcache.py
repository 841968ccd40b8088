"""``logscan.rxcache``: patterns compiled once per installation answer as ``regex.compile``'s do,
a warm start parses none of them, and a bad table falls back to compiling (start-up, issue 18)."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest
import regex

from logscan import rxcache
from tests.conftest import FIXTURES, ROOT


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """rxcache with an empty process state and its own cache folder."""
    monkeypatch.setenv("LOGSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(rxcache, "_LIVE", {})
    monkeypatch.setattr(rxcache, "_TABLE", None)
    monkeypatch.setattr(rxcache, "_NEW", {})
    monkeypatch.setattr(rxcache, "_SAVE_REGISTERED", True)  # _save is called by the test, not atexit
    return tmp_path


def _restart(monkeypatch):
    monkeypatch.setattr(rxcache, "_LIVE", {})
    monkeypatch.setattr(rxcache, "_TABLE", None)


def _no_parsing(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("regex parsed a pattern the table holds")
    monkeypatch.setattr(regex._main, "_compile", refuse)


PATTERNS = [(r"(?P<k>\w+)=(?P<v>[^,]*)", regex.I), (r"(?i:marlin|machete)\w{0,20}", 0),
            (rb"\x1b\[[0-9;]*m", 0), (r"(?<![\w/])us(?:e|ing)\s{1,4}(?P<kernel>[A-Z]\w+)", 0)]


def test_a_warm_table_answers_without_parsing(fresh, monkeypatch):
    first = [rxcache.compile(p, f) for p, f in PATTERNS]
    assert all(isinstance(rx, regex.Pattern) for rx in first)
    rxcache._save()
    assert (fresh / rxcache._file_name()).is_file()
    _restart(monkeypatch)
    _no_parsing(monkeypatch)
    warm = [rxcache.compile(p, f) for p, f in PATTERNS]
    texts = ["model=Qwen, quantization=fp8,dtype=auto", "Using MarlinLinearKernel for GPTQ", "MACHETE_x x=1"]
    for a, b in zip(first, warm):
        assert (a.pattern, a.flags, a.groupindex) == (b.pattern, b.flags, b.groupindex)
        for t in texts:
            t = t.encode() if isinstance(a.pattern, bytes) else t
            assert [m.span() + m.groups() for m in a.finditer(t)] == [m.span() + m.groups() for m in b.finditer(t)]


def test_a_broken_or_foreign_table_compiles(fresh, monkeypatch):
    path = fresh / rxcache._file_name()
    path.write_bytes(b"not a pickle")
    assert rxcache.compile(r"a+b").fullmatch("aab")
    _restart(monkeypatch)
    # an entry that unpickles to another pattern is not used
    key = ("str", r"x+", 0)
    path.write_bytes(pickle.dumps({key: pickle.dumps(regex.compile(r"y+"))}))
    assert rxcache.compile(r"x+").pattern == r"x+"
    _restart(monkeypatch)
    # a table others may write is not read
    path.write_bytes(pickle.dumps({key: pickle.dumps(regex.compile(r"x+"))}))
    os.chmod(path, 0o666)
    _no_parsing(monkeypatch)
    with pytest.raises(AssertionError):
        rxcache.compile(r"x+")


def test_an_invalid_pattern_raises_and_is_not_stored(fresh):
    with pytest.raises(regex.error):
        rxcache.compile(r"(unclosed")
    assert not any(k[1] == r"(unclosed" for k in rxcache._NEW)


def test_caching_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGSCAN_CACHE_DIR", "")
    monkeypatch.setattr(rxcache, "_LIVE", {})
    monkeypatch.setattr(rxcache, "_TABLE", None)
    monkeypatch.setattr(rxcache, "_NEW", {})
    assert rxcache.compile(r"q+\d").search("qq1")
    assert not rxcache._NEW


PROBE = """
import sys
import regex._main as rm
calls = []
orig = rm._compile
def count(pattern, *a, **k):
    calls.append(pattern)
    return orig(pattern, *a, **k)
rm._compile = count
from logscan.cli import main
try:
    main()
except SystemExit:
    pass
from logscan import rxcache
print(len(rxcache._LIVE), len(rxcache._NEW), file=sys.stderr)
"""


def test_a_second_scan_compiles_nothing_through_the_table(tmp_path):
    """Real run: the first scan of a real log fills the table, the second takes every one of its
    patterns from it (and so writes nothing back)."""
    env = dict(os.environ, LOGSCAN_CACHE_DIR=str(tmp_path))
    argv = [sys.executable, "-c", PROBE, "scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-022.log")]
    outs = []
    for _ in range(2):
        r = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=180)
        assert r.returncode in (0, 1), r.stderr
        live, new = map(int, r.stderr.strip().splitlines()[-1].split())
        outs.append((r.stdout, live, new))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] > 20 and outs[0][2] == outs[0][1]  # every pattern compiled on the cold start
    assert outs[1][1] == outs[0][1] and outs[1][2] == 0


def test_table_patterns_answer_as_fresh_ones_on_real_lines(tmp_path, monkeypatch):
    """Every pattern a scan of real logs stored, unpickled, finds what a fresh compile finds on
    every line of those logs."""
    env = dict(os.environ, LOGSCAN_CACHE_DIR=str(tmp_path))
    logs = [FIXTURES / "vllm" / "vllm-022.log", FIXTURES / "vllm" / "vllm-005.log"]
    logs += sorted((FIXTURES / "sglang").glob("*.log"))[:2]
    for log in logs:
        subprocess.run([sys.executable, "-m", "logscan", "scan", str(log)], capture_output=True, cwd=ROOT,
                       env=env, timeout=180)
    table = pickle.loads((tmp_path / rxcache._file_name()).read_bytes())
    assert len(table) > 20
    lines = [ln for log in logs for ln in log.read_text(errors="replace").splitlines()]
    for (kind, pattern, flags), blob in table.items():
        warm, cold = pickle.loads(blob), regex.compile(pattern, flags)
        assert (warm.pattern, warm.flags, warm.groupindex) == (cold.pattern, cold.flags, cold.groupindex)
        for ln in lines:
            t = ln.encode() if kind == "bytes" else ln
            a, b = warm.search(t), cold.search(t)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (pattern, ln)
