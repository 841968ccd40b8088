"""Fail closed on the engine release (issue 12, case 1).

A policy rule scoped by ``versions`` used to match only a run whose log printed a release:
a source build (vllm-005: ``0.1.dev14910+g20b14095a``, releases 0.10.2 .. 0.33.0 inferred) or
a log with no version line slipped past it. The property test says it for every policy:
over (policy rule x release known / inferred / unknown x finding), the gate never passes a
check where the same rule with an explicit release inside the range would fail it.
"""
from __future__ import annotations

import datetime as dt
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from logscan.gate.evaluate import VERDICT_ORDER, Verdict, evaluate
from logscan.gate.policy import AllowEntry, Located, Policy, PolicyRule
from logscan.gate.releases import Release, probe_versions, release_of
from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

PACKS = default_packs()
TODAY = dt.date(2026, 6, 1)
README_RULE = PolicyRule(engine="vllm", versions=">=0.10", scheme="NVFP4*", cost_classes=["weight_only"],
                         codes=["FP8_PER_TENSOR_FALLBACK"], kernels=["Marlin*"], level="fail",
                         reason="NVFP4 must run W4A4 on the B200 fleet")
#: real logs with different findings: NVFP4 weight-only (vllm-005), a failed start (vllm-019),
#: MoE + linear (vllm-024), FP8 (vllm-009)
REPORTS = {name: scan_inputs([str(FIXTURES / "vllm" / f"{name}.log")], PACKS)
           for name in ("vllm-005", "vllm-019", "vllm-024", "vllm-009")}


def _policy(rules: list[PolicyRule], allow: list[AllowEntry] = ()) -> Policy:
    return Policy(source="p.toml", rules=[Located(r, f"p.toml:{i + 1}") for i, r in enumerate(rules)],
                  allow=[Located(a, f"p.toml:a{i + 1}") for i, a in enumerate(allow)])


def _with_release(report, version, source, rng=None):
    out = report.model_copy(deep=True)
    for run in out.runs:
        run.engine.version, run.engine.version_source, run.engine.release_range = version, source, rng
    return out


def _verdicts(report, policy):
    """Verdict per problem, keyed by (run, line, code): the fold may keep the selection or the
    finding of one problem as its check, so names can differ while the problem is the same."""
    res = evaluate(report, policy, PACKS.findings, TODAY)
    # an expired allow entry that matched nothing is a check of its own (a warning): not compared
    by_key: dict = {}
    for c in res.checks:
        if c.kind != "allow":
            k = (c.run, c.line, c.code or c.kind)
            by_key[k] = min(by_key.get(k, c.verdict), c.verdict, key=VERDICT_ORDER.__getitem__)
    return by_key, res


def test_readme_rule_fails_a_source_build_as_it_fails_a_logged_release():
    """vllm-005 with the README's rule and no allow entry: FAIL, saying the release was inferred."""
    report = REPORTS["vllm-005"]
    assert report.runs[0].engine.release_range == ["0.10.2", "0.33.0"]
    res = evaluate(report, _policy([README_RULE]), PACKS.findings, TODAY)
    assert res.verdict == Verdict.fail
    failed = [c for c in res.checks if c.verdict == Verdict.fail]
    assert failed and "release inferred, 0.10.2–0.33.0" in failed[0].message
    assert failed[0].decided_by == "p.toml:1"


def test_straddling_range_takes_the_stricter_reading():
    report = _with_release(REPORTS["vllm-005"], None, "inferred", ["0.9.2", "0.11.0"])
    rule = README_RULE.model_copy(update={"versions": ">=0.10.1"})
    res = evaluate(report, _policy([rule]), PACKS.findings, TODAY)
    assert res.verdict == Verdict.fail
    assert "stricter reading" in [c for c in res.checks if c.verdict == Verdict.fail][0].message
    # a pass rule for old releases cannot excuse a range that reaches newer ones
    lenient = PolicyRule(versions="<0.10", cost_classes=["weight_only"], level="pass")
    warn = PolicyRule(cost_classes=["weight_only"], level="warn")
    assert evaluate(report, _policy([lenient, warn]), PACKS.findings, TODAY).verdict == Verdict.warn
    # an allow entry scoped to old releases only does not cover the range either
    allow = AllowEntry(versions="<0.10", cost_classes=["weight_only"], reason="x", expires=dt.date(2030, 1, 1))
    assert evaluate(report, _policy([rule], [allow]), PACKS.findings, TODAY).verdict == Verdict.fail


def test_logged_release_outside_the_rule_still_passes_it():
    """Precision: a release the log printed is matched as written (no stricter reading)."""
    report = _with_release(REPORTS["vllm-005"], "0.9.2", "logged")
    res = evaluate(report, _policy([README_RULE, PolicyRule(cost_classes=["weight_only"], level="warn")]),
                   PACKS.findings, TODAY)
    assert res.verdict == Verdict.warn


