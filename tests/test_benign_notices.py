"""A line in which the engine itself says another message is harmless is no fallback.

SGLang 0.4.0.post2 .. 0.4.7 warn at the import of their Triton decode attention
(srt/layers/attention/triton_ops/decode_attention.py, checked in the wheels): "The following error
message 'operation scheduled before its operands' can be ignored." Its word 'ignored' made the
fallback topic rule (sglang.topic.fallback) list it as a fallback line no rule read ("Not
understood"). The pack rule sglang.run.triton-schedule-notice knows it; the lines below are that
template behind SGLang's prefix, before logging is configured (bare), and the MLIR diagnostic it
speaks of.
"""
from __future__ import annotations

import logscan

LINES = [
    "[2025-03-02 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', quantization=None)\n",
    "[2025-03-02 10:00:05 TP0] The following error message 'operation scheduled before its operands' can be ignored.\n",
    "The following error message 'operation scheduled before its operands' can be ignored.\n",
    'loc("/sgl-workspace/sglang/python/sglang/srt/layers/attention/triton_ops/decode_attention.py":310:16): '
    "error: operation scheduled before its operands\n",
    "[2025-03-02 10:00:30] The server is fired up and ready to roll!\n",
]


def test_the_ignorable_triton_notice_is_no_unread_fallback():
    rep = logscan.scan(LINES)
    (run,) = rep.runs
    assert not run.unexplained and not run.findings and not run.start_failure
    assert [e.line for e in rep.events if e.rule == "sglang.run.triton-schedule-notice"] == [2, 3]
    assert not any(e.rule == "sglang.topic.fallback" for e in rep.events)


def test_the_notice_dates_the_release():
    (run,) = logscan.scan(LINES).runs
    assert run.engine.version_source == "inferred"
    assert run.engine.release_range == ["0.4.0.post2", "0.4.7"]
