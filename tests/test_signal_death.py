"""The shell's bare 'Segmentation fault (core dumped)' / 'Aborted (core dumped)' / 'Killed' line
(patterns/common-rules/98-uncaught.toml {engine}.run.signal-death): inside a run that has not come
up it is the start dying; alone it opens no run (trial 36: llama-server's 'main: loading model' then
a segfault read as nothing). Real logs: llamacpp-224 (a gdb backtrace then 'Aborted (core dumped)',
formerly a known miss), lmdeploy-148 (TurboMind's error then the abort)."""
from __future__ import annotations

import pytest

import logscan

from tests.conftest import FIXTURES


@pytest.mark.parametrize("log,line", [("llamacpp/llamacpp-224.log", "Aborted (core dumped)"),
                                      ("lmdeploy/lmdeploy-148.log", "Aborted (core dumped)")])
def test_the_abort_after_an_identified_start_is_its_failure(log, line):
    report = logscan.scan(str(FIXTURES / log))
    failed = [r for r in report.runs if r.start_failure is not None]
    assert failed, "no failed start"
    text = (FIXTURES / log).read_text(errors="replace").splitlines()
    assert text[failed[-1].start_failure.line - 1].strip() == line


@pytest.mark.parametrize("bare", ["Segmentation fault (core dumped)\n", "Killed\n", "Aborted (core dumped)\n"])
def test_the_bare_line_alone_opens_no_run(tmp_path, bare):
    p = tmp_path / "bare.log"
    p.write_text(bare)
    assert logscan.scan(str(p)).runs == []


def test_a_segfault_after_llama_server_loading_fails_the_start(tmp_path):
    p = tmp_path / "l.log"
    p.write_text("ggml_cuda_init: found 1 ROCm devices:\n"
                 "  Device 0: Radeon 8060S Graphics, gfx1151 (0x1151), VMM: no, Wave Size: 32\n"
                 "main: loading model\n"
                 "Segmentation fault (core dumped)\n")
    runs = logscan.scan(str(p)).runs
    assert len(runs) == 1 and runs[0].start_failure is not None and runs[0].start_failure.line == 4
