"""Start-up caches and the read-ahead reader: faster, never different, never hiding a broken pack."""
from __future__ import annotations

import io
import json
import shutil

import pytest

from logscan.models import InputStats
from logscan.packs.loader import PackError, _read_toml, load_packs, patterns_root
from logscan.sources import reader as reader_mod
from logscan.sources.prefilter import make_prefilter
from logscan.packs.loader import default_packs
from tests.conftest import FIXTURES


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("LOGSCAN_CACHE_DIR", str(d))
    return d


def test_parsed_toml_cache_is_used_and_equal(cache, tmp_path):
    src = patterns_root() / "findings.toml"
    p = tmp_path / "findings.toml"
    shutil.copy(src, p)
    first = _read_toml(p)
    cached = list(cache.glob("toml-*.json"))
    assert len(cached) == 1 and json.loads(cached[0].read_text()) == first
    assert _read_toml(p) == first


def test_corrupt_cache_entry_is_ignored(cache, tmp_path):
    p = tmp_path / "findings.toml"
    shutil.copy(patterns_root() / "findings.toml", p)
    want = _read_toml(p)
    for c in cache.glob("toml-*.json"):
        c.write_bytes(b"{not json")
    assert _read_toml(p) == want


def test_changed_file_misses_the_cache(cache, tmp_path):
    p = tmp_path / "x.toml"
    p.write_text('a = 1\n')
    assert _read_toml(p) == {"a": 1}
    p.write_text('a = 22\n')
    assert _read_toml(p) == {"a": 22}


def test_broken_regex_is_reported_after_a_clean_cached_load(cache, tmp_path):
    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    load_packs(dst)  # compiles everything, records the clean set
    assert list(cache.glob("patterns-ok-*"))
    load_packs(dst)  # cached: lazy patterns, no error
    (dst / "vllm" / "rules" / "99-bad.toml").write_text(
        '[[rule]]\nid = "vllm.bad.regex"\nkind = "failure"\npattern = "(unclosed"\n'
        'keywords = ["unclosed"]\nexamples = ["unclosed"]\n')
    with pytest.raises(PackError) as exc:
        load_packs(dst)
    assert "99-bad.toml" in str(exc.value) and "vllm.bad.regex" in str(exc.value)


def _lines(data: bytes, read_ahead: int, monkeypatch, chunk: int = 4096):
    monkeypatch.setattr(reader_mod, "READ_AHEAD", read_ahead)
    st = InputStats(source="t")
    pf = make_prefilter(default_packs())
    r = reader_mod.LineReader(io.BufferedReader(io.BytesIO(data)), st, prefilter=pf, chunk_size=chunk)
    return list(r), st


@pytest.mark.parametrize("log", sorted(FIXTURES.glob("vllm/*.log"))[:6], ids=lambda p: p.stem)
def test_read_ahead_threads_give_the_same_lines_and_stats(log, monkeypatch):
    data = log.read_bytes() * 3
    threaded, st1 = _lines(data, 2, monkeypatch)
    inline, st2 = _lines(data, 0, monkeypatch)
    assert threaded == inline
    assert st1 == st2


def test_closing_the_reader_early_stops_the_read_ahead_thread(monkeypatch):
    import threading

    data = b"Using MarlinLinearKernel for CompressedTensorsWNA16\n" * 50000
    monkeypatch.setattr(reader_mod, "READ_AHEAD", 2)
    st = InputStats(source="t")
    r = iter(reader_mod.LineReader(io.BufferedReader(io.BytesIO(data)), st,
                                   prefilter=make_prefilter(default_packs()), chunk_size=4096))
    next(r)
    r.close()
    assert not any(t.name == "logscan-read-ahead" and t.is_alive() for t in threading.enumerate())


def _rules(ps):
    return {e: [(cr.rule, cr.regex.pattern, str(cr.versions), cr.path) for cr in p.rules] for e, p in ps.packs.items()}


def test_pickled_packset_is_used_and_equal_to_a_fresh_load(cache, tmp_path):
    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    fresh = load_packs(dst)
    stored = list(cache.glob("packset-*.pickle"))
    assert len(stored) == 1
    again = load_packs(dst)
    assert again is not fresh and _rules(again) == _rules(fresh)
    assert again.findings == fresh.findings and again.derived == {}
    assert {e: sorted(p.ladders) for e, p in again.packs.items()} == {e: sorted(p.ladders) for e, p in fresh.packs.items()}


def test_a_changed_pack_file_misses_the_pickled_packset(cache, tmp_path):
    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    load_packs(dst)
    (dst / "vllm" / "rules" / "99-extra.toml").write_text(
        '[[rule]]\nid = "vllm.extra.probe"\nkind = "failure"\npattern = "probe line xyz"\n'
        'keywords = ["probe line xyz"]\nexamples = ["probe line xyz"]\n')
    assert "vllm.extra.probe" in [cr.rule.id for cr in load_packs(dst).packs["vllm"].rules]


def test_a_pickled_packset_writable_by_others_is_not_loaded(cache, tmp_path):
    import os

    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    load_packs(dst)
    (stored,) = cache.glob("packset-*.pickle")
    stored.write_bytes(b"not a pickle at all")
    os.chmod(stored, 0o666)
    assert "vllm" in load_packs(dst).packs  # neither unpickled nor an error
