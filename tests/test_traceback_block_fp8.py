"""A frame that names its format and path: vLLM's W8A8 block-scaled FP8 path
(patterns/vllm/rules/25-frames.toml ``vllm.frame.block-fp8-apply``, ``names_path = true``;
docs/traceback-frames.md).

vllm-project/vllm#17581 (Qwen3 FP8 on vLLM 0.8.5, an Ampere GPU) failed inside
fp8_utils.py ``apply_w8a8_block_fp8_linear`` -> ``per_token_group_quant_fp8`` -> Triton
("type fp8e4nv not supported in this architecture"). ``WINDOW`` is the first seven lines of the
reporter's paste as GitHub shows them (a worker's traceback, cut before its exception); the
function names the block-scaled FP8 path, not which GEMM kernel (CUTLASS or Triton) served it.
"""
from __future__ import annotations

import pytest
import regex

from logscan.analysis.frames import frame_kernel
from logscan.packs.loader import default_packs
from logscan.packs.model import Rule
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

PACKS = default_packs()
LEX = PACKS.lexicon
RULES = {cr.rule.id: (cr, p) for p in PACKS.packs.values() for cr in p.rules}
PATH = "W8A8 block-scaled FP8 path"
_P = "(VllmWorker rank=0 pid=374) ERROR 05-02 10:22:18 [multiproc_executor.py:470] "
WINDOW = [_P + s for s in (
    '  File "/root/.cache/vllm/torch_compile_cache/a736dc13b9/rank_0_0/inductor_cache/4l/'
    'c4l5hmke6sef5rgwaxb7z63ozf5egvlyvpiktubtzhadmyx35rmc.py", line 521, in call',
    "    buf5 = torch.ops.vllm.apply_w8a8_block_fp8_linear.default(buf4, arg4_1, [128, 128], arg5_1)",
    "           " + "^" * 84,
    '  File "/opt/conda/lib/python3.12/site-packages/torch/_ops.py", line 723, in __call__',
    "    return self._op(*args, **kwargs)",
    "           " + "^" * 25,
    '  File "/opt/conda/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/utils/'
    'fp8_utils.py", line 70, in apply_w8a8_block_fp8_linear',
)]


def _scan(tmp_path, lines):
    log = tmp_path / "vllm-17581-window.log"
    log.write_text("\n".join(lines) + "\n")
    (run,) = scan_inputs([str(log)]).runs
    return run


@pytest.mark.parametrize("fn", ["apply_w8a8_block_fp8_linear", "per_token_group_quant_fp8", "w8a8_block_fp8_matmul"])
def test_block_fp8_functions_name_the_path(fn):
    # names read in the vllm 0.8.5 wheel's model_executor/layers/quantization/utils/fp8_utils.py
    r = RULES["vllm.frame.block-fp8-apply"][0].rule
    line = f'  File "/usr/lib/vllm/model_executor/layers/quantization/utils/fp8_utils.py", line 9, in {fn}'
    assert r.names_path and r.family is None  # a path, not a selection
    assert frame_kernel(LEX, r, line) == PATH
    assert regex.search(RULES["vllm.frame.kernel-apply"][0].rule.pattern, line) is None  # no longer "not understood"


def test_failed_start_in_the_block_fp8_path_names_it(tmp_path):
    run = _scan(tmp_path, WINDOW)
    sf = run.start_failure
    assert sf is not None
    assert (sf.failing_kernel, sf.failing_kernel_line) == (PATH, 7)
    assert "its op apply_w8a8_block_fp8_linear is among the innermost frames" in sf.failing_kernel_why
    assert run.unexplained == []  # the failure reads the frame: no "not understood" line
    assert run.selections == []  # the log selected nothing: none is invented
    assert not any(f.code == "UNSUPPORTED_ON_ARCH" for f in run.findings)  # no line states an arch refusal


def test_the_frame_without_the_failure_reading_it_is_still_listed(tmp_path):
    # the same frame above a deeper frame of no kernel, more than the innermost four frames away:
    # the failure names no kernel from it, so it stays "not understood" (never silent)
    deeper = [_P + f'  File "/opt/conda/lib/python3.12/site-packages/torch/_dynamo/x{i}.py", line {i}, in f{i}'
              for i in range(1, 6)]
    run = _scan(tmp_path, WINDOW + deeper)
    assert run.start_failure is not None and run.start_failure.failing_kernel is None
    assert [u.line for u in run.unexplained] == [7]


def test_triton_jit_frames_are_not_counted_among_the_innermost(tmp_path):
    # the four Triton frames of a kernel that failed to compile, as sglang-006 (a real log) keeps
    # them (jit.py run -> compiler.py compile -> backends/nvidia/compiler.py): under the block FP8
    # frame they would push it out of the innermost four; they compile the caller's kernel
    triton = [_P + ln for ln in (FIXTURES / "sglang" / "sglang-006.log").read_text().splitlines()
              if ln.lstrip().startswith('File "') and "/triton/" in ln]
    assert len(triton) == 4
    run = _scan(tmp_path, WINDOW + triton)
    assert run.start_failure.failing_kernel == PATH
    assert run.unexplained == []
    assert "triton" in LEX.failing.jit_modules


@pytest.mark.parametrize("bad", [dict(frame=False), dict(kernel=None), dict(family="linear (FP8)")])
def test_names_path_is_validated(bad):
    base = dict(id="x.frame.path", kind="linear_kernel", pattern="in f", keywords=["in f"], frame=True,
                kernel="some path", names_path=True, examples=['  File "/a/b.py", line 1, in f'])
    Rule.model_validate(base)
    base.update(bad)
    with pytest.raises(ValueError, match="names_path|must name its kernel"):
        Rule.model_validate(base)
