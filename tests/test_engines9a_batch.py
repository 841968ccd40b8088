"""The engines9a first-sight batch (issue 16, docs/corpus.md): TGI, LMDeploy and MLC-LLM logs, and
the general mechanisms the batch showed missing, each on the batch's real logs with a counter-example
that must stay as it was:

- TGI's launcher dumping a shard's stderr ('Shard complete standard error output:', printed only once
  the shard process ended) is a failed start before any ready line;
- a rank's traceback behind torch.distributed's '[rankN]: ' (CPython frames, rich's boxed frames) is
  a traceback (tests/test_host_tracebacks.py has the shared rules);
- MLC-LLM's TVM runtime aborts are failed starts, TVM's Vulkan errors name the platform, the first
  CLI's 'Use lib' / 'Initializing the chat module...' name the engine;
- the TGI image tag on a pasted docker command names the release, and a release older than the one
  shipped TGI ladder (3.3.7) is read against no ladder, never against 3.3.7's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import one_run as _run, scan_json

FIX = Path(__file__).parent.parent / "fixtures"


@pytest.mark.parametrize("name, engine, rule, line", [
    ("tgi-153", "tgi", "tgi.run.shard-failed", 8),
    ("tgi-156", "tgi", "tgi.uncaught.rich-traceback", 1),
    ("mlc-llm-151", "mlc-llm", "mlc-llm.run.tvm-runtime-abort", 7),
    ("mlc-llm-152", "mlc-llm", "mlc-llm.run.tvm-runtime-abort", 5),
])
def test_the_batch_failed_starts_are_read(name, engine, rule, line):
    run = _run(name)
    assert run["engine"]["name"] == engine
    assert (run["start_failure"]["rule"], run["start_failure"]["line"]) == (rule, line)


@pytest.mark.parametrize("name", ["tgi-154", "mlc-llm-149", "mlc-llm-150"])
def test_a_start_that_went_on_is_not_failed(name):
    # tgi-154: shard ready, webserver started; mlc-llm-149: a JIT compile that finished;
    # mlc-llm-150: an IPython *input* cell and the device probe, no traceback
    assert _run(name)["start_failure"] is None


@pytest.mark.parametrize("name", ["mlc-llm-151", "mlc-llm-152", "mlc-llm-150"])
def test_tvm_vulkan_lines_name_the_platform(name):
    assert _run(name)["engine"]["platform"] == "VULKAN"


# tgi-116 (3.0.1) was here while only 3.3.7 was shipped: it now has its era's ladder (tests/test_tgi_eras.py)
@pytest.mark.parametrize("name, release", [("tgi-155", "0.9"), ("tgi-161", "0.8.2"),
                                           ("tgi-145", "1.3.0")])
def test_an_old_tgi_release_from_the_image_tag_is_read_against_no_ladder(name, release):
    e = _run(name)["engine"]
    assert e["version"] == release and e["ladder_version"] is None


def test_a_tgi_log_with_no_release_keeps_the_shipped_ladder():
    # tgi-159 (3.x Args, no image tag): nothing says an older release, so the 3.3.7 ladder stays
    e = _run("tgi-159")["engine"]
    assert e["version"] is None and e["ladder_version"] == "3.3.7"


def test_a_tvm_abort_after_the_server_came_up_is_a_failure_while_serving():
    # mlc-llm-154 (engines9a-2): uvicorn up, then macOS libc++abi's words for the uncaught
    # tvm::runtime::InternalError: a failure while serving, not a failed start
    run = scan_json(FIX / "mlc-llm" / "mlc-llm-154.log")["runs"][0]
    assert run["start_failure"] is None
    assert run["serving_failure"]["rule"] == "mlc-llm.run.tvm-runtime-abort"
    assert run["serving_failure"]["line"] == 11
