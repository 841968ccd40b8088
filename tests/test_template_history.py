"""Rule ``versions`` against the template history (patterns/vllm/template-history.toml).

The history holds the log templates that the vLLM rules' examples come from, read with
``ast`` from every release 0.6.6 -> 0.33.0 (tools/template_history.py). A rule's ``versions``
is an era hint: a release whose source prints the rule's template but which ``versions``
excludes would be voted out by version inference. So every release that holds a rule's
template must be inside its ``versions``. (The other direction is not checked: a rule's
examples need not show every variant it recognises.)
"""
from __future__ import annotations

import importlib.util
import sys

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from logscan.packs.loader import default_packs
from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("derive_templates", ROOT / "tools" / "derive_templates.py")
dt = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("derive_templates", dt)
_spec.loader.exec_module(dt)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HIST = tomllib.loads((ROOT / "patterns" / "vllm" / "template-history.toml").read_text(encoding="utf-8"))
RELS = HIST["releases"]
IDX = {r: i for i, r in enumerate(RELS)}
HELD = {t["text"]: [r for a, b in t["releases"] for r in RELS[IDX[a]: IDX[b] + 1]] for t in HIST["template"]}
CANDS = [(t, dt.template_regex(t), dt.literal_chars(t)) for t in HELD]
RULES = [cr.rule for cr in default_packs().packs["vllm"].rules]


def test_history_covers_every_release_and_many_rules():
    assert RELS[0] == "0.6.6" and RELS[-1] == "0.33.0" and len(RELS) == 56
    with_template = [r for r in RULES if any(dt.best_templates(ex, CANDS) for ex in r.examples)]
    assert len(with_template) >= 60


@pytest.mark.parametrize("rule", [r for r in RULES if r.versions], ids=lambda r: r.id)
def test_versions_cover_every_release_whose_source_holds_the_template(rule):
    spec = SpecifierSet(rule.versions)
    bad = {}
    for ex in rule.examples:
        for t in dt.best_templates(ex, CANDS):
            out = [r for r in HELD[t] if Version(r) not in spec]
            if out:
                bad[t] = out
    assert not bad, f"{rule.id} versions {rule.versions!r} excludes releases that print its template: {bad}"


def test_template_regex_and_best_match():
    rx = dt.template_regex("Using %s for {fmt} GEMM (100%%)")
    assert rx.match("Using MarlinNvFp4LinearKernel for NVFP4 GEMM (100%)")
    cands = [(t, dt.template_regex(t), dt.literal_chars(t)) for t in ("Using %s backend.", "Using Marlin backend.")]
    assert dt.best_templates("Using Marlin backend.", cands) == ["Using Marlin backend."]
    assert dt.best_templates("Using 'MARLIN' WNA16 MoE backend.", cands) == []  # too generic to say
    assert set(dt.templates_of('logger.info_once("A %s", x)\nraise ValueError(f"B {y}")\nlog.warn("C")\n')) == {
        ("info", "A %s"), ("raise", "B {y}"), ("warning", "C")}


def test_a_line_sentence_narrows_the_era_to_the_releases_that_print_it():
    """No version line: the sentence 'Using MarlinExperts (weight-only FP4) for AutoRound MXFP4 MoE'
    is printed by 0.27.0+ only; the era says so and names the template."""
    from logscan.pipeline import Pipeline

    pipe = Pipeline(source="mem")
    runs = []
    lines = ["INFO 05-11 08:00:02 [x.py:1] Using MarlinExperts (weight-only FP4) for AutoRound MXFP4 MoE"]
    for i, text in enumerate(lines, 1):
        runs += [r for _, r in pipe.feed(i, text) if r is not None]
    runs += [r for _, r in pipe.close() if r is not None]
    (run,) = runs
    ev = run.engine.version_evidence
    assert "template 'Using MarlinExperts (weight-only FP4) for AutoRound MXFP4…' (in 0.27.0 .. 0.33.0)" in ev  # cut at a word, marked
    assert ev.startswith("releases 0.27.0 .. 0.33.0 fit")


