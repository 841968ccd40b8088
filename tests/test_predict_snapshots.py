"""Snapshots of `logscan ladder`, `matrix` and `explain` output: any change to a gate, a ladder
or the rendering shows up as a reviewable diff (refresh on purpose with --snapshot-update)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import ROOT

CASES = {
    "ladder-vllm-nvfp4-h100": ["ladder", "vllm", "NVFP4", "--gpu", "H100"],
    "ladder-vllm-nvfp4-b200-cuda12.8-flashinfer": ["ladder", "vllm", "NVFP4", "--gpu", "B200", "--cuda", "12.8",
                                                   "--with", "flashinfer"],
    "ladder-vllm-fp8block-rtx5090-json": ["ladder", "vllm", "FP8-BLOCK", "--gpu", "RTX 5090", "--format", "json"],
    "ladder-vllm-w4a8fp8-b200": ["ladder", "vllm", "W4A8-FP8", "--gpu", "B200"],
    "ladder-llamacpp-mxfp4-b300": ["ladder", "llamacpp", "MXFP4", "--gpu", "B300"],
    "matrix-nvfp4-h100": ["matrix", "NVFP4", "--gpu", "H100"],
    "matrix-nvfp4-b200-json": ["matrix", "NVFP4", "--gpu", "B200", "--cuda", "12.8", "--with", "flashinfer",
                               "--format", "json"],
    "matrix-fp8-a100": ["matrix", "FP8", "--gpu", "A100"],
    "explain-marlinnvfp4": ["explain", "MarlinNvFp4LinearKernel"],
    # vLLM's FP8 dense dispatch below the registries (patterns/vllm/dispatch.toml): FP8 Marlin
    # below sm89 up to 0.18.1, CUTLASS FP8 on sm89 only with CUDA >= 12.4
    "ladder-vllm-fp8-a100-0.7.3": ["ladder", "vllm", "FP8", "--gpu", "A100", "--engine-version", "0.7.3"],
    "ladder-vllm-fp8-l4-0.7.3": ["ladder", "vllm", "FP8", "--gpu", "L4", "--engine-version", "0.7.3"],
    "ladder-vllm-fbgemm-a100-0.18.1-json": ["ladder", "vllm", "fbgemm_fp8", "--gpu", "A100", "--engine-version", "0.18.1",
                                            "--format", "json"],
    "matrix-fp8-a100-vllm-0.7.3": ["matrix", "FP8", "--gpu", "A100", "--engine-version", "vllm=0.7.3"],
    "explain-apply-fp8-marlin-linear": ["explain", "apply_fp8_marlin_linear"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_prediction_output_is_pinned(name, snapshot):
    snapshot.snapshot_dir = ROOT / "tests" / "snapshots" / "predict"
    r = CliRunner().invoke(cli, CASES[name])
    assert r.exit_code == 0, r.output
    snapshot.assert_match(r.output, f"{name}.{'json' if 'json' in name else 'txt'}")
