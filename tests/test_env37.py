"""The reporter's environment block as release and GPU evidence (env37): real bundled logs.

``version_reported`` (patterns/*/rules: vllm.env.*, vllm.config.docker-image-command's image tag,
sglang.env.version / image-tag, lmdeploy.version.check-env, trtllm.env.version): below a logged
banner, above the era inference; disagreeing era hints are named.
"""
from __future__ import annotations

from pathlib import Path

import logscan

FIX = Path(__file__).resolve().parents[1] / "fixtures"


def _engine(rel: str, lines=None):
    rep = logscan.scan([x + "\n" for x in lines]) if lines is not None else logscan.scan(str(FIX / rel))
    return rep.runs[0]


def test_collect_env_aligned_sets_release_gpu_and_engine():
    run = _engine("vllm/vllm-368.log")  # vllm#45101: 'vLLM Version                 : 0.22.0'
    e = run.engine
    assert (e.name, e.version, e.version_source, e.ladder_version) == ("vllm", "0.22.0", "reported", "0.22.0")
    assert "not the engine's banner" in e.version_evidence
    assert run.config.gpu == "NVIDIA RTX PRO 6000 Blackwell Server Edition"


def test_template_bullet_beats_era_inference():
    e = _engine("vllm/vllm-395.log").engine  # '- vLLM **v0.25.1** (also reproduced on a current nightly)'
    assert (e.version, e.version_source, e.release_range) == ("0.25.1", "reported", None)


def test_docker_image_tag_and_plain_version_line():
    assert _engine("vllm/vllm-251.log").engine.version == "0.6.0"  # vllm/vllm-openai:v0.6.0
    e = _engine("vllm/vllm-369.log").engine  # 'vLLM version: 0.28.0+cpu (official prebuilt CPU wheel ...'
    assert (e.version, e.version_source, e.ladder_version) == ("0.28.0+cpu", "reported", "0.28.0")


def test_nightly_or_latest_tag_names_no_release():
    # vllm-265: vllm/vllm-openai:nightly-<sha> (its banner logs the dev build); vllm-297: :latest
    assert _engine("vllm/vllm-265.log").engine.version_source == "logged"
    assert _engine("vllm/vllm-297.log").engine.version_source == "unknown"


def test_check_env_release_disagreeing_era_hints_are_named():
    e = _engine("sglang/sglang-305.log").engine
    assert e.version_source == "reported"
    assert "era hints disagree" in e.version_evidence


def test_banner_wins_over_environment_block():
    lines = ["vLLM Version: 0.6.3.post1",
             "INFO 10-20 10:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.2) with config: model=x"]
    e = _engine(None, lines).engine
    assert (e.version, e.version_source) == ("0.6.2", "logged")


def test_works_on_sentence_is_not_the_runs_release():
    lines = ["vLLM Build Flags:", "vLLM version: 0.8.4 works, 0.9.0 fails",
             "INFO 10-20 10:00:00 fp8.py:10] Using Marlin kernel for FP8"]
    assert _engine(None, lines).engine.version_source != "reported"


def test_dev_build_is_read_before_the_release_it_precedes():
    lines = ["vLLM Version: 0.10.2.dev123+g1234abcd", "vLLM Build Flags:",
             "INFO 10-20 10:00:00 fp8.py:10] Using Marlin kernel for FP8"]
    e = _engine(None, lines).engine
    assert e.version_source == "reported" and "development build before 0.10.2" in e.version_evidence
    assert e.ladder_version is None or e.ladder_version < "0.10.2"


def test_collect_env_gpu_on_the_header_line():
    # older collect_env puts a single GPU on its header's line (vllm#13497's shape); the release
    # is said by 'vLLM Version:' further down the same block
    lines = ["GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090",
             "Nvidia driver version: 535.183.01", "vLLM Version: 0.7.2", "vLLM Build Flags:"]
    run = _engine(None, lines)
    assert run.config.gpu == "NVIDIA GeForce RTX 4090"
    assert (run.engine.name, run.engine.version, run.engine.version_source) == ("vllm", "0.7.2", "reported")


def test_pip_lines_of_lmdeploy_and_sglang_are_reported_releases():
    # real logs (lmdeploy-148, sglang-270) with the reporter's pip line above them
    lm = (FIX / "lmdeploy" / "lmdeploy-148.log").read_text(encoding="utf-8").splitlines()
    e = _engine(None, ["lmdeploy                 0.7.3"] + lm).engine
    assert (e.name, e.version, e.version_source) == ("lmdeploy", "0.7.3", "reported")
    sg = (FIX / "sglang" / "sglang-270.log").read_text(encoding="utf-8").splitlines()
    assert _engine(None, ["sglang==0.4.6.post1"] + sg).engine.version_source == "reported"
    # 'pip install sglang==X' is a command, not the installed release: no release is taken from it
    assert _engine(None, ["pip install sglang==0.4.6.post1"] + sg).engine.version_source != "reported"
