"""A launch command after a run that said something (neither failed nor came up) begins the next run
when the lines after it begin a start of the command's engine (``boundary.command_opens``,
docs/run-splitting.md "A launch command after a failure"): the second of two logs catted, its
command, then its banner, config or a process's lines. Before, the command (and the identity lines
of its line and preamble) joined the first log's open run: named its model and TP size, or its
engine, and the two logs were one run. Real fixtures concatenated; the counter-examples are real
logs whose command was pasted after the lines it ran.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES
from tests.test_run_boundary_held import _alone, _cat, _lines, _view

#: one-run logs that begin with a launch command, then their start's lines
COMMAND_FIRST = ["vllm/vllm-121.log", "vllm/vllm-279.log", "vllm/vllm-323.log", "vllm/vllm-263.log",
                 "vllm/vllm-265.log", "vllm/vllm-295.log", "sglang/sglang-251.log", "sglang/sglang-261.log"]
#: one-run logs that end in neither a failure nor a ready line but said something (several engines)
OPEN_AT_END = ["sglang/sglang-256.log", "sglang/sglang-102.log", "vllm/vllm-192.log", "vllm/vllm-157.log",
               "vllm/vllm-331.log", "vllm/vllm-017.log", "sglang/sglang-244.log", "llamacpp/llamacpp-135.log",
               "sglang/sglang-008.log", "sglang/sglang-108.log"]


@pytest.mark.parametrize("first,second", [
    ("sglang/sglang-256.log", "sglang/sglang-251.log"),  # the command named run 1's model and TP 2
    ("vllm/vllm-192.log", "vllm/vllm-121.log"),          # one run before
    ("sglang/sglang-102.log", "vllm/vllm-279.log"),      # '$ python -m vllm.entrypoints...' (prompt)
    ("vllm/vllm-157.log", "vllm/vllm-323.log"),          # '(vllm) user@host-a:...$ vllm serve ...'
    ("vllm/vllm-017.log", "vllm/vllm-265.log"),          # 'user@host:~$ docker run ... vllm/vllm-openai'
    ("vllm/vllm-312.log", "vllm/vllm-267.log"),          # 'export VLLM_...' lines before the command
])
def test_the_second_logs_command_begins_its_run(tmp_path, first, second):
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, False)))], fold=False).runs
    assert len(runs) == 2
    assert runs[0].first_line == scan_inputs([str(FIXTURES / first)], fold=False).runs[0].first_line
    assert runs[0].last_line <= _lines(first) < runs[1].first_line
    assert [_view(r) for r in runs] == [_alone(first), _alone(second)]


def test_three_copies_of_a_log_that_begins_with_its_command_are_three_starts(tmp_path):
    # vllm-005: the command, then its banner: each copy's command is its own start's first line
    # (copy 2's command was run 1's), so the later two fold
    report = scan_inputs([str(_cat(tmp_path, *[("vllm/vllm-005.log", False)] * 3))])
    n = _lines("vllm/vllm-005.log")
    assert [r.first_line for r in report.runs] == [1, n + 1]
    assert report.runs[1].folded is not None and report.runs[1].folded.first_line == 2 * n + 1
    assert report.summary.runs + report.summary.folded_runs == 3


@pytest.mark.parametrize("first,second", [
    ("sglang/sglang-299.log", "vllm/vllm-228.log"),    # another engine's line follows the command
    ("sglang/sglang-299.log", "sglang/sglang-292.log"),  # a kernel config line, no pid: no start
])
def test_a_command_pasted_after_its_lines_stays_with_them(tmp_path, first, second):
    # sglang-299: a question, an arch line, then 'sglang serve ...' (17 lines), the command that ran
    # it; what follows does not begin a start, so the command still names run 1
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, False)))], fold=False).runs
    assert runs[0].engine.name == "sglang" and runs[0].config.model == "/models"
    assert runs[0].last_line >= _lines(first)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.sampled_from(OPEN_AT_END), second=st.sampled_from(COMMAND_FIRST))
def test_each_run_of_a_log_then_a_commanded_log_is_what_each_gives_alone(tmp_path, first, second):
    runs = scan_inputs([str(_cat(tmp_path, (first, False), (second, False)))], fold=False).runs
    assert len(runs) == 2
    assert runs[1].first_line == _lines(first) + scan_inputs([str(FIXTURES / second)], fold=False).runs[0].first_line
    assert [_view(r) for r in runs] == [_alone(first), _alone(second)]
