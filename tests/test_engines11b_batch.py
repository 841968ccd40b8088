"""The engines11b first-sight batch (issue 16, docs/corpus.md "engines11b"): TGI, LMDeploy and
MLC-LLM windows, and the general mechanisms the batch showed missing, each on the batch's real logs
with a counter-example that must stay as it was:

- a Rust tracing JSON record cut before its end (TGI ``--json-output`` pasted into an issue: the
  window stops mid-record, and the record's ``"target"`` key comes last) is read as the compact
  line it stands for, with the target of the input's last tracing record (sources/unwrap.py);
- TurboMind's GEMM dispatch-cache miss ('Failed to find a feasible kernel in the cache, will
  dispatch by heuristic.', src/turbomind/kernels/gemm/gemm.cu) names LMDeploy, and is no failure;
- libstdc++'s 'terminate called after throwing an instance of ...' ends the LMDeploy run it is in
  (it opens no run of its own), and the TurboMind chat's 'double enter to end input >>>' prompt says
  the engine was up, so an abort after it is a failure while serving;
- the terminate banner is no Python traceback line: an engine line after it (TurboMind's what())
  stays the whole cause of the failure.
"""
from __future__ import annotations

import pytest

from logscan.sources.unwrap import Unwrapper, _cut_tracing
from tests.conftest import one_run as _run, scan_json, write_log

_HEAD = '{"timestamp":"2023-04-19T17:08:51.913366Z","level":"ERROR","fields":{"message":"'


# --- TGI: tracing JSON records cut mid-message --------------------------------------------------

@pytest.mark.parametrize("name, line, headline", [
    ("tgi-169", 3, "Shard complete standard error output:"),  # EETQ missing; the record tail gave the target
    ("tgi-170", 3, "Shard complete standard error output:"),
    ("tgi-171", 3, "Error when initializing model"),          # 0.x launcher, target from complete records
])
def test_cut_json_record_is_a_failed_start(name, line, headline):
    run = _run(name)
    assert run["engine"]["name"] == "tgi"
    sf = run["start_failure"]
    assert sf is not None and sf["line"] == line
    assert sf["headline"].startswith(headline)


def test_cut_record_is_decoded_and_split_like_a_complete_one():
    u = Unwrapper()
    assert u.feed(1, r'ImportError: x\n"},"target":"text_generation_launcher"}')[0][1].startswith("ImportError")
    out = u.feed(2, _HEAD + r'Shard complete standard error output:\n\nTraceback (most recent call last):\n  File \"/opt/x.py\", line 8, in <module>\n    sys')
    assert [t for _, t, _ in out] == [
        "2023-04-19T17:08:51.913366Z  ERROR text_generation_launcher: Shard complete standard error output:",
        "", "Traceback (most recent call last):", '  File "/opt/x.py", line 8, in <module>', "    sys"]
    assert {n for n, _, _ in out} == {2}  # every part keeps the JSON line's number


def test_cut_record_escapes_and_missing_target():
    # no earlier record named a target: the line keeps timestamp and level only
    assert _cut_tracing(_HEAD + r'a \"q\" b\u00', None) == '2023-04-19T17:08:51.913366Z  ERROR a "q" b'
    # an even run of backslashes is an escaped backslash, an odd one a cut escape
    assert _cut_tracing(_HEAD + "a" + "\\" * 4, "t").endswith("t: a\\\\")
    assert _cut_tracing(_HEAD + "a" + "\\" * 3, "t").endswith("t: a\\")
    # a message that ended before the cut (the cut fell in a later key) is the whole message
    assert _cut_tracing(_HEAD + 'done","rank":0},"targ', "t").endswith("t: done")


def test_no_tracing_head_is_no_salvage(tmp_path):
    # counter-examples: a JSON-looking line that is no tracing record head stays raw text
    assert _cut_tracing('{"timestamp":"2023-04-19T17:08:51Z","msg":"x', None) is None
    assert _cut_tracing('{"time":"2023","level":"ERROR","fields":{"message":"x', None) is None
    log = write_log(tmp_path, '{"timestamp":"2023-04-19T17:08:51.913366Z","level":"ERROR","fields":{"messag\n')
    assert scan_json(log)["runs"] == []


def test_a_complete_json_record_reads_as_before():
    run = _run("tgi-130")  # complete JSON Args records: the model and no failure
    assert run["engine"]["name"] == "tgi"
    assert run["start_failure"] is None


# --- LMDeploy: TurboMind's dispatch sentence, the C++ terminate banner, the chat prompt ----------

