"""A pasted launch command of llama.cpp, TensorRT-LLM, MLC-LLM, TGI or LMDeploy begins the run of the
log it heads when two logs are glued (``cat a.log b.log``): the packs' launch-command rules set
``cli`` like vLLM's and SGLang's, so the analyzer holds the command after a run that failed, came up
or said something, and it opens the next run (docs/run-splitting.md, "A launch command after a
failure"). Before, the command joined run 1 (its line and span) and run 2 began on a later line, or
not at all. Real fixtures glued; the counter-examples are real one-run logs whose command-like lines
are no launch (a JIT compile command the serve process logs, a ``--version`` probe, three commands
of one paste).
"""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES
from tests.test_run_boundary_held import _alone, _cat, _lines, _view

#: one-run logs whose first line is a launch command of an engine that had no run-opening rule
COMMAND_FIRST = ["llamacpp/llamacpp-002.log", "llamacpp/llamacpp-101.log", "trtllm/trtllm-164.log",
                 "trtllm/trtllm-114.log", "mlc-llm/mlc-llm-140.log", "mlc-llm/mlc-llm-164.log",
                 "tgi/tgi-104.log", "lmdeploy/lmdeploy-101.log", "lmdeploy/lmdeploy-104.log"]
#: one-run logs of other engines: a failed start (vllm-020), an excerpt that neither failed nor
#: came up (sglang-256), an LMDeploy start
FIRST = ["vllm/vllm-020.log", "sglang/sglang-256.log", "lmdeploy/lmdeploy-106.log"]


# (same-engine pairs whose first log neither failed nor said more than start lines are not covered:
# lmdeploy-106 then lmdeploy-101, tgi-108 then tgi-104 stay one run, see the xfail below)
@pytest.mark.parametrize("first,second", [(a, b) for a in FIRST for b in COMMAND_FIRST
                                          if a.split("/")[0] != b.split("/")[0]])
def test_the_command_of_the_second_log_begins_its_run(tmp_path, first, second):
    assert scan_inputs([str(FIXTURES / second)], fold=False).runs[0].first_line == 1
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, False)))], fold=False).runs
    n = _lines(first)
    assert [r.first_line for r in runs] == [scan_inputs([str(FIXTURES / first)], fold=False).runs[0].first_line, n + 1]
    assert runs[0].last_line <= n  # the command's line is no line of run 1
    assert _view(runs[1]) == _alone(second)


@pytest.mark.parametrize("name", [
    "mlc-llm/mlc-llm-142.log",   # 'INFO jit.py:121: /opt/conda/envs/mlc/bin/python -m mlc_llm compile ...' inside serve
    "mlc-llm/mlc-llm-155.log",   # the same JIT compile line
    "mlc-llm/mlc-llm-170.log",   # convert_weight, gen_config, compile: three commands of one paste
    "llamacpp/llamacpp-215.log",  # 'llama-cli --version' (device, version lines), then 'llama-server -m ...'
    "llamacpp/llamacpp-185.log",  # 'zsh: segmentation fault  llama-server -hf ...'
    "trtllm/trtllm-189.log",      # the command, then argparse's 'usage: trtllm-build [-h] ...'
    "lmdeploy/lmdeploy-128.log",  # argparse's 'usage: lmdeploy serve api_server [-h] ...'
])
def test_a_command_like_line_that_is_no_new_launch_splits_nothing(name):
    assert len(scan_inputs([str(FIXTURES / name)], fold=False).runs) == 1


def test_the_same_log_twice_is_two_runs_from_its_command(tmp_path):
    # llamacpp-002 twice: the second copy's command opens run 2; the line after it is llama.cpp's
    # '--gpu-layers option will be ignored' warning, a line printed once per start (once_per_start),
    # not one of the open run going on (it used to split at line 19, 'build: 6448')
    n = _lines("llamacpp/llamacpp-002.log")
    runs = scan_inputs([str(_cat(tmp_path, ("llamacpp/llamacpp-002.log", False),
                                 ("llamacpp/llamacpp-002.log", False)))], fold=False).runs
    assert [r.first_line for r in runs] == [1, n + 1]
