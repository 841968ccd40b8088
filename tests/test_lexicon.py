"""The kernel lexicon (patterns/lexicon.toml): every entry's examples are classed by it, names are
normalised, and a selection classed by name says so."""
from __future__ import annotations

import re

import pytest

from logscan.analysis.lexicon import classify, kernel_package, normalise
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs

LEX = default_packs().lexicon
_SCHEME = re.compile(r"^(?P<name>.*?) \(scheme (?P<scheme>[^)]*)\)$")


@pytest.mark.parametrize("entry", LEX.name, ids=[e.id for e in LEX.name])
def test_examples_are_classed_by_their_entry(entry):
    for ex in entry.examples:
        m = _SCHEME.match(ex)
        name, scheme = (m.group("name"), m.group("scheme")) if m else (ex, "")
        got = classify(LEX, name, scheme)
        assert got is not None and got.entry == entry.id, (ex, got)
        assert got.reasoning.startswith("classified by name")
    for ex in entry.counter_examples:
        got = classify(LEX, ex)
        assert got is None or got.entry != entry.id, ex


def test_names_are_normalised():
    assert normalise("Fp4GemmRunnerBackend.FLASHINFER_CUTLASS") == "FLASHINFER_CUTLASS"
    assert normalise("'MARLIN'") == "MARLIN"
    assert normalise("  FlashInfer   MXFP4 MOE ") == "FlashInfer MXFP4 MOE"
    assert normalise("vllm.model_executor.Foo") == "vllm.model_executor.Foo"  # a module path is no enum member


def test_marlin_depends_on_the_scheme():
    assert classify(LEX, "MarlinExperts", "gptq_marlin MoE").cost_class == "native"
    assert classify(LEX, "MarlinExperts", "modelopt_fp4 MoE (NvFp4)").cost_class == "weight_only"
    assert classify(LEX, "MarlinExperts", "").cost_class == "unknown"


def test_packages_tied_to_kernels():
    pk = LEX.packages
    for p in pk.examples:
        assert kernel_package(LEX, p) is True, p
    for p in pk.counter_examples:
        assert kernel_package(LEX, p) is False, p
    assert kernel_package(LEX, "flashinfer-python>=0.6.11") is True


def test_a_selection_classed_by_name_says_so(tmp_path):
    # SGLang wordings of 2026 releases (issue 11): no ladder holds these names
    log = tmp_path / "x.log"
    log.write_text("[2026-11-29 10:00:00 TP0] SM120 detected: using PyTorch MXFP4 MoE fallback\n"
                   "[2026-11-29 10:00:01 TP0] AITER CK fused_moe failed (shape 3), falling back to Triton MoE runner\n")
    (run,) = scan_inputs([str(log)]).runs
    got = {s.kernel: (s.cost_class.value, s.reasoning) for s in run.selections}
    assert set(got) == {"PyTorch MXFP4 MoE fallback", "Triton MoE runner"}
    assert all(c == "portable" and r.startswith("classified by name") for c, r in got.values())
    # the engine-neutral lexicon, for a name the pack's own table does not class
    assert classify(LEX, "FlashInfer TRTLLM MoE").reasoning.startswith("classified by name (lexicon entry vendor)")


def test_an_unknown_name_in_a_grammar_shape_gives_no_selection(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("[2026-11-29 10:00:00 TP0] Frobnicator Shiny MoE is enabled.\n")
    (run,) = scan_inputs([str(log)]).runs
    assert run.selections == []
    assert [e.rule for e in scan_inputs([str(log)]).events] == ["sglang.grammar.moe-enabled"]