def test_release_of_reads_the_engine_info():
    r = REPORTS["vllm-005"].runs[0].engine
    assert release_of(r) == Release(low="0.10.2", high="0.33.0", inferred=True)
    assert release_of(None).describe() == "release unknown"
    logged = REPORTS["vllm-005"].runs[0].engine.model_copy(update={"version": "0.11.0", "version_source": "logged"})
    assert release_of(logged) == Release(exact="0.11.0")


# -- the property ----------------------------------------------------------------------------

GRID = [f"0.{m}.{p}" for m in range(4, 14) for p in range(0, 3)] + ["0.10.2.post1", "0.11.0rc1", "1.0.0"]
OPS = ["<", "<=", ">", ">=", "==", "!=", "~="]
SPEC = st.builds(lambda op, v, v2, two: f"{op}{v}" + (f",<{v2}" if two else ""),
                 st.sampled_from(OPS), st.sampled_from(GRID), st.sampled_from(GRID), st.booleans())
TARGET = st.sampled_from([{"cost_classes": ["weight_only"]}, {"codes": ["WEIGHT_ONLY_SUBSTITUTION"]},
                          {"kernels": ["Marlin*"]}, {"codes": ["START_FAILED"]}, {"codes": ["NO_KERNEL_SEEN"]},
                          {"kernels": ["*"]}, {"cost_classes": ["native"]}, {"codes": ["FP8_PER_TENSOR_FALLBACK"]},
                          {"codes": ["RANK_DIVERGENCE", "UNTUNED_SHAPE", "OPTIONAL_PACKAGE_MISSING"]}])
RULE = st.builds(lambda spec, target, level, eng: PolicyRule(versions=spec, level=level, engine=eng, **target),
                 st.one_of(st.none(), SPEC), TARGET, st.sampled_from(["fail", "warn", "pass"]),
                 st.sampled_from([None, "vllm", "sglang"]))
ALLOW = st.builds(lambda spec, target, exp: AllowEntry(versions=spec, reason="r", expires=exp, **target),
                  st.one_of(st.none(), SPEC), TARGET, st.sampled_from([dt.date(2026, 1, 1), dt.date(2030, 1, 1)]))
N = int(os.environ.get("LOGSCAN_PROPERTY_EXAMPLES", "150"))


@settings(max_examples=N, deadline=None)
@given(rules=st.lists(RULE, min_size=1, max_size=4), allow=st.lists(ALLOW, max_size=2),
       name=st.sampled_from(sorted(REPORTS)), lo=st.sampled_from(GRID), hi=st.sampled_from(GRID),
       defaults=st.booleans())
def test_gate_never_passes_what_an_explicit_release_would_fail(rules, allow, name, lo, hi, defaults):
    if Version(lo) > Version(hi):
        lo, hi = hi, lo
    from logscan.gate import default_policy_path
    from logscan.gate.policy import load_policy

    extra = load_policy(None, set(PACKS.findings.code), default_policy_path()).rules if defaults else []
    pol = _policy(rules, allow)
    pol.rules += extra
    base = REPORTS[name]
    inferred, ri = _verdicts(_with_release(base, None, "inferred", [lo, hi]), pol)
    unknown, ru = _verdicts(_with_release(base, None, "unknown"), pol)
    for v in GRID:
        known, rk = _verdicts(_with_release(base, v, "logged"), pol)
        checks = [(unknown, ru, "unknown release")]
        if Version(lo) <= Version(v) <= Version(hi):
            checks.append((inferred, ri, f"inferred {lo}-{hi}"))
        for got, res, what in checks:
            assert VERDICT_ORDER[res.verdict] <= VERDICT_ORDER[rk.verdict], f"gate: {what} {res.verdict}, {v} {rk.verdict}"
            for key, k in known.items():
                if key in got:
                    assert VERDICT_ORDER[got[key]] <= VERDICT_ORDER[k], f"{key}: {what} {got[key]}, {v} {k}"


def test_probe_versions_cover_each_side_of_a_bound():
    pts = [Version(p) for p in probe_versions(Release(), [">0.10.2", "<0.11"])]
    assert Version("0.10.2") in pts and any(Version("0.10.2") < p < Version("0.10.3") for p in pts)
    assert Version("0.11.dev0") in pts and Version("99999") in pts
    inside = probe_versions(Release(low="0.10.2", high="0.33.0", inferred=True), [">=0.12"])
    assert all(Version("0.10.2") <= Version(p) <= Version("0.33.0") for p in inside)
