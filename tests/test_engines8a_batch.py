"""The engines8a first-sight batch (issue 16, docs/corpus.md): TGI, LMDeploy and MLC-LLM logs, and
the general mechanisms the batch showed missing, each on the batch's real logs with a
counter-example that must stay as it was:

- TGI's router dying (the launcher's 'Webserver Crashed', the router's 'Error: Backend(Warmup(..))')
  is a failed start before the server was up and a failure while serving after it;
- a pasted TGI launcher / docker command's ``--quantize`` is the logged quantization (the report
  says so), and a command without it claims nothing (a ``sets`` template whose groups all missed
  sets nothing);
- TurboMind's TM_CHECK_WITH_INFO assertion ('[TM][ERROR] <info> Assertion fail: <file>:<line>') is a
  failed start; the CUDA runtime's bare 'no kernel image ...' sentence is LMDeploy's arch refusal;
- MLC-LLM's legacy build / CLI lines name the platform (TVM's Metal device) and the engine.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.analysis.runstate import RunState, set_facts
from logscan.models import Event
from tests.conftest import finding_codes, one_run as _run, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures"


# --- TGI: the router / webserver died -------------------------------------------------------

@pytest.mark.parametrize("name, rule", [
    ("tgi-143", "tgi.run.webserver-failed"),  # v3 router warm-up 'Hidden size mismatch' on ROCm
    ("tgi-105", "tgi.run.webserver-failed"),  # v3 router warm-up 'transport error' (engines2 batch)
])
def test_router_warmup_failure_is_a_failed_start(name, rule):
    run = _run(name)
    assert run["engine"]["name"] == "tgi"
    assert run["start_failure"] is not None and run["start_failure"]["rule"] == rule
    assert "Warmup" in run["start_failure"]["evidence"]


def test_webserver_crash_after_connected_is_a_failure_while_serving(tmp_path):
    log = write_log(tmp_path, "\n".join([
        "2024-10-05T15:59:21.648308Z  INFO text_generation_launcher: Starting Webserver",
        "2024-10-05T15:59:22.000000Z  INFO text_generation_router::server: router/src/server.rs:2000: Connected",
        "2024-10-05T16:10:00.000000Z ERROR text_generation_launcher: Webserver Crashed",
        "2024-10-05T16:10:00.000100Z  INFO text_generation_launcher: Shutting down shards",
    ]) + "\n")
    run = scan_json(log)["runs"][0]
    assert run["start_failure"] is None
    assert run["serving_failure"]["rule"] == "tgi.run.webserver-failed"
    # the shard shutdown after a deliberate stop is no failure either
    quiet = write_log(tmp_path, "2024-09-21T02:24:10.928558Z  INFO shard-manager: text_generation_launcher: "
                                "Terminating shard rank=0\n", "q.log")
    assert all(r["start_failure"] is None for r in scan_json(quiet)["runs"])


def test_v3_router_span_with_fields_is_a_tgi_line():
    # 'warmup{...}:warmup: text_generation_router_v3::client: ...' (nested spans, the v3 crate target)
    run = _run("tgi-143")
    assert run["first_line"] == 2


# --- TGI: the pasted command's --quantize ---------------------------------------------------

@pytest.mark.parametrize("name, method, where", [
    ("tgi-147", "gptq", "--quantize gptq on the pasted launcher command"),      # backslash-continued
    ("tgi-149", "awq", "--quantize=awq on the pasted launcher command"),        # '=' form, --json-output
    ("tgi-104", "bitsandbytes", "--quantize bitsandbytes on the pasted launcher command"),
    ("tgi-116", "awq", "--quantize awq on the pasted docker command"),
])
def test_pasted_command_quantize_is_logged(name, method, where):
    run = _run(name)
    assert run["config"]["quantization"] == method
    assert run["config"]["extra"]["quantization_source"] == f"logged ({where})"


def test_command_without_quantize_claims_nothing():
    run = _run("tgi-145")  # docker run of the 1.3.0 image, no --quantize
    assert run["config"]["quantization"] is None
    assert run["config"]["extra"]["quantization_source"].startswith("not logged; ")
    assert run["engine"]["platform"] == "CUDA"  # the docker rule still reads the platform


def test_a_sets_template_whose_groups_all_missed_sets_nothing():
    run = RunState(index=1, source="t", first_line=1, last_line=1, engine="tgi")
    ev = Event(source="t", line=1, message="x", rule="r", kind="config")
    set_facts(run, {"quantization_source": "logged ({flag} on the pasted launcher command)",
                    "note": "constant"}, {"flag": ""}, ev)
    assert "quantization_source" not in run.config.extra
    assert run.config.extra.get("note") == "constant"
    set_facts(run, {"quantization_source": "logged ({flag} on the pasted launcher command)"},
              {"flag": "--quantize fp8"}, ev)
    assert run.config.extra["quantization_source"] == "logged (--quantize fp8 on the pasted launcher command)"


# --- LMDeploy -----------------------------------------------------------------------------------

def test_turbomind_check_with_info_is_a_failed_start():
    run = _run("lmdeploy-146")
    assert run["start_failure"] is not None
    assert run["start_failure"]["rule"] == "lmdeploy.run.tm-check-failed"
    assert run["config"]["model"] is None  # a backslash-continued command names no model '\'


def test_turbomind_warning_assertion_is_no_failure(tmp_path):
    log = write_log(tmp_path, "lmdeploy serve api_server /models/x\n"
                              "[TM][WARNING] pointer_mapping_ x Assertion fail: /a/allocator.h:284\n")
    assert all(r["start_failure"] is None for r in scan_json(log)["runs"])


def test_bare_no_kernel_image_is_lmdeploys_arch_refusal():
    run = _run("lmdeploy-148")
    assert run["engine"]["name"] == "lmdeploy"
    assert "UNSUPPORTED_ON_ARCH" in finding_codes(run)
    assert run["unexplained"] == []


def test_explicit_turbomind_fallback_is_an_override():
    assert "BACKEND_OVERRIDE_IGNORED" in finding_codes(_run("lmdeploy-142"))


# --- MLC-LLM --------------------------------------------------------------------------------

@pytest.mark.parametrize("name, gpu, model", [
    ("mlc-llm-144", "Apple M2", "CodeLlama-13b-Python-hf"),
    ("mlc-llm-145", "Apple M2 Pro", "dolly-v2-3b"),
])
def test_tvm_metal_device_names_the_platform(name, gpu, model):
    run = _run(name)
    assert run["engine"]["name"] == "mlc-llm"
    assert run["engine"]["platform"] == "METAL"
    assert run["config"]["gpu"] == gpu and run["config"]["model"] == model


def test_legacy_cli_missing_library_is_an_mlc_failed_start():
    run = _run("mlc-llm-143")
    assert run["engine"]["name"] == "mlc-llm"
    assert run["start_failure"]["rule"] == "mlc-llm.run.legacy-cli-missing"


def test_found_device_names_the_platform_before_using_device():
    # auto_device probes cuda, rocm, metal, vulkan, opencl (then cpu) in that order and 'auto'
    # uses the first one found (detect_device, mlc-llm 01ced331), so the first GPU 'Found device'
    # line is the choice even when the window is cut before 'Using device:' (mlc-llm-141, an M4
    # Max). Revised in engines10b (this test said: no platform); tests/test_engines10b_batch.py
    # holds the counter-examples (a later 'Using device:' wins, cpu alone names none).
    assert _run("mlc-llm-141")["engine"]["platform"] == "METAL"


# --- TGI --json-output: a multi-line tracing message is the lines compact mode prints -------

def test_json_output_shard_stderr_is_read_line_by_line(tmp_path):
    """launcher/src/main.rs: 'Shard complete standard error output:\\n{err}' is one tracing record;
    under --json-output its message holds the shard's whole stderr, whose exception line names the
    cause (here the arch refusal), as the compact lines would."""
    import json
    msg = ("Shard complete standard error output:\n\nTraceback (most recent call last):\n"
           '  File "/opt/conda/lib/python3.11/site-packages/text_generation_server/cli.py", line 116, in serve\n'
           "    server.serve(\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    rec = {"timestamp": "2024-08-09T12:44:00.179449Z", "level": "ERROR", "fields": {"message": msg},
           "target": "text_generation_launcher", "span": {"rank": 0, "name": "shard-manager"}}
    end = {"timestamp": "2024-08-09T12:44:00.279449Z", "level": "ERROR",
           "fields": {"message": "Shard 0 failed to start"}, "target": "text_generation_launcher"}
    log = write_log(tmp_path, json.dumps(rec) + "\n" + json.dumps(end) + "\n")
    run = scan_json(log)["runs"][0]
    assert run["engine"]["name"] == "tgi"
    assert "UNSUPPORTED_ON_ARCH" in finding_codes(run)
    assert run["start_failure"] is not None


def test_a_json_formatter_message_with_line_breaks_stays_one_record(tmp_path):
    """Only tracing records are split: a python-json-logger message keeps its line breaks in one
    record (the reader's joined-record rule), so its line count does not change."""
    import json
    log = write_log(tmp_path, json.dumps({"message": "first\nsecond", "levelname": "INFO"}) + "\n")
    from logscan.sources.unwrap import unwrap
    out = list(unwrap(iter([(1, log.read_text().rstrip("\n"), False)])))
    assert len(out) == 1 and out[0][1] == "INFO first\nsecond"


# --- closed with the template coverage (docs/other-engine-coverage.md, engines8a) --------------

def test_turbomind_fatal_weight_format_check_is_a_failed_start(tmp_path):
    log = write_log(tmp_path, "[TM][FATAL] src/turbomind/models/llama/moe_ffn_layer.cc(34): Check failed: "
                              "Unsupported config for MoeFfnLayer\n")
    run = scan_json(log)["runs"][0]
    assert run["engine"]["name"] == "lmdeploy"
    assert run["start_failure"]["rule"] == "lmdeploy.quant.weight-format"


def test_tgi_unknown_capability_is_said(tmp_path):
    log = write_log(tmp_path, "2024-08-09T12:44:00.179449Z  WARN text_generation_launcher: Cannot determine GPU "
                              "compute capability: RuntimeError: Found no NVIDIA driver on your system.\n")
    cc = scan_json(log)["runs"][0]["config"]["compute_capability"]
    assert cc.startswith("unknown (the TGI launcher could not read it: RuntimeError: Found no NVIDIA driver")


# --- engines8a-2: an IPython (Jupyter) traceback is a traceback -----------------------------

def test_ipython_traceback_of_the_pipeline_api_is_a_failed_start():
    run = _run("lmdeploy-150")  # 'UnboundLocalError   Traceback (most recent call last)', 'File ~/...:89, in pipeline('
    assert run["engine"]["name"] == "lmdeploy"
    assert run["start_failure"] is not None


def test_a_file_colon_line_sentence_is_no_ipython_frame(tmp_path):
    log = write_log(tmp_path, "2024-11-21 17:46:00,971 - lmdeploy - INFO - x.py:1 - start\n"
                              "File /tmp/a.log:3, in total 12 lines were read\n")
    assert all(r["start_failure"] is None for r in scan_json(log)["runs"])


def test_pytest_fail_marker_is_a_wrapper():
    run = _run("lmdeploy-149")  # LMDeploy's CI: 'E           File ".../lmdeploy/cli/entrypoint.py", line 42, in run'
    assert run["engine"]["name"] == "lmdeploy"
    assert run["start_failure"] is not None


def test_glog_error_letter_is_no_pytest_marker():
    from logscan.packs.loader import load_packs
    from logscan.sources.prefix import PrefixParser
    parser = PrefixParser(load_packs())
    for line in ("E1204 12:02:37.810840 3560 quantize_llama.py:289] loaded model", "E: no marker", "Error   x"):
        assert parser.parse("t", 1, line).message == line  # nothing stripped
    assert parser.parse("t", 1, "E       AssertionError: x").message.strip() == "AssertionError: x"
