"""A run's failure is read by its own engine's generic uncaught rule, not another pack's (trial 2,
item 5): in lmdeploy-114 (real) the first traceback frame inside the lmdeploy package is both the
engine's identity evidence and the uncaught traceback's line; ``llamacpp.uncaught.traceback``
(first by ``unprefixed_priority`` when no engine is known yet) used to take it."""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

@pytest.mark.parametrize("log, engine", [
    (FIXTURES / "lmdeploy" / "lmdeploy-114.log", "lmdeploy"),
    (FIXTURES / "mlc-llm" / "mlc-llm-103.log", "mlc-llm"),
])
def test_the_start_failure_rule_is_the_run_engines_own(log, engine):
    runs = scan_inputs([str(log)]).runs
    failed = [r for r in runs if r.start_failure is not None]
    assert failed and all(r.engine.name == engine for r in failed)
    for r in failed:
        assert r.start_failure.rule.startswith(engine + "."), r.start_failure.rule


def test_a_source_line_quoted_by_a_frame_is_not_the_raised_message():
    # sglang-105 (real): line 2 is the frame's code `raise ValueError(f"Unsupported ...")`; the
    # finding is line 3's raised message, by SGLang's own rule now that it is tried first
    run = scan_inputs([str(FIXTURES / "sglang" / "sglang-105.log")]).runs[0]
    f = [f for f in run.findings if f.code == "UNSUPPORTED_ON_ARCH"]
    assert [(x.line, x.rule) for x in f] == [(3, "sglang.limits.unsupported-arch")]