def test_a_long_sentence_printed_with_a_long_path_is_still_its_template():
    """vLLM fp8_utils.py (0.7.1+) prints a 102-character sentence with the config path; the
    path made the line 270 characters, under half literal, so neither the history builder nor
    the era inference credited the template (refresh --check 0.8.3: 'gone template')."""
    from logscan.analysis.template_era import TemplateHistory

    t = "Using default W8A8 Block FP8 kernel config. Performance might be sub-optimal! Config file not found at %s"
    line = t % ("/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/quantization/utils/configs/"
                "N=6144,K=2048,device_name=NVIDIA_L40S,dtype=fp8_w8a8,block_shape=[128,128].json")
    assert dt.literal_chars(t) < 0.5 * len(line)
    assert dt.best_templates(line, [(t, dt.template_regex(t), dt.literal_chars(t))]) == [t]
    th = TemplateHistory.from_doc({"releases": ["0.7.0", "0.7.1"], "template": [
        {"text": t, "level": "warning", "releases": [["0.7.1", "0.7.1"]]}]})
    assert th.best(line) == (t, frozenset({"0.7.1"}))
    assert t in HELD and HELD[t][0] == "0.7.1"  # and the shipped history holds it
    # a field that swallows words is not a token: vLLM 0.14's MoE oracle line (fixtures/vllm/vllm-112)
    # is not the 0.19 ROCm attention template 'Using %s backend out of potential backends: %s.'
    vague = "Using %s backend out of potential backends: %s."
    moe = ("Using VLLM_CUTLASS Fp8 MoE backend out of potential backends: ['AITER', 'FLASHINFER_TRTLLM', "
           "'FLASHINFER_CUTLASS', 'DEEPGEMM', 'BATCHED_DEEPGEMM', 'VLLM_CUTLASS', 'BATCHED_VLLM_CUTLASS', "
           "'TRITON', 'BATCHED_TRITON', 'MARLIN'].")
    assert moe in (ROOT / "fixtures" / "vllm" / "vllm-112.log").read_text(encoding="utf-8")
    assert dt.best_templates(moe, [(vague, dt.template_regex(vague), dt.literal_chars(vague))]) == []


def test_releases_outside_the_history_stay_allowed():
    from logscan.analysis.template_era import TemplateHistory

    th = TemplateHistory.from_doc({"releases": ["0.6.6", "0.7.0"], "template": [
        {"text": "Using %s for CompressedTensorsW8A8Int8", "level": "info", "releases": [["0.7.0", "0.7.0"]]}]})
    text, held = th.best("Using TritonScaledMMLinearKernel for CompressedTensorsW8A8Int8")
    assert held == {"0.7.0"}
    assert th.allowed(held, ["0.5.5", "0.6.6", "0.7.0", "0.34.0"]) == {"0.5.5", "0.7.0", "0.34.0"}
    assert th.best("Using X for Y") is None


def _engine_data(engine):
    path = ROOT / "patterns" / engine / "template-history.toml"
    if not path.is_file():
        return None
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    rels = doc["releases"]
    idx = {r: i for i, r in enumerate(rels)}
    held = {t["text"]: [r for a, b in t["releases"] for r in rels[idx[a]: idx[b] + 1]] for t in doc["template"]}
    return rels, held, [(t, dt.template_regex(t), dt.literal_chars(t)) for t in held]


SGLANG = _engine_data("sglang")
SGLANG_RULES = [cr.rule for cr in default_packs().packs["sglang"].rules] if SGLANG else []


def test_sglang_history_covers_every_release_from_0_3():
    assert SGLANG is not None, "patterns/sglang/template-history.toml is shipped"
    rels = SGLANG[0]
    assert rels[0].startswith("0.3") and rels[-1] == "0.5.23" and len(rels) >= 100


@pytest.mark.parametrize("rule", [r for r in SGLANG_RULES if r.versions], ids=lambda r: r.id)
def test_sglang_versions_cover_every_release_whose_source_holds_the_template(rule):
    _, held, cands = SGLANG
    spec = SpecifierSet(rule.versions)
    bad = {t: [r for r in held[t] if Version(r) not in spec]
           for ex in rule.examples for t in dt.best_templates(ex, cands)}
    bad = {t: v for t, v in bad.items() if v}
    assert not bad, f"{rule.id} versions {rule.versions!r} excludes releases that print its template: {bad}"


def test_sglang_history_reads_the_logging_helpers():
    """SGLang >= 0.4.6.post3 logs these sentences through ``log_info_on_rank0(logger, msg)``
    (tools/log_helpers.py). Read without the helpers, the history credited only the older
    ``logger.info("Using configuration from %s ...")`` form (0.4.1.post2 .. 0.4.6.post2), and a
    B200 log of May 2025 (fixtures/sglang/sglang-010) was narrowed to those releases: a false era."""
    rels, held, cands = SGLANG
    assert len(rels) == 110
    assert held["Detected fp8 checkpoint."][0] == "0.4.6.post3" and held["Detected fp8 checkpoint."][-1] == "0.5.23"
    new = "Using configuration from {config_file_path} for W8A8 Block FP8 kernel."
    old = "Using configuration from %s for W8A8 Block FP8 kernel."
    assert (held[new][0], held[new][-1]) == ("0.4.6.post3", "0.5.23")
    assert (held[old][0], held[old][-1]) == ("0.4.1.post2", "0.4.6.post2")
    line = next(x for x in (ROOT / "fixtures" / "sglang" / "sglang-010.log").read_text(encoding="utf-8").splitlines()
                if "Using configuration from" in x).split("] ", 1)[1]
    # both forms produce the line, with the same literal text: a tie, so their releases are
    # united (0.4.1.post2 .. 0.5.23); here the path's '[128, 128]' makes it too vague to narrow at all
    assert dt.template_regex(old).match(line) and dt.template_regex(new).match(line)
    assert dt.literal_chars(old) == dt.literal_chars(new)
