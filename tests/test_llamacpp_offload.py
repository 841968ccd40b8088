"""llama.cpp's 'offloaded k/N layers to GPU' (src/llama-model.cpp load_tensors, older
llm_load_tensors): 0/N puts the whole model on the CPU although a GPU backend is there
(patterns/llamacpp/rules/10-device.toml `llamacpp.offload.none`, docs/cpu-offload.md).

On the real logs of llama.cpp#6787 (H800) and QwenLM/Qwen3#196 (RTX 2080 Ti), and on the
issue #16 trial probe (#6787 with the loader's quant-type lines before it), where the old code
inferred a native MMQ kernel and `logscan gate` passed."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES, scan_json, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "llamacpp"

#: the GGUF loader's lines that name the checkpoint's quant types (llama_model_loader type
#: counts, llm_load_print_meta ftype), as the trial probe put them before the #6787 paste
LOADER = ("llama_model_loader: - type  f32:   65 tensors\n"
          "llama_model_loader: - type q4_K:  193 tensors\n"
          "llama_model_loader: - type q6_K:   33 tensors\n"
          "llm_load_print_meta: model ftype      = Q4_K - Medium\n")


def _probe(tmp_path: Path, offloaded: str = "0/33") -> Path:
    text = (FIX / "llamacpp-160.log").read_text(encoding="utf-8")
    assert "offloaded 0/33 layers to GPU" in text
    return write_log(tmp_path, LOADER + text.replace("offloaded 0/33", f"offloaded {offloaded}"))


def _gate(path: Path):
    return CliRunner().invoke(cli, ["gate", str(path)], catch_exceptions=False)


@pytest.mark.parametrize("name, total", [("llamacpp-160", "33"), ("llamacpp-161", "41")])
def test_no_layer_offloaded_is_a_cpu_run_with_a_finding(name, total):
    (run,) = scan_json(FIX / f"{name}.log")["runs"]
    assert run["config"]["gpu"].startswith("NVIDIA")  # ggml_cuda_init found the device ...
    assert run["engine"]["platform"] == "CPU"  # ... and the layers still run on the CPU
    assert run["config"]["extra"]["offloaded_layers"] == f"0/{total}"
    (f,) = [f for f in run["findings"] if f["rule"] == "llamacpp.offload.none"]
    assert f["code"] == "BACKEND_OVERRIDE_IGNORED" and "layers to GPU" in f["evidence"]
    assert "-ngl" in f["remedy"]


def test_no_gpu_kernel_is_inferred_when_every_layer_is_on_the_cpu(tmp_path):
    (run,) = scan_json(_probe(tmp_path))["runs"]
    assert run["config"]["quantization"] == "Q4_K - Medium"
    assert run["selections"] == []  # the old code inferred 'MMQ ampere config ... native'
    assert "BACKEND_OVERRIDE_IGNORED" in {f["code"] for f in run["findings"]}
    r = _gate(_probe(tmp_path))
    assert r.exit_code == 1, r.stdout  # the old code passed this log
    assert "Gate: FAIL" in r.stdout and "NO_KERNEL_SEEN" in r.stdout


def test_a_partial_offload_is_a_fact_and_keeps_the_gpu_walk(tmp_path):
    # 20 of 33 on the GPU: what -ngl 20 asks for; the offloaded layers run the GPU kernels
    (run,) = scan_json(_probe(tmp_path, "20/33"))["runs"]
    assert run["config"]["extra"]["offloaded_layers"] == "20/33"
    assert run["engine"]["platform"] == "CUDA"
    assert not [f for f in run["findings"] if f["rule"].startswith("llamacpp.offload")]
    # #6787's build prints 'CUDA_USE_TENSOR_CORES: yes': it ran cuBLAS above a batch of 32, not the
    # shipped ladder's MMQ at every batch (tests/test_llamacpp_devices.py), so its walk is skipped for that
    assert "CUDA_USE_TENSOR_CORES" in run["config"]["extra"]["walk_skipped"]
    text = _probe(tmp_path, "20/33").read_text(encoding="utf-8").replace("ggml_cuda_init: CUDA_USE_TENSOR_CORES: yes\n", "")
    (run,) = scan_json(write_log(tmp_path, text))["runs"]  # without it: the inferred MMQ rung stays
    assert [s["kernel"] for s in run["selections"] if not s["observed"]]


def test_the_offload_line_of_other_releases_is_read(tmp_path):
    # llama.cpp mid-2023 (llama_model_load_internal, #1956) and 2025+ (load_tensors, timestamped)
    for line in ("llama_model_load_internal: offloaded 0/35 layers to GPU",
                 "0.03.232.050 I load_tensors: offloaded 0/66 layers to GPU"):
        p = write_log(tmp_path, "ggml_cuda_init: found 1 CUDA devices:\n"
                                "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n" + line + "\n")
        (run,) = scan_json(p)["runs"]
        assert run["engine"]["platform"] == "CPU", line
        assert "BACKEND_OVERRIDE_IGNORED" in {f["code"] for f in run["findings"]}, line


@pytest.mark.parametrize("device", [
    "",  # no device line in the window: the count alone says where the layers are
    "ggml_cuda_init: found 1 ROCm devices:\n  Device 0: AMD Radeon RX 7900 XTX, compute capability 11.0, VMM: no\n",
    "ggml_vulkan: Found 1 Vulkan devices:\n",
])
def test_no_layer_offloaded_needs_no_cuda_device_line(tmp_path, device):
    text = (FIX / "llamacpp-161.log").read_text(encoding="utf-8").splitlines(keepends=True)
    tail = "".join(l for l in text if not l.startswith(("ggml_cuda_init", "  Device")))
    (run,) = scan_json(write_log(tmp_path, LOADER + device + tail))["runs"]
    assert run["engine"]["platform"] == "CPU"
    assert run["selections"] == []
    assert "BACKEND_OVERRIDE_IGNORED" in {f["code"] for f in run["findings"]}


def test_the_walk_needs_the_log_to_name_the_platform_not_only_a_gpu_flag(tmp_path):
    """New-user trial: 'gate --gpu "RTX 4090"' on llamacpp-106 (a real Q6_K load whose window has no
    device or offload line) PASSED on an inferred 'MMQ ampere config ... native': a CPU or Vulkan
    build on that machine runs no MMQ kernel. With ggml_cuda_init's device lines (real ones, from a
    CUDA start) in front, the CUDA backend is the log's word and the walk stays."""
    import json
    from click.testing import CliRunner
    from logscan.cli import cli
    src = FIXTURES / "llamacpp" / "llamacpp-106.log"
    out = CliRunner().invoke(cli, ["scan", "--format", "json", "--gpu", "RTX 4090", str(src)]).stdout
    run = json.loads(out)["runs"][0]
    assert run["selections"] == [] and "names no platform" in run["config"]["extra"]["walk_skipped"]
    cuda = tmp_path / "cuda.log"
    cuda.write_text("ggml_cuda_init: found 1 CUDA devices:\n"
                    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n" + src.read_text())
    run = json.loads(CliRunner().invoke(cli, ["scan", "--format", "json", "--gpu", "RTX 4090", str(cuda)]).stdout)["runs"][0]
    assert run["engine"]["platform"] == "CUDA"
    assert [s["kernel"] for s in run["selections"]] and "walk_skipped" not in run["config"]["extra"]


def test_a_second_line_stating_the_same_code_is_named_in_the_finding_not_lost(tmp_path):
    """New-user trial: 'offloaded 0/28 layers to GPU' after llamacpp-106's 'flash_attn ... forcing off'
    (both BACKEND_OVERRIDE_IGNORED, one finding per code) left no trace of the CPU offload."""
    src = (FIXTURES / "llamacpp" / "llamacpp-106.log").read_text()
    p = write_log(tmp_path, src + "llm_load_tensors: offloaded 0/28 layers to GPU\n")
    (f,) = scan_json(p)["runs"][0]["findings"]
    assert f["code"] == "BACKEND_OVERRIDE_IGNORED" and "forcing off" in f["evidence"]
    assert f"also line {src.count(chr(10)) + 1}: llm_load_tensors: offloaded 0/28 layers to GPU" in f["reasons"]
