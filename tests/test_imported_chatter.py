"""A library's lines in the process of an engine that imports it (``[pack] imports``) make no run of their own."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from logscan.cli import cli
from logscan.pipeline import scan_inputs

DATA = Path(__file__).parent / "data"
#: the real vLLM platform line of sgl-project/sglang#3571 (vLLM 0.7 legacy format)
VLLM_PLATFORM = "INFO 02-14 07:01:15 __init__.py:190] Automatically detected platform cuda.\n"
SGLANG_LINE = DATA.joinpath("sglang-3571.log").read_text().splitlines(keepends=True)[1]


def _runs(tmp_path, text):
    log = tmp_path / "x.log"
    log.write_text(text)
    return scan_inputs([str(log)]).runs


def test_sglang_3571_is_one_sglang_run():
    [run] = scan_inputs([str(DATA / "sglang-3571.log")]).runs
    assert run.engine.name == "sglang" and (run.first_line, run.last_line) == (1, 2)
    assert "line 1 before it: vLLM library lines (SGLang imports vLLM)" in run.engine.identified_by
    assert run.engine.platform == "CUDA"  # the vLLM line's platform is the process's
    assert run.config.tensor_parallel_size == 2


def test_sglang_3571_gate_fails_once():
    res = CliRunner().invoke(cli, ["gate", str(DATA / "sglang-3571.log")])
    assert res.exit_code != 0
    fails = [ln for ln in res.output.splitlines() if ln.strip().startswith("[fail]")]
    assert len(fails) == 1 and "NO_KERNEL_SEEN" in fails[0], res.output


def test_a_vllm_log_of_only_a_platform_line_is_a_vllm_run(tmp_path):
    [run] = _runs(tmp_path, VLLM_PLATFORM)
    assert run.engine.name == "vllm"


def test_a_platform_line_before_vllm_lines_stays_vllm(tmp_path):
    # corpus vllm-022 / vllm-117 begin so: nothing imports vLLM here, it is vLLM itself
    text = VLLM_PLATFORM + "INFO 02-14 07:01:16 api_server.py:840] vLLM API server version 0.7.2\n"
    [run] = _runs(tmp_path, text)
    assert run.engine.name == "vllm" and run.engine.version == "0.7.2"


def test_a_vllm_run_with_substance_is_not_folded(tmp_path):
    # a version banner is vLLM's own: a vLLM run, then an SGLang run
    text = "INFO 02-14 07:01:14 api_server.py:840] vLLM API server version 0.7.2\n" + VLLM_PLATFORM + SGLANG_LINE
    runs = _runs(tmp_path, text)
    assert [r.engine.name for r in runs] == ["vllm", "sglang"]


def test_vllm_chatter_inside_an_sglang_run_stays_in_it(tmp_path):
    # SGLang 0.4's scheduler subprocesses import vLLM after the server args are printed
    text = SGLANG_LINE + VLLM_PLATFORM + "[2025-02-14 07:01:25 TP0] Load weight begin. avail mem=76.50 GB\n"
    [run] = _runs(tmp_path, text)
    assert run.engine.name == "sglang" and run.last_line == 3


# -- trial item 9: engine identity and release claims ---------------------------------------

def test_vllm_43367_a_vllm_only_kernel_class_names_vllm():
    [run] = scan_inputs([str(DATA / "vllm-43367.log")]).runs
    e = run.engine
    assert e.name == "vllm" and e.read_with == "vllm"
    assert e.identified_by == ("line 2 selects kernel class TritonFp8BlockScaledMMKernel, which only the vLLM "
                               "ladders define")
    assert e.version_source == "inferred" and e.release_range == ["0.20.0", "0.33.0"]


def test_an_enum_member_names_no_engine(tmp_path):
    # a backend enum member (MARLIN) is no class: the same sentence shape stays engine unknown
    text = "Using 'MARLIN' NvFp4 MoE backend out of potential backends: ['FLASHINFER_CUTLASS', 'MARLIN'].\n"
    [run] = _runs(tmp_path, text)
    assert run.engine.name == "unknown"


def test_an_unknown_engine_claims_no_release():
    # corpus vllm-120: only generic vLLM-shaped lines; the vLLM rules fit 0.11.1 .. 0.14.0 only,
    # so their ladder places the rungs, but no release of an unnamed engine is claimed
    [run] = scan_inputs([str(Path(__file__).parent.parent / "fixtures" / "vllm" / "vllm-120.log")]).runs
    e = run.engine
    assert e.name == "unknown"
    assert e.version_source == "unknown" and e.release_range is None
    assert e.ladder_version == "0.14.0"
    assert e.version_evidence.startswith("engine unknown, so no release is claimed")
    assert all(not s.ladder or not s.ladder.elsewhere for s in run.selections)
