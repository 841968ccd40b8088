"""A second log catted after a first one that was cut before its end (no failure, no ready line)
opens its own run when its first process is one the first run never heard from, with no pid near
the run's and a clock half a day or more from every line of the run (``newstart.distant_process``).
A new-user trial glued vllm-005 (a Nemotron NVFP4 start, March) and a vLLM 0.20.1 excerpt (May):
one run, whose selection was called unconfirmed by the second log's failure and given the first
log's model and release."""
from __future__ import annotations

import pytest

from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

FIRST = FIXTURES / "vllm" / "vllm-005.log"  # 19 lines, cut before a ready or failure line


def _spans(tmp_path, second: str) -> list[tuple[int, int]]:
    glued = tmp_path / "glued.log"
    glued.write_bytes(FIRST.read_bytes() + (FIXTURES / "vllm" / f"{second}.log").read_bytes())
    return [(r.first_line, r.last_line) for r in scan_inputs([str(glued)]).runs]


@pytest.mark.parametrize("second", ["vllm-142", "vllm-178", "vllm-240"])
def test_a_distant_process_after_a_cut_start_opens_the_next_run(tmp_path, second):
    spans = _spans(tmp_path, second)
    assert spans[0] == (1, 19), spans
    assert len(spans) == 2 and spans[1][0] == 20, spans


def test_each_log_alone_stays_one_run():
    for name in ("vllm-005", "vllm-142", "vllm-178", "vllm-240"):
        assert len(scan_inputs([str(FIXTURES / "vllm" / f"{name}.log")]).runs) == 1, name


def test_a_process_the_run_heard_never_splits_however_late(tmp_path):
    """The same pid days later (a server's API process logging while it serves) is the same start."""
    lines = FIRST.read_text(encoding="utf-8").splitlines()
    tagged = next(line for line in lines if line.startswith("(") and " pid=" in line)
    late = tagged.replace("03-17", "05-20", 1)
    assert late != tagged
    log = tmp_path / "late.log"
    log.write_text("\n".join(lines + [late]) + "\n", encoding="utf-8")
    assert len(scan_inputs([str(log)]).runs) == 1