def test_dispatch_cache_miss_names_lmdeploy_and_is_no_failure():
    run = _run("lmdeploy-162")  # journald-wrapped api_server: 200 OK, then four cache-miss lines
    assert run["engine"]["name"] == "lmdeploy"
    assert run["config"]["extra"]["tm_gemm_dispatch"] == "heuristic"
    assert run.get("start_failure") is None and run.get("serving_failure") is None
    assert run["findings"] == []


def test_other_feasible_kernel_sentences_name_no_engine(tmp_path):
    log = write_log(tmp_path, "Failed to find a feasible kernel for the problem\n")
    assert all(r["engine"]["name"] != "lmdeploy" for r in scan_json(log)["runs"])


def test_abort_after_the_chat_prompt_is_a_failure_while_serving():
    run = _run("lmdeploy-166")  # '>>> nh' then 'nh terminate called after throwing ...'
    assert run["start_failure"] is None
    sf = run["serving_failure"]
    assert sf is not None and sf["line"] == 14
    assert "the exception that caused it is not in the log (a C++ exception nothing caught: its what() line is cut)" in sf["headline"]


def test_abort_without_the_prompt_is_a_failed_start(tmp_path):
    # counter-example: lmdeploy-166 without its 'session 1' / '>>>' lines, the banner after the
    # gemm_config lines: the chat never took input, so the abort is a failed start
    text = _run_lines("lmdeploy-166")[:9] + ["terminate called after throwing an instance of 'std::runtime_error'"]
    run = scan_json(write_log(tmp_path, "\n".join(text) + "\n"))["runs"][0]
    assert run["start_failure"] is not None and run.get("serving_failure") is None


def test_terminate_banner_alone_opens_no_run(tmp_path):
    log = write_log(tmp_path, "terminate called after throwing an instance of 'std::runtime_error'\n  what():  boom\n")
    assert scan_json(log)["runs"] == []


def test_engine_line_after_the_banner_stays_the_whole_cause():
    run = _run("lmdeploy-146")  # terminate banner, then TurboMind's what() '[TM][ERROR] ... Assertion fail'
    sf = run["start_failure"]
    assert sf["line"] == 9
    assert "cut before it" not in sf["headline"] and "not in the log" not in sf["headline"]


# --- the rest of the batch: engine right or unknown, nothing invented -----------------------------

@pytest.mark.parametrize("name, engine, platform", [
    ("lmdeploy-163", "lmdeploy", None),     # OpenCompass driving 'Using turbomind engine'
    ("lmdeploy-167", "lmdeploy", "CUDA"),   # FP8 command + check_env on 4x RTX 2080 Ti
    ("mlc-llm-165", "mlc-llm", "VULKAN"),   # Windows Vulkan JIT with CUDA-only --opt flags
    ("mlc-llm-167", "mlc-llm", "CUDA"),     # WSL2 probe, 'Using device: cuda:0'
    ("mlc-llm-169", "mlc-llm", "VULKAN"),   # mlc_chat_cli's Vulkan library, an OOM check
    ("tgi-172", "tgi", None),               # --quantize eetq command, pretty Args cut mid-field
])
def test_batch_engine_platform_and_no_finding(name, engine, platform):
    run = _run(name)
    assert run["engine"]["name"] == engine
    assert run["engine"]["platform"] == platform
    assert run["findings"] == [] and run["selections"] == []


def test_bare_asgi_traceback_names_no_engine():
    from tests.conftest import FIXTURES
    assert scan_json(FIXTURES / "mlc-llm" / "mlc-llm-168.log")["runs"] == []


def test_levenshtein_advice_is_no_missing_kernel_package():
    run = _run("lmdeploy-164")  # 'Install python-Levenshtein to remove this warning', then a cut start
    assert [f["code"] for f in run["findings"]] == []
    assert run["start_failure"] is not None


def _run_lines(name: str) -> list[str]:
    from tests.conftest import FIXTURES
    return (FIXTURES / name.rsplit("-", 1)[0] / f"{name}.log").read_text(encoding="utf-8").splitlines()


def test_using_engine_line_is_the_lmdeploy_runs_backend(tmp_path):
    run = _run("lmdeploy-163")  # 'lmdeploy - INFO - api.py:81 - Using turbomind engine' opens the run
    assert run["first_line"] == 2
    assert run["config"]["extra"]["lmdeploy_backend"] == "turbomind"
    # counter-example: another tool's sentence with the words is no LMDeploy line
    log = write_log(tmp_path, "INFO: Not using turbomind engine for this model\n")
    assert all(r["engine"]["name"] != "lmdeploy" for r in scan_json(log)["runs"])
