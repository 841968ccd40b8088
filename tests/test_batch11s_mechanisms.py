"""Corpus batch 11s (docs/corpus.md): the general mechanisms its first sight showed missing, each
on the real logs (fixtures/sglang/sglang-286..300) with a counter-example that must stay as it was.

- a launch command's ``--fp4-gemm-backend`` / ``--fp8-gemm-backend`` is read as the ServerArgs
  field it sets (pack ``[pack.cli] names``), so the inferred dense GEMM follows the request
  instead of claiming the flag is "not in the log" and taking the auto ladder (sglang-295);
- check_env on a ROCm build ('ROCM available: True', 'GPU 0,...: AMD Instinct MI300X VF') gives
  the GPU and the ROCm platform (sglang-294);
- 'prefill=0.00, decode=0.00' in the start-up timings line is no per-role backend (sglang-293).
"""
from __future__ import annotations

from pathlib import Path

from logscan.analysis.cli_args import arguments
from logscan.packs.loader import default_packs
from tests.conftest import scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "sglang"
CLI = default_packs().packs["sglang"].meta.pack.cli


def _one(path: Path) -> dict:
    (run,) = scan_json(path)["runs"]
    return run


def _rules(path: Path) -> set[str]:
    return {e["rule"] for e in scan_json(path)["events"]}


def test_gemm_backend_flags_parse_to_their_server_args_fields():
    got = dict(arguments("--quantization modelopt_fp4 --fp4-gemm-backend flashinfer_cutlass "
                         "--fp8-gemm-backend deep_gemm", CLI))
    assert got["fp4_gemm_runner_backend"] == "flashinfer_cutlass"
    assert got["fp8_gemm_runner_backend"] == "deep_gemm"


def test_a_commands_fp4_gemm_backend_is_the_inferences_input_not_the_auto_default():
    # sglang-295: '--quantization modelopt_fp4 ... --fp4-gemm-backend flashinfer_cutlass' and
    # check_env's 'Compute Capability: 12.0', no server_args dump
    run = _one(FIX / "sglang-295.log")
    assert run["config"]["extra"]["fp4_gemm_runner_backend"] == "flashinfer_cutlass"
    (sel,) = run["selections"]
    assert sel["observed"] is False and sel["kernel"] == "FlashInfer mm_fp4 (cutlass)"
    assert "asked on the launch command" in sel["reasoning"]
    assert "not in the log" not in sel["reasoning"]
    assert sel["evidence"].startswith("launch command fp4_gemm_runner_backend=flashinfer_cutlass")


def test_a_commands_marlin_request_is_inferred_weight_only_not_the_native_auto_pick(tmp_path):
    # the same command shape asking for FP4 Marlin on sm120: before, the auto ladder's native
    # FlashInfer pick was reported; the request gives the weight-only kernel and its finding
    text = (FIX / "sglang-295.log").read_text().replace("flashinfer_cutlass", "marlin")
    run = _one(write_log(tmp_path, text))
    (sel,) = run["selections"]
    assert "Marlin" in sel["kernel"] and sel["cost_class"] == "weight_only"
    assert [f["code"] for f in run["findings"]] == ["WEIGHT_ONLY_SUBSTITUTION"]


def test_without_a_gemm_backend_flag_the_inference_still_says_default_auto(tmp_path):
    text = "".join(l for l in (FIX / "sglang-295.log").read_text().splitlines(True)
                   if "--fp4-gemm-backend" not in l)
    run = _one(write_log(tmp_path, text))
    assert "fp4_gemm_runner_backend" not in run["config"]["extra"]
    (sel,) = run["selections"]
    assert "fp4_gemm_runner_backend not in the log (default auto)" in sel["reasoning"]


def test_rocm_check_env_gives_the_amd_gpu_and_the_rocm_platform():
    # sglang-294: 'ROCM available: True' / 'GPU 0,1,2,3,4,5,6,7: AMD Instinct MI300X VF'
    run = _one(FIX / "sglang-294.log")
    assert run["config"]["gpu"] == "AMD Instinct MI300X VF"
    assert run["engine"]["platform"] == "ROCM"
    assert run["engine"]["version"] == "0.5.18"
    assert run["findings"] == []  # 'Module Not Found' rows are inventory


def test_cuda_check_env_stays_cuda():
    # sglang-295: 'CUDA available: True' / 'GPU 0,...: NVIDIA RTX 6000D'
    run = _one(FIX / "sglang-295.log")
    assert run["engine"]["platform"] == "CUDA"


def test_startup_timings_are_no_per_role_backends():
    # sglang-293: 'Engine startup timings (s): ... cuda_graph={prefill=0.00, decode=0.00, ...}'
    assert "sglang.grammar.role-backends" not in _rules(FIX / "sglang-293.log")


def test_named_per_role_backends_are_still_read(tmp_path):
    p = write_log(tmp_path, "[2026-11-29 10:00:00 TP0] Set DSA backends for GLM FP8 KV Cache on "
                  "SM120/SM121: prefill=flashinfer, decode=flashinfer.\n")
    assert "sglang.grammar.role-backends" in {e["rule"] for e in scan_json(p)["events"]}


def test_a_followed_pipe_with_a_descriptor_above_fd_setsize_is_read():
    # the batch's 15 logs made the test process hold more than 1024 descriptors when the pipe
    # test ran: select() refused the pipe ('filedescriptor out of range'); poll() has no bound
    import os
    import resource

    import pytest

    from logscan.follow.pipe import StreamTail

    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 1200:
        pytest.skip("the descriptor limit is below 1200: no descriptor above FD_SETSIZE can be opened")
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        r, w = os.pipe()
        assert r >= 1024
        os.write(w, b"[2026-08-06 02:49:32] Scheduler hit an exception: x\nlast\n")
        os.close(w)
        t = StreamTail(r)
        assert [line for line, _ in t.poll()] == [b"[2026-08-06 02:49:32] Scheduler hit an exception: x", b"last"]
        assert t.eof
        os.close(r)
    finally:
        for fd in held:
            os.close(fd)
