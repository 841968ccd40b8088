"""vLLM FlashInfer's resolved dtypes line: the KV-cache dtype in effect and the GPU's arch (task cands13).

"FlashInfer resolved query dtypes: prefill=%s, decode=%s, decode_backend=%s, kv_cache_dtype=%s, arch=%s"
(v1/attention/backends/flashinfer.py FlashInferMetadataBuilder.__init__, 0.26.0 ->) was 'Not understood'
while the report said 'kv cache requested fp8, in effect: no line says'. Rule vllm.kv.flashinfer-resolved
reads the KV dtype in effect and ``arch=smNN`` as the compute capability of the run's GPU, which
``scan --gpu`` is checked against (GPU_CONTRADICTS_LOG, ``statements.stated_capability``).

The sm90 line is a real H100 log's (vLLM 0.26-era, xqa decode, FP8 KV); the sm121 one is from a DGX
Spark 0.27.2rc1 note; the sm86 one is the template filled as a new-user trial saw it.
"""
from __future__ import annotations

import pytest

from logscan.api import scan

_HEAD = ("(APIServer pid=1) INFO 07-30 07:05:00 [api_server.py:1900] vLLM API server version 0.26.0\n"
         "(APIServer pid=1) INFO 07-30 07:05:01 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', "
         "'kv_cache_dtype': '%s'}\n")
_SM90 = ("(EngineCore pid=79) INFO 07-30 07:10:58 [flashinfer.py:822] FlashInfer resolved query dtypes: "
         "prefill=torch.float8_e4m3fn, decode=torch.float16, decode_backend=xqa, kv_cache_dtype=torch.float8_e4m3fn, "
         "arch=sm90\n")
_SM121 = ("INFO [flashinfer.py:890] FlashInfer resolved query dtypes: prefill=bfloat16, decode=bfloat16, "
          "decode_backend=xqa, kv_cache_dtype=torch.float8_e4m3fn, arch=sm121\n")
_SM86_BF16 = ("(EngineCore pid=79) INFO 07-30 07:10:58 [flashinfer.py:822] FlashInfer resolved query dtypes: "
              "prefill=torch.bfloat16, decode=torch.bfloat16, decode_backend=fa2, kv_cache_dtype=torch.bfloat16, "
              "arch=sm86\n")


def _run(text: str, gpu=None):
    report = scan(text.splitlines(keepends=True), gpu=gpu)
    (run,) = report.runs
    return run


def _codes(run) -> set[str]:
    return {f.code for f in run.findings}


@pytest.mark.parametrize("line,cc", [(_SM90, "90"), (_SM121, "121"), (_SM86_BF16, "86")])
def test_the_line_is_read(line, cc):
    run = _run(_HEAD % "auto" + line)
    assert run.kv_cache is not None and run.kv_cache.in_effect_line == 3
    assert run.config.compute_capability == cc
    assert not run.unexplained  # no longer 'Not understood'


def test_fp8_asked_and_in_effect():
    run = _run(_HEAD % "fp8" + _SM90)
    assert run.kv_cache.requested == "fp8" and run.kv_cache.in_effect == "torch.float8_e4m3fn"
    assert "KV_CACHE_DTYPE_FALLBACK" not in _codes(run)


def test_fp8_asked_bf16_in_effect_is_a_fallback():
    run = _run(_HEAD % "fp8" + _SM86_BF16)
    assert "KV_CACHE_DTYPE_FALLBACK" in _codes(run)


@pytest.mark.parametrize("line,gpu", [(_SM90, "A100"), (_SM90, "B200"), (_SM86_BF16, "H100"), (_SM121, "B200")])
def test_an_arch_other_than_the_given_gpu_contradicts_it(line, gpu):
    run = _run(_HEAD % "auto" + line, gpu=gpu)
    (f,) = [f for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]
    assert f.line == 3 and f.inferred and f"--gpu {gpu}" in f.title


@pytest.mark.parametrize("line,gpu", [(_SM90, "H100"), (_SM90, "H200"), (_SM86_BF16, "A10"),
                                      (_SM86_BF16, "RTX 3090"), (_SM121, "GB10")])
def test_the_same_arch_is_no_contradiction(line, gpu):
    assert "GPU_CONTRADICTS_LOG" not in _codes(_run(_HEAD % "auto" + line, gpu=gpu))


def test_no_gpu_given_the_arch_is_the_machine():
    # no --gpu: the log's own arch is the machine the run is judged on, never a contradiction
    run = _run(_HEAD % "auto" + _SM90)
    assert "GPU_CONTRADICTS_LOG" not in _codes(run)
