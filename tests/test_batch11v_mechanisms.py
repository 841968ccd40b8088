"""Corpus batch 11v (docs/corpus.md, "Batch 11v"): the general mechanisms its first sight showed,
each on the real logs (fixtures/vllm/vllm-314..329) with counter-examples that must stay as they were.

- a bare traceback's indentation, taken off by the ``indent`` wrapper, still tells its quoted source
  lines (``Record.indent``, ``sources/quoted.py``): ``    raise RuntimeError("Engine core
  initialization failed. "`` is code, the exception line under it is the start failure (vllm-317);
- a traceback frame in one of vLLM's device-named modules, or torch's XPU warning, is a weak
  platform fact (``vllm.platform.runtime-frame``: vllm-324, vllm-329);
- a linear-attention layer's kernel choice is an attention fact, never a GEMM selection
  (``vllm.attention.linear-kernel``: vllm-318);
- the precision windows (kernel-ish vocabulary, requested backends, PR prose) raise no finding.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import runs_of, write_log

FIX = Path(__file__).parent.parent / "fixtures" / "vllm"


def _codes(path: Path) -> list[str]:
    return [f["code"] for run in runs_of(path) for f in run["findings"]]


# -- quoted source lines of a bare, indented traceback ------------------------------------------

def test_the_quoted_raise_line_of_a_bare_traceback_is_code_and_the_exception_line_fails_the_start():
    (run,) = runs_of(FIX / "vllm-317.log")
    sf = run["start_failure"]
    assert sf["line"] == 12  # 'RuntimeError: Engine core initialization failed. ...', not line 11's code
    assert sf["evidence"].startswith("RuntimeError: Engine core initialization failed")


def test_a_quoted_raise_line_reads_as_nothing_but_the_raised_line_still_does(tmp_path):
    # the same traceback shape on an invented refusal: the code line quotes the message, the
    # exception line states it; only the latter may give the finding
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/fp8.py", '
            "line 120, in get_min_capability\n"
            '    raise ValueError("type fp8e4nv not supported in this architecture")\n')
    log = write_log(tmp_path, text)
    assert _codes(log) == []
    log2 = write_log(tmp_path, text + "ValueError: type fp8e4nv not supported in this architecture\n",
                     name="raised.log")
    assert "UNSUPPORTED_ON_ARCH" in _codes(log2)


def test_a_line_as_deep_as_its_frame_header_is_not_its_quoted_code(tmp_path):
    # an unindented exception line straight under a header (a frozen module prints no code): read
    text = ('  File "<frozen runpy>", line 198, in _run_module_as_main\n'
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\n"
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/utils.py", line 786, in wait_for_engine_startup\n')
    (run,) = runs_of(write_log(tmp_path, text))
    assert run["start_failure"]["line"] == 2


def test_a_prefixed_traceback_keeps_its_own_indentation(tmp_path):
    # the tag-prefixed form (the message keeps its blanks, no wrapper took them): as before
    text = ("(EngineCore pid=1) ERROR 06-01 00:00:00 [core.py:1184] Traceback (most recent call last):\n"
            '(EngineCore pid=1) ERROR 06-01 00:00:00 [core.py:1184]   File "/x/vllm/v1/engine/utils.py", '
            "line 786, in wait_for_engine_startup\n"
            '(EngineCore pid=1) ERROR 06-01 00:00:00 [core.py:1184]     raise RuntimeError("Engine core '
            'initialization failed. "\n')
    (run,) = runs_of(write_log(tmp_path, text))
    assert run["start_failure"] is None or run["start_failure"]["line"] != 3


# -- weak platform facts from device-named modules --------------------------------------------

@pytest.mark.parametrize("name", ["vllm-324", "vllm-329"])
def test_an_xpu_module_frame_or_torch_xpu_warning_names_the_platform(name):
    (run,) = runs_of(FIX / f"{name}.log")
    assert run["engine"]["platform"] == "XPU"


def test_a_platform_line_outweighs_a_device_module_frame(tmp_path):
    text = ("INFO 06-01 00:00:00 [__init__.py:1] Automatically detected platform cuda.\n"
            '  File "/opt/venv/lib/python3.12/site-packages/vllm/_xpu_ops.py", line 12, in <module>\n')
    (run,) = runs_of(write_log(tmp_path, text))
    assert run["engine"]["platform"] == "CUDA"


def test_a_script_printing_a_device_module_path_names_no_platform(tmp_path):
    text = ("already patched /opt/venv/lib/python3.12/site-packages/vllm/v1/worker/xpu_worker.py\n"
            "(APIServer pid=1) INFO 08-21 18:34:24 [api_utils.py:345] non-default args: {'model': 'm'}\n")
    for run in runs_of(write_log(tmp_path, text)):
        assert run["engine"]["platform"] is None


# -- a linear-attention kernel is no GEMM ------------------------------------------------------

def test_a_gdn_prefill_kernel_is_an_attention_fact_not_a_selection():
    (run,) = runs_of(FIX / "vllm-318.log")
    assert "Triton/FLA (GDN prefill)" in [a["backend"] for a in run["attention"]]
    assert run["selections"] == [] and run["findings"] == []


# -- precision windows ------------------------------------------------------------------------

@pytest.mark.parametrize("n", [314, 315, 316, 317, 318, 319, 320, 321, 322, 323, 324, 327, 328, 329])
def test_precision_windows_raise_no_finding(n):
    assert _codes(FIX / f"vllm-{n}.log") == []


def test_requested_marlin_backends_in_a_command_are_no_selection():
    runs = runs_of(FIX / "vllm-319.log")
    assert [s for r in runs for s in r["selections"]] == []
    assert any(r["config"]["extra"].get("moe_backend") == "marlin" for r in runs)
