"""``--env`` in planning questions (trial 38): a disabling switch is read as ``scan`` reads it,
and a name no rung reads is said, never silently echoed.

Fact (vLLM vllm/model_executor/kernels/linear/__init__.py, 0.2x-0.33: ``if kernel.__name__ in
envs.VLLM_DISABLED_KERNELS`` skips the class before its gate; vllm/envs.py: comma-separated list).
"""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.analysis.run_checks import disabled_kernels
from logscan.analysis.switches import env_disabled, listed_kernels
from logscan.cli import cli

OFF = "VLLM_DISABLED_KERNELS=CutlassFP8ScaledMMLinearKernel"
H100 = ["--gpu", "H100", "--cuda", "12.8"]


def _json(args):
    r = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_trial38_ladder_disabled_kernel_fails_with_the_switch_and_the_next_rung_is_predicted():
    base = _json(["ladder", "vllm", "FP8", *H100])
    assert base["predicted"] == "CutlassFP8ScaledMMLinearKernel"  # the test can fail: without the switch
    w = _json(["ladder", "vllm", "FP8", *H100, "--env", OFF])
    cut = next(r for r in w["rungs"] if r["kernel"] == "CutlassFP8ScaledMMLinearKernel")
    assert cut["verdict"] == "fails" and not cut["predicted"]
    assert any(t["verdict"] == "fails" and "VLLM_DISABLED_KERNELS" in t["source"] for t in cut["terms"])
    assert not cut["needs"]  # a disabled rung is not "made to pass" by setting the switch to its own value
    assert w["predicted"] != "CutlassFP8ScaledMMLinearKernel"
    assert all(o["kernel"] != "CutlassFP8ScaledMMLinearKernel" for o in w["outcomes"])
    text = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", *H100, "--env", OFF]).output
    assert "=> 2/7   CutlassFP8ScaledMMLinearKernel" not in text
    assert "   2/7   CutlassFP8ScaledMMLinearKernel           native          fails" in text


def test_trial38_matrix_is_not_certain_of_a_disabled_kernel():
    m = _json(["matrix", "FP8", *H100, "--env", OFF])
    row = next(r for r in m["rows"] if r["engine"] == "vllm")
    assert row["executes"] != "CutlassFP8ScaledMMLinearKernel"
    other = next(r for r in m["rows"] if r["engine"] == "sglang")
    assert "VLLM_DISABLED_KERNELS: not read by any rung" in other["note"]


def test_an_env_name_no_rung_reads_is_said_not_echoed():
    w = _json(["ladder", "vllm", "FP8", *H100, "--env", "VLLM_NO_SUCH_SWITCH=1"])
    assert any(n.startswith("--env VLLM_NO_SUCH_SWITCH: not read by any rung") for n in w["notes"])
    # a switch a rung's gate reads is not flagged
    w = _json(["ladder", "vllm", "FP8", *H100, "--env", "VLLM_BATCH_INVARIANT=1"])
    assert not any("VLLM_BATCH_INVARIANT" in n for n in w["notes"])
    text = CliRunner().invoke(cli, ["ladder", "vllm", "FP8", *H100, "--env", "VLLM_NO_SUCH_SWITCH=1"]).output
    assert "not read by any rung" in text


def test_scan_and_plan_read_the_switch_alike():
    class _Cfg:
        extra = {"disabled_kernels": "A,B", "disabled_kernels_switch": "VLLM_DISABLED_KERNELS"}

    class _Run:
        config = _Cfg()

    assert disabled_kernels(_Run()) == listed_kernels("A,B", "VLLM_DISABLED_KERNELS")
    assert env_disabled("vllm", {"VLLM_DISABLED_KERNELS": "A, B"}) == {"A": "VLLM_DISABLED_KERNELS",
                                                                       "B": "VLLM_DISABLED_KERNELS"}
    assert env_disabled("sglang", {"VLLM_DISABLED_KERNELS": "A"}) == {}


def test_trial38_trtllm_nvfp4_default_backend_is_not_a_doubled_word():
    # TRT-LLM llm_args.py Nvfp4GemmConfig.allowed_backends: unset it is the literal "default"
    out = CliRunner().invoke(cli, ["ladder", "trtllm", "NVFP4", "--gpu", "RTX 5090"]).output
    assert "nvfp4_gemm_config.allowed_backends" in out
    assert "default default" not in out and "default (default)" not in out
    assert '(unset: "default")' in out
