"""The run's ``config`` from vLLM's own words: parallelism beyond TP, vLLM 0.5's argument dump,
'Starting to load model X' (``patterns/vllm/rules/60-run.toml``, ``analysis/runstate.py``).

Before, ``pipeline_parallel_size`` / ``data_parallel_size`` of the config line and
``'enable_expert_parallel': True`` of the non-default args were dropped, vLLM 0.5's
``args: Namespace(model=...)`` was not read, and 'Starting to load model X' named no model:
vllm-180 (0.5.5) and five other bundled logs had no ``model=`` at all.
"""
from __future__ import annotations

import pytest

from logscan.formats import text
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _one_run(path):
    report = scan_inputs([str(path)])
    assert len(report.runs) == 1, [(r.first_line, r.last_line) for r in report.runs]
    return report, report.runs[0]


def test_vllm_05_namespace_args_name_the_model():
    report, run = _one_run(FIXTURES / "vllm" / "vllm-180.log")
    assert run.config.model == "TheBloke/sqlcoder2-GPTQ"
    assert run.config.dtype is None  # the dump's dtype='auto' is no dtype
    assert "config   model=TheBloke/sqlcoder2-GPTQ" in text.render(report)


@pytest.mark.parametrize("log,model", [("vllm-011", "/home/user/.xinference/cache/v2/Qwen3-Next-Instruct-fp4-80b-fp4"),
                                       ("vllm-121", "openai/gpt-oss-20b"),
                                       ("vllm-135", "/workspace/Qwen2.5-VL-7B-Instruct-20250829-quantized.w8a8")])
def test_starting_to_load_model_names_the_model(log, model):
    # vllm-121: the line is inside the run; vllm-011 / vllm-135: before the run's first read line
    _, run = _one_run(FIXTURES / "vllm" / f"{log}.log")
    assert run.config.model == model  # no trailing '...'


def test_expert_parallel_of_the_non_default_args_is_in_the_config_line():
    report, run = _one_run(FIXTURES / "vllm" / "vllm-197.log")
    assert run.config.extra.get("ep") == "on" and "pp" not in run.config.extra  # pp=1, dp=1: defaults
    assert "tp=2 ep=on" in text.render(report)


def test_pipeline_and_data_parallel_sizes_of_the_config_line(tmp_path):
    real = (FIXTURES / "vllm" / "vllm-197.log").read_text()
    assert "pipeline_parallel_size=1, data_parallel_size=1" in real
    log = tmp_path / "pp2-dp2.log"
    log.write_text(real.replace("pipeline_parallel_size=1, data_parallel_size=1",
                                "pipeline_parallel_size=2, data_parallel_size=4"))
    report, run = _one_run(log)
    assert (run.config.extra.get("pp"), run.config.extra.get("dp")) == ("2", "4")
    assert "tp=2 pp=2 dp=4 ep=on" in text.render(report)


LOAD = "(EngineCore_DP0 pid=203469) INFO 11-17 19:59:47 [gpu_model_runner.py:2602] Starting to load model {}..."


@pytest.mark.parametrize("again,runs", [("/workspace/Qwen2.5-VL-7B-Instruct-20250829-quantized.w8a8", 1),
                                        ("Qwen2.5-VL-7B-Instruct-20250829-quantized.w8a8", 1),
                                        ("/workspace/Llama-3.1-8B-Instruct-FP8", 2)])
def test_a_model_named_twice_the_same_way_does_not_split_the_run(tmp_path, again, runs):
    """vllm-135 names its model on line 4 (before the run's first read line); the same line again
    inside the run, in the same spelling or another spelling of that model, is one start; another
    model is another start (analysis/newstart.py), so the test can fail both ways."""
    lines = (FIXTURES / "vllm" / "vllm-135.log").read_text().splitlines()
    lines.insert(7, LOAD.format(again))
    log = tmp_path / "twice.log"
    log.write_text("\n".join(lines) + "\n")
    report = scan_inputs([str(log)])
    assert len(report.runs) == runs, [(r.first_line, r.last_line, r.config.model) for r in report.runs]
    assert report.runs[0].config.model == "/workspace/Qwen2.5-VL-7B-Instruct-20250829-quantized.w8a8"
