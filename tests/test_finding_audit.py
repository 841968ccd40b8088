"""The precision audit of tools/finding_audit.py keeps its totals (docs/report.md "prec37").

Every template of the engines' template files (shared/reference/vllm, sglang, and
tests/data/other-engines/templates-other.jsonl) is rendered in its engine's line shape and scanned
alone and inside a healthy real start; the audit lists each error / warning finding. The totals
below are those after the prec37 fixes (every row judged warranted by a domain reading of its
sentence; 22 false ones fixed by mechanism). A rule change that makes another sentence raise an
error or warning changes a total and fails here: judge the new row, then change the pin on purpose.
Skipped when the shared reference is not there.
"""
from __future__ import annotations

import pytest

from tests.conftest import SHARED, load_tool

pytestmark = pytest.mark.skipif(
    not (SHARED / "tools" / "template_coverage.py").is_file()
    or not (SHARED / "reference" / "vllm" / "templates.jsonl").is_file(),
    reason="shared/tools/template_coverage.py or the shared templates not found",
)

#: engine -> templates with a finding (alone / inside the healthy log) and findings by code (prec37).
#: Before prec37: vllm 148 (WEIGHT_ONLY_SUBSTITUTION 22), sglang 193 (alone 185; UNSUPPORTED_ON_ARCH 115,
#: OPTIONAL_PACKAGE_MISSING 30, WEIGHT_ONLY_SUBSTITUTION 13), lmdeploy 12 (BACKEND_OVERRIDE_IGNORED 5).
PINNED = {
    "vllm": {"templates": 147, "alone": 147, "inside": 147, "codes": {
        "BACKEND_OVERRIDE_IGNORED": 8, "DEQUANT_AT_LOAD": 3, "EMULATION": 18, "KERNEL_NOT_FOUND": 43,
        "KV_CACHE_DTYPE_FALLBACK": 2, "KV_CACHE_UNSUPPORTED": 6, "OPTIONAL_PACKAGE_MISSING": 12,
        "UNSUPPORTED_ON_ARCH": 26, "UNTUNED_SHAPE": 8, "WEIGHT_ONLY_SUBSTITUTION": 21}},
    "sglang": {"templates": 174, "alone": 174, "inside": 174, "codes": {
        "BACKEND_OVERRIDE_IGNORED": 13, "DEQUANT_AT_LOAD": 4, "KERNEL_NOT_FOUND": 2, "KV_CACHE_DTYPE_FALLBACK": 2,
        "KV_CACHE_UNSUPPORTED": 10, "OPTIONAL_PACKAGE_MISSING": 27, "UNSUPPORTED_ON_ARCH": 107,
        "UNTUNED_SHAPE": 4, "WEIGHT_ONLY_SUBSTITUTION": 5}},
    "tgi": {"templates": 16, "alone": 16, "inside": 16, "codes": {
        "KERNEL_NOT_FOUND": 4, "OPTIONAL_PACKAGE_MISSING": 8, "UNSUPPORTED_ON_ARCH": 2, "WEIGHT_ONLY_SUBSTITUTION": 2}},
    "lmdeploy": {"templates": 10, "alone": 10, "inside": 10, "codes": {
        "BACKEND_OVERRIDE_IGNORED": 3, "KERNEL_NOT_FOUND": 2, "OPTIONAL_PACKAGE_MISSING": 4, "UNSUPPORTED_ON_ARCH": 1}},
    "mlc-llm": {"templates": 3, "alone": 3, "inside": 3, "codes": {
        "BACKEND_OVERRIDE_IGNORED": 1, "OPTIONAL_PACKAGE_MISSING": 2}},
}


@pytest.mark.parametrize("engine", sorted(PINNED))
def test_audit_totals_hold(engine):
    fa = load_tool("finding_audit")
    rows = fa.audit(engine)
    got = fa.counts(rows).get(engine, {"templates": 0, "alone": 0, "inside": 0, "codes": {}})
    listing = "\n".join(f"{r['mode']} {r['code']} {r['template'][:120]!r}" for r in rows)
    assert got == PINNED[engine], f"{engine}: audit totals changed: {got}\n{listing}"


def test_healthy_starts_raise_nothing():
    """The context logs are healthy: a finding of their own would hide what a template brings."""
    fa = load_tool("finding_audit")
    for engine, path in fa.HEALTHY.items():
        text = (fa.ROOT / path).read_text(encoding="utf-8", errors="replace").splitlines()
        assert fa.findings(text) == [], f"{engine}: {path} raises findings"


def test_audit_sees_a_warranted_finding():
    """The audit can fail: a real degradation sentence of vLLM (marlin_utils_fp4.py) rendered in its
    line shape gives its WEIGHT_ONLY_SUBSTITUTION row."""
    fa = load_tool("finding_audit")
    t = next(t for t in fa.templates("vllm") if t["template"].startswith("Your GPU does not have native support for FP4"))
    codes = {f["code"] for f in fa.findings([fa.rendered("vllm", t, 0)])}
    assert codes == {"WEIGHT_ONLY_SUBSTITUTION"}
