"""The negative corpus (``fixtures/other/``): real logs of neighbouring tools that use the serving
engines' vocabulary but run none of logscan's seven engines (auto_gptq, GPTQModel, bitsandbytes,
llm-compressor, ModelOpt, TransformerEngine, flash-attention / xformers, torch inductor's Triton
under ComfyUI, torchao; docs/corpus.md, negative10).

A false finding fails someone's CI, and users pipe such logs through logscan by mistake or because
a serving container also runs those tools. Right on these logs is: no engine named (``unknown`` or
no run), no kernel selection, no finding outside the label's ``optional_findings``, and no remedy
that tells the user to fix an engine that did not run.
"""
from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, scan_json

ENGINES = {"vllm", "sglang", "trtllm", "llamacpp", "tgi", "lmdeploy", "mlc-llm"}
OTHER = sorted((FIXTURES / "other").glob("*.log"))


def test_the_negative_corpus_is_bundled():
    assert len(OTHER) >= 14
    for log in OTHER:
        label = json.loads(log.with_suffix(".label.json").read_text(encoding="utf-8"))
        assert label["engine"] is None and label["kernels_logged"] == [] and label["expected_findings"] == [], log


@pytest.mark.parametrize("log", OTHER, ids=lambda p: p.stem)
def test_no_engine_no_kernel_no_false_finding(log):
    label = json.loads(log.with_suffix(".label.json").read_text(encoding="utf-8"))
    doc = scan_json(log)
    optional = set(label.get("optional_findings") or [])
    for run in doc["runs"]:
        assert run["engine"]["name"] not in ENGINES, (log.stem, run["engine"]["name"])
        assert run["selections"] == [], log.stem
        assert {f["code"] for f in run["findings"]} <= optional, log.stem


@pytest.mark.parametrize("log", OTHER, ids=lambda p: p.stem)
def test_no_engine_remedy_on_a_run_no_line_ties_to_an_engine(log):
    """other-108: xformers' FlashAttention-3 'no kernel image' is read by SGLang's arch rule; its
    remedy ('Use a torch / sgl-kernel / flashinfer build ...') spoke of SGLang's packages on a run
    that is ``unknown`` (``trust.remedy_applies``)."""
    for run in scan_json(log)["runs"]:
        if run["engine"]["name"] == "unknown":
            assert [f["remedy"] for f in run["findings"] if f["remedy"]] == [], log.stem


def test_other_108_keeps_its_finding_but_not_sglangs_remedy():
    doc = scan_json(FIXTURES / "other" / "other-108.log")
    [run] = doc["runs"]
    [f] = run["findings"]
    assert (f["code"], f["rule"], f["remedy"]) == ("UNSUPPORTED_ON_ARCH", "sglang.arch.no-kernel-image", None)


# -- ggml's lines in another ggml program's log (negative10-2: whisper.cpp, stable-diffusion.cpp) ----
GGML_HOSTS = ["other-118", "other-119", "other-120", "other-123"]


@pytest.mark.parametrize("stem", GGML_HOSTS)
def test_ggml_lines_of_whisper_or_stable_diffusion_name_no_engine(stem):
    """ggml_cuda_init / a ggml-cuda.cu path named llama.cpp on these four at first sight; a
    whisper.cpp or stable-diffusion.cpp line of the same log makes them the library's lines."""
    for run in scan_json(FIXTURES / "other" / f"{stem}.log")["runs"]:
        assert run["engine"]["name"] == "unknown", (stem, run["engine"]["identified_by"])


def _engines(tmp_path, lines):
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [r["engine"]["name"] for r in scan_json(path)["runs"]]


def test_a_host_line_after_the_ggml_lines_takes_the_name_back(tmp_path):
    """Order does not matter: other-118's ggml device lines first (they name llama.cpp alone),
    then its whisper.cpp lines."""
    lines = (FIXTURES / "other" / "other-118.log").read_text(encoding="utf-8").splitlines()
    ggml = [ln for ln in lines if ln.startswith(("ggml_cuda_init", "  Device"))]
    whisper = [ln for ln in lines if ln.startswith("whisper_")]
    assert _engines(tmp_path, ggml) == ["llamacpp"]
    assert _engines(tmp_path, ggml + whisper) == ["unknown"]


def test_llama_cpps_own_lines_still_name_it_beside_ggmls(tmp_path):
    """A llama.cpp log is ggml's lines and llama.cpp's own (llama_model_loader): a host line of
    another program does not take back a name llama.cpp's own text gave."""
    llama = next(p for p in sorted((FIXTURES / "llamacpp").glob("*.log"))
                 if "llama_model_loader:" in p.read_text(encoding="utf-8", errors="replace")
                 and "ggml_cuda_init" in p.read_text(encoding="utf-8", errors="replace"))
    lines = llama.read_text(encoding="utf-8", errors="replace").splitlines()
    assert set(_engines(tmp_path, lines)) == {"llamacpp"}
    own = [ln for ln in lines if "llama_model_loader:" in ln][:3]
    assert _engines(tmp_path, own + ["whisper_model_load: loading model"]) == ["llamacpp"]


# -- a failed start is an engine's (negative10-3; other-119 / 120 once their engine was unknown) --------
UNCLAIMED = ["other-119", "other-120", "other-125", "other-128"]


@pytest.mark.parametrize("log", OTHER, ids=lambda p: p.stem)
def test_no_start_failure_where_no_engine_ran(log):
    for run in scan_json(log)["runs"]:
        assert run.get("start_failure") is None and run.get("serving_failure") is None, log.stem


@pytest.mark.parametrize("stem", UNCLAIMED)
def test_the_unclaimed_failure_is_said_not_gated(stem):
    """FlashInfer's ninja CalledProcessError, Aphrodite's traceback and ggml's 'CUDA error' aborts
    were START_FAILED of runs no line ties to an engine: the report says so in the engine's
    ``identified_by``, and ``--fail-on START_FAILED`` passes."""
    from click.testing import CliRunner

    from logscan.cli import cli

    [run] = scan_json(FIXTURES / "other" / f"{stem}.log")["runs"]
    assert run["engine"]["name"] == "unknown"
    assert "is not reported as START_FAILED" in run["engine"]["identified_by"]
    r = CliRunner().invoke(cli, ["scan", "--fail-on", "START_FAILED", str(FIXTURES / "other" / f"{stem}.log")])
    assert r.exit_code == 0, r.output
