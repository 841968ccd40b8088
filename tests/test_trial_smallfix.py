"""New-user trial items 4, 6 and 8 (real logs of public threads in tests/data/trial/): each a
test that failed on main before the fix, with its counter-example."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from logscan.analysis.runstate import version_token
from logscan.cli import cli

TRIAL = Path(__file__).parent / "data" / "trial"


def _json(*args):
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, json.loads(r.stdout)


def _scan(path):
    return _json("scan", "--format", "json", str(path))[1]["runs"]


# item 4: llama.cpp's GPU backend found no device -> the whole model on the CPU
def test_no_cuda_devices_found_is_a_cpu_fallback_finding_and_platform_cpu():
    (run,) = _scan(TRIAL / "llamacpp-6184b.log")
    assert run["engine"]["platform"] == "CPU" and run["engine"]["platform_evidence"].startswith("line 5")
    (f,) = run["findings"]
    assert f["code"] == "BACKEND_OVERRIDE_IGNORED" and f["line"] == 5
    assert "CUDA will be disabled" in f["evidence"]


def test_a_found_cuda_device_is_no_cpu_fallback(tmp_path):
    log = tmp_path / "found.log"
    log.write_text("ggml_cuda_init: found 1 CUDA devices:\n"
                   "  Device 0: NVIDIA H100 80GB HBM3, compute capability 9.0, VMM: yes\n"
                   "system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CUDA : ARCHS = 900 | CPU : SSE3 = 1\n")
    (run,) = _scan(log)
    assert run["engine"]["platform"] == "CUDA" and run["findings"] == []


def test_a_compiled_cuda_arch_list_after_the_backend_disabled_itself_keeps_the_run_on_cpu(tmp_path):
    log = tmp_path / "disabled.log"
    log.write_text("ggml_cuda_init: failed to initialize CUDA: unknown error\n"
                   "system_info: n_threads = 44 (n_threads_batch = 44) / 88 | CUDA : ARCHS = 520 | CPU : SSE3 = 1\n")
    (run,) = _scan(log)
    assert run["engine"]["platform"] == "CPU", run["engine"]
    assert [f["code"] for f in run["findings"]] == ["BACKEND_OVERRIDE_IGNORED"]


# item 6: one cause, one failure
def test_unsupported_on_arch_folds_no_kernel_seen_and_the_gate_still_fails():
    code, d = _json("gate", "--format", "json", str(TRIAL / "vllm-7240.log"))
    checks = d["gate"]["checks"]
    assert code == 1 and d["gate"]["verdict"] == "fail"
    assert [(c["code"], c["verdict"]) for c in checks] == [("UNSUPPORTED_ON_ARCH", "fail")]
    assert "NO_KERNEL_SEEN folded into it" in checks[0]["message"]


def test_a_run_with_no_kernel_and_no_explaining_finding_still_fails_no_kernel_seen():
    code, d = _json("gate", "--format", "json", str(TRIAL / "v7240-ok.log"))
    assert code == 1
    assert [(c["code"], c["verdict"]) for c in d["gate"]["checks"]] == [("NO_KERNEL_SEEN", "fail")]
    (run,) = d["runs"]
    assert run["config"]["quantization"] == "gptq_marlin"  # vllm.quant.convertible read the vLLM line


# item 8: a version token ends at U+FFFD / a control character
def test_invalid_bytes_after_a_version_do_not_make_a_source_build(tmp_path):
    log = tmp_path / "v050.log"
    log.write_bytes(b"INFO 06-12 10:00:00 api_server.py:149] vLLM API server version 0.5.0\xff\xfe\n")
    (run,) = _scan(log)
    assert run["engine"]["version"] == "0.5.0" and run["engine"]["version_source"] == "logged"


def test_version_token_cuts_at_replacement_and_control_characters_only():
    assert version_token("0.5.0\ufffd\ufffd") == "0.5.0"
    assert version_token("0.6.3\x1b[0m") == "0.6.3"
    assert version_token("\ufffd0.5.0") == ""
    for kept in ("0.5.0", "0.1.dev14910+g20b14095a", "0.6.6.post1", "b4199", "v1.4.0-rc1"):
        assert version_token(kept) == kept
