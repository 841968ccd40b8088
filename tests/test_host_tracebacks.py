"""Tracebacks printed by the host a process runs in, read for every engine (patterns/common-rules/,
logscan/packs/loader.py COMMON_RULES): IPython's notebook traceback, rich's boxed traceback, and the
wrappers every pack's lines pass through (torch.distributed's '[rankN]: ', pytest's 'E   ' marker).
Real lines from real logs: lmdeploy-150 (IPython, LMDeploy's pipeline API in a notebook), tgi-156
(rich box behind compose and '[rank1]: '), tgi-123 ('[rank1]: ' CPython frames), lmdeploy-149
(pytest's marker), mlc-llm-150 (an IPython input cell, which is no traceback)."""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from logscan.sources.prefix import PrefixParser
from tests.conftest import FIXTURES

ENGINES = ["vllm", "sglang", "tgi", "trtllm", "llamacpp", "lmdeploy", "mlc-llm"]


def _lines(log: str) -> list[str]:
    engine = log.rsplit("-", 1)[0]
    return (FIXTURES / engine / f"{log}.log").read_text(encoding="utf-8").splitlines()


def _rule(packs, engine: str, name: str):
    rules = [cr for cr in packs.packs[engine].rules if cr.rule.id == f"{engine}.uncaught.{name}"]
    assert len(rules) == 1, (engine, name)
    return rules[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_pack_reads_ipython_traceback_lines(packs, engine):
    # lmdeploy-150's header, cell frame and file frame, as IPython printed them
    real = _lines("lmdeploy-150")
    shaped = [ln for ln in real if "Traceback (most recent call last)" in ln or ln.startswith(("Cell In[", "File "))]
    assert len(shaped) >= 3
    rule = _rule(packs, engine, "notebook-traceback")
    for ln in shaped:
        assert rule.regex.match(ln), (engine, ln)
    # an IPython *input* cell (mlc-llm-150) is code being typed, not a traceback
    assert not any(rule.regex.match(ln) for ln in _lines("mlc-llm-150")[:5])


@pytest.mark.parametrize("engine", ENGINES)
def test_every_pack_reads_rich_traceback_frames(packs, engine):
    rule = _rule(packs, engine, "rich-traceback")
    real = [ln.split("[rank1]: ", 1)[1] for ln in _lines("tgi-156")]
    hits = [ln for ln in real if rule.regex.match(ln)]
    # the frame line only, never the box's source lines or its blank rows
    assert hits == ["│ /usr/src/server/text_generation_server/utils/weights.py:275 in get_sharded   │"]


def test_wrappers_apply_to_every_engines_lines(packs):
    parser = PrefixParser(packs)
    # torch.distributed's rank prefix behind a compose prefix (tgi-156), before CPython frames (tgi-123)
    rec = parser.parse("x", 1, _lines("tgi-156")[0])
    assert rec.message.startswith("│ /usr/src/server/text_generation_server/utils/weights.py:275")
    rec = parser.parse("x", 1, _lines("tgi-123")[0])
    assert rec.message.startswith('File "/opt/conda/bin/text-generation-server", line 8')
    # pytest's fail marker (declared in the LMDeploy pack) before a vLLM line (vllm-002): wrappers are global
    vllm_line = _lines("vllm-002")[0]
    assert parser.parse("x", 1, "E   " + vllm_line).message == parser.parse("x", 1, vllm_line).message


@pytest.mark.parametrize("log, rule", [
    ("tgi-156", "tgi.uncaught.rich-traceback"),  # rich box frames behind compose + [rank1]:
    ("tgi-123", "tgi.uncaught.traceback"),       # CPython frames behind [rank1]:
])
def test_a_rank_traceback_is_a_failed_start(log, rule):
    runs = scan_inputs([str(FIXTURES / "tgi" / f"{log}.log")]).runs
    assert [r.engine.name for r in runs] == ["tgi"]
    assert runs[0].start_failure is not None and runs[0].start_failure.rule == rule
