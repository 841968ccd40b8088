"""A sentence whose cost class assumes an activation scheme (rule ``assumes``, analysis/assumed.py).

vLLM's FP4 Marlin sentence is printed wherever the FP4 Marlin path is prepared: for a W4A4 NVFP4
checkpoint served by weight-only Marlin and for a W4A16 NVFP4 one (NVFP4A16), whose native kernel
Marlin is, on FP4-capable Blackwell GPUs too (club-3090#617: an NVFP4 Qwen3.6-27B on one RTX 5090
was reported as a fact-stated W4A4 substitution). On the real fixtures:

- vllm-006 (NVFP4A16 on sm120, GPU not in the log): the substitution is an assumption, said so,
  with the W4A16 alternative; with ``--gpu`` an sm120 GPU the sentence contradicts the GPU:
  cost class unknown, the finding lowered to info;
- vllm-115 / vllm-024 (sm120): the NvFp4 MoE oracle line states W4A4: the finding stands, its
  line named;
- vllm-005 (pre-Blackwell, W4A4 ModelOpt): printed from nvfp4_utils.py, the W4A4 linear path only:
  the finding stands, so named;
- a model name or scheme line stating W4A16 NVFP4 makes the line the checkpoint's native path.
"""
from __future__ import annotations

import pytest
import regex

from logscan.api import scan
from logscan.packs.loader import default_packs
from tests.conftest import FIXTURES

_WO = "WEIGHT_ONLY_SUBSTITUTION"
_RULE = "vllm.fallback.marlin-fp4"
# club-3090#617, line 1 of the saved trial log (vLLM 0.2x, RTX 5090): no GPU, model or scheme line
_TRIAL = ("(EngineCore pid=55) WARNING 07-07 01:12:30 [marlin.py:34] Your GPU does not have native support for "
          "FP4 computation but FP4 quantization is being used. Weight-only FP4 compression will be used leveraging "
          "the Marlin kernel. This may degrade performance for compute-heavy workloads.\n")


def _fx(name: str):
    return FIXTURES / "vllm" / f"{name}.log"


def _run(src, gpu=None):
    report = scan(src.splitlines(keepends=True) if isinstance(src, str) else src, gpu=gpu)
    assert len(report.runs) == 1
    return report.runs[0]


def _marlin(run):
    sel = [s for s in run.selections if s.rule == _RULE]
    wo = [f for f in run.findings if f.code == _WO and f.rule == _RULE]
    assert len(sel) == 1, [(s.family, s.kernel, s.rule) for s in run.selections]
    return sel[0], (wo[0] if wo else None)


def _assumes_rules():
    return [cr.rule for pack in default_packs().packs.values() for cr in pack.rules
            if getattr(cr.rule, "assumes", None) is not None]


def test_assumes_examples_match():
    rules = _assumes_rules()
    assert any(r.id == _RULE for r in rules)
    for r in rules:
        a = r.assumes
        for ex in a.native_examples:
            assert regex.search(a.native, ex), (r.id, "native", ex)
        for ex in a.stated_examples:
            assert regex.search(a.stated, ex), (r.id, "stated", ex)
        for ex in a.counter_examples:
            assert not regex.search(a.native or "(?!)", ex) and not regex.search(a.stated or "(?!)", ex), (r.id, ex)
        if a.stated_sites:
            assert regex.fullmatch(a.stated_sites, "nvfp4_utils.py") and not regex.fullmatch(a.stated_sites, "marlin_utils_fp4.py")


def test_006_substitution_is_said_to_be_assumed():
    sel, f = _marlin(_run(_fx("vllm-006")))
    assert sel.cost_class.value == "weight_only"
    assert "W4A4 assumed" in (sel.reasoning or "")
    assert f is not None and f.severity.value == "warning"
    assert any("W4A4 assumed" in r and "NVFP4A16" in r and "natively" in r for r in f.reasons), f.reasons


