"""A start marker printed by a child process of the run's own start continues that start (docs/run-splitting.md
rule 1, ``boundary.child_start``). vLLM V1's API server prints its banner and resolves the config, stating choices
on the way ('FA4 not available, forcing TRITON_ATTN backend'), then forks the engine core, whose 'Initializing a V1
LLM engine (v0.25.1) with config:' is the same start: vllm-365, -367, -353, -356 (and -357..-363) were two runs each.
Another model, another release or a role the run already heard under another pid still split.
"""
from __future__ import annotations

import pytest

from tests.conftest import runs_of, write_log, FIXTURES

API = ("(APIServer pid=40298) INFO 08-02 10:27:03 [api_utils.py:339]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.25.1\n"
       "(APIServer pid=40298) INFO 08-02 10:27:03 [api_utils.py:339]   █▄█▀ █     █     █     █  model   org/M-NVFP4\n"
       "(APIServer pid=40298) INFO 08-02 10:27:11 [config.py:240] Gemma4 model has heterogeneous head dimensions "
       "(head_dim=256, global_head_dim=512). FA4 not available, forcing TRITON_ATTN backend.\n")


def _core(pid=40474, version="0.25.1", model="org/M-NVFP4", role="EngineCore"):
    return (f"({role} pid={pid}) INFO 08-02 10:27:17 [core.py:114] Initializing a V1 LLM engine (v{version}) with "
            f"config: model='{model}', speculative_config=None, quantization=modelopt_fp4\n")


@pytest.mark.parametrize("name", ["vllm-365", "vllm-367", "vllm-353", "vllm-356"])
def test_engine_core_start_line_continues_the_api_servers_start(name):
    assert len(runs_of(FIXTURES / "vllm" / f"{name}.log")) == 1


@pytest.mark.parametrize("core, runs", [
    (_core(), 1),
    (_core(model="other/Model-FP8"), 2),            # another model: another start
    (_core(version="0.26.0"), 2),                     # another release: another start
    (_core(pid=40999, role="APIServer"), 2),          # the API server's role under another pid (rule 2)
    (_core(pid=990001), 2),                           # a pid far from the run's: another launch
])
def test_child_start_needs_the_same_start(tmp_path, core, runs):
    assert len(runs_of(write_log(tmp_path, API + core))) == runs


def test_a_start_marker_after_a_failure_still_restarts(tmp_path):
    failed = API + ("(APIServer pid=40298) ERROR 08-02 10:27:12 [core.py:1] RuntimeError: Engine core "
                    "initialization failed. See root cause above.\n")
    assert len(runs_of(write_log(tmp_path, failed + _core()))) == 2