@pytest.mark.parametrize("src,gpu", [(_fx("vllm-006"), "RTX PRO 6000"), (_TRIAL, "RTX 5090")])
def test_native_fp4_gpu_contradicts_the_sentence(src, gpu):
    sel, f = _marlin(_run(src, gpu))
    assert sel.cost_class.value == "unknown"
    assert f is not None and f.severity.value == "info"
    assert any("contradicts the GPU" in r and "sm120" in r for r in f.reasons), f.reasons
    assert any("NVFP4A16" in r for r in f.reasons)


def test_trial_log_scheme_is_assumed_not_stated():
    sel, f = _marlin(_run(_TRIAL))
    assert sel.scheme == "NVFP4 (W4A4 assumed)"
    assert f is not None and f.severity.value == "warning" and "assumed" in f.title


@pytest.mark.parametrize("name,gpu", [("vllm-115", "RTX 5090"), ("vllm-024", None), ("vllm-024", "RTX 5090")])
def test_moe_oracle_line_states_w4a4(name, gpu):
    sel, f = _marlin(_run(_fx(name), gpu))
    assert sel.cost_class.value == "weight_only" and sel.scheme == "NVFP4 W4A4"
    assert f is not None and f.severity.value == "warning"
    assert any(r.startswith("line 1 states the W4A4 scheme") and "NvFp4 MoE backend" in r for r in f.reasons), f.reasons


def test_005_nvfp4_utils_site_states_w4a4():
    sel, f = _marlin(_run(_fx("vllm-005")))
    assert sel.scheme == "NVFP4 W4A4" and sel.cost_class.value == "weight_only"
    assert f is not None and any("nvfp4_utils.py" in r and "W4A4" in r for r in f.reasons), f.reasons


_MODEL = ("(APIServer pid=201) INFO 10-24 09:50:10 [utils.py:233] non-default args: "
          "{'model_tag': 'RedHatAI/Qwen3-8B-NVFP4A16', 'model': 'RedHatAI/Qwen3-8B-NVFP4A16'}\n")
_SCHEME = ("(Worker_TP0 pid=201) WARNING 10-24 09:50:13 [compressed_tensors_w4a16_nvfp4.py:42] "
           "Current platform does not support cutlass NVFP4. Running CompressedTensorsW4A16Fp4.\n")


@pytest.mark.parametrize("extra", [_MODEL, _SCHEME])
def test_w4a16_nvfp4_named_is_native(extra):
    lines = _fx("vllm-006").read_text().splitlines(keepends=True)
    sel, f = _marlin(_run("".join(lines[:1] + [extra] + lines[1:])))
    assert f is None
    assert sel.cost_class.value == "native"
    assert "NVFP4A16" in sel.reasoning or "CompressedTensorsW4A16Fp4" in sel.reasoning


def test_w4a4_line_beats_a_w4a16_name():
    # a mixed checkpoint: a W4A16-named model whose run also states a W4A4 layer keeps the finding
    text = _MODEL + open(_fx("vllm-024")).read()
    run = _run(text)
    sel, f = _marlin(run)
    assert f is not None and sel.cost_class.value == "weight_only"


def _flashinfer(arch: str) -> str:
    # FlashInferMetadataBuilder's line (rule vllm.kv.flashinfer-resolved, its examples' shape): the GPU from the log
    return ("(EngineCore pid=55) INFO 07-07 01:12:40 [flashinfer.py:600] FlashInfer resolved query dtypes: "
            f"prefill=torch.bfloat16, decode=torch.bfloat16, kv_cache_dtype=torch.float8_e4m3fn, arch={arch}\n")


@pytest.mark.parametrize("arch,cost,severity", [("sm120", "unknown", "info"), ("sm86", "weight_only", "warning")])
def test_gpu_from_the_log_decides_the_contradiction(arch, cost, severity):
    sel, f = _marlin(_run(_TRIAL + _flashinfer(arch)))
    assert sel.cost_class.value == cost and sel.scheme == "NVFP4 (W4A4 assumed)"
    assert f is not None and f.severity.value == severity
    assert any("contradicts the GPU" in r for r in f.reasons) == (arch == "sm120")
