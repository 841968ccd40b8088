"""Hostile input: nothing a log contains may crash logscan, stall it, or make it lose a line.

Each test builds the input, runs the real scan (every prefilter engine available here, and
none), and asserts on behaviour: what is reported, which lines are kept, what the exit status
is. Speed is measured by ``bench/throughput.py``, not here (no timed assertions), except that
the regex audit uses ``regex``'s timeout as a catastrophe detector (seconds, where a linear
pattern takes microseconds).
"""
from __future__ import annotations

import gzip
import json
import re._constants as sre_c
import re._parser as sre_parse
import tracemalloc

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.packs.loader import default_packs, patterns_root
from logscan.pipeline import scan_inputs
from logscan.sources.prefilter import available_backends

MODES = ["off", *available_backends()]
KERNEL = "(Worker_TP0 pid=7) INFO 01-07 13:43:10 [modelopt.py:916] Using flashinfer-cutlass for NVFP4 GEMM"


def _scan(path, mode):
    return json.loads(scan_inputs([str(path)], prefilter=mode).model_dump_json())


def _rules(report):
    return [(e["line"], e["rule"]) for e in report["events"]]


# -- a 20 MB line without a newline -------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_a_20_mb_line_without_newline_is_cut_reported_and_costs_no_memory(tmp_path, mode):
    p = tmp_path / "huge.log"
    with p.open("wb") as fh:
        fh.write(KERNEL.encode() + b"\n")
        fh.write(b"Failed to find a kernel " + b"A" * (20 * 1024 * 1024))  # no newline at the end
    tracemalloc.start()
    try:
        report = _scan(p, mode)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    st = report["inputs"][0]
    assert st["lines"] == 2 and st["truncated_lines"] == 1 and st["bytes"] == p.stat().st_size
    assert _rules(report)[0] == (1, "vllm.linear.format-gemm")
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB for a 20 MiB line: the line was held"
    out = CliRunner().invoke(cli, ["scan", str(p)])
    assert out.exit_code == 0 and "over-long line(s) cut" in out.output


@pytest.mark.parametrize("mode", MODES)
def test_the_line_after_a_20_mb_line_keeps_its_number(tmp_path, mode):
    p = tmp_path / "huge2.log"
    p.write_bytes(b"x" * (20 * 1024 * 1024) + b"\n" + KERNEL.encode() + b"\n")
    report = _scan(p, mode)
    assert _rules(report) == [(2, "vllm.linear.format-gemm")]
    assert report["inputs"][0]["truncated_lines"] == 1


# -- NUL bytes and invalid UTF-8 ------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_nul_bytes_anywhere_are_dropped_and_the_kernel_line_still_read(tmp_path, mode):
    k = KERNEL.encode()
    i = k.index(b"GEMM")
    p = tmp_path / "nul.log"
    p.write_bytes(b"\x00" * 5000 + b"\n" + k[:i + 2] + b"\x00\x00" + k[i + 2:] + b"\n\x00\n" + b"a\x00b\n")
    report = _scan(p, mode)
    assert _rules(report) == [(2, "vllm.linear.format-gemm")]
    assert report["events"][0]["message"].endswith("for NVFP4 GEMM")
    assert report["inputs"][0]["lines"] == 4
    assert report["inputs"][0]["nul_bytes"] == 5004  # counted whether the line was decoded or skipped


def test_damaged_input_gets_one_note_in_the_text_report(tmp_path):
    """Random bytes: the text report says what was repaired, not only that nothing was recognised."""
    import random

    rnd = random.Random(7)
    p = tmp_path / "junk.bin"
    p.write_bytes(bytes(rnd.randrange(256) for _ in range(50_000)))
    st = _scan(p, "off")["inputs"][0]
    out = CliRunner().invoke(cli, ["scan", str(p)]).output
    notes = [ln for ln in out.splitlines() if ln.startswith("! ")]
    assert len(notes) == 1, out
    assert f"{st['decode_errors']} line(s) of invalid UTF-8" in notes[0] and st["decode_errors"] > 100
    assert f"{st['nul_bytes']} NUL byte(s) removed" in notes[0] and st["nul_bytes"] > 100


def test_over_long_line_notice_goes_to_stderr_once(tmp_path):
    p = tmp_path / "long.log"
    p.write_bytes(b"x" * (2 * 1024 * 1024) + b"\n" + b"y" * (2 * 1024 * 1024) + b"\n" + KERNEL.encode() + b"\n")
    r = CliRunner().invoke(cli, ["scan", str(p)])
    assert r.exit_code == 0
    assert r.stderr.count("over-long line(s) cut") == 1 and "2 over-long" in r.stderr
    assert r.stdout.count("over-long line(s) cut") == 1


@pytest.mark.parametrize("mode", MODES)
def test_invalid_utf8_is_replaced_and_counted_in_skipped_lines_too(tmp_path, mode):
    noise = [b"INFO 01-07 13:43:10 [logger.py:39] Received request abc: prompt: 'caf\xe9 \xff\xfe'"] * 50
    p = tmp_path / "latin1.log"
    p.write_bytes(b"\n".join(noise + [b"\xc3\x28" + KERNEL.encode()[2:], b"ok \xe2\x82"]) + b"\n")
    report = _scan(p, mode)
    st = report["inputs"][0]
    assert st["decode_errors"] == 52  # every line with a bad byte, whether it was decoded or skipped
    assert [r for _, r in _rules(report)] == ["vllm.linear.format-gemm"]
    assert "\ufffd" in report["events"][0]["message"] or report["events"][0]["line"] == 51


# -- truncated gzip -----------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_truncated_gzip_keeps_every_line_before_the_damage(tmp_path, mode):
    body = "".join(f"INFO 01-07 13:43:10 [x.py:1] line {i}\n" for i in range(40000)) + KERNEL + "\n"
    blob = gzip.compress(body.encode())
    p = tmp_path / "cut.log.gz"
    p.write_bytes(blob[: len(blob) - 200])
    report = _scan(p, mode)
    st = report["inputs"][0]
    assert st["error"] and ("early" in st["error"] or "corrupt" in st["error"])
    assert 39000 < st["lines"] <= 40001
    full = tmp_path / "full.log"
    full.write_bytes(body.encode()[: st["bytes"]])
    assert _scan(full, "off")["inputs"][0]["lines"] == st["lines"]  # exactly the lines before the cut
    r = CliRunner().invoke(cli, ["scan", str(p)])
    assert r.exit_code == 2 and "ends early or is corrupt" in r.output  # docs/fail-closed.md: damaged = 2


def test_gzip_cut_inside_its_header_is_an_unreadable_input(tmp_path):
    p = tmp_path / "head.gz"
    p.write_bytes(gzip.compress(b"x\n" * 100)[:6])
    r = CliRunner().invoke(cli, ["scan", str(p)])
    assert r.exit_code == 2 and "Traceback" not in r.output


# -- CRI stream cut inside a partial line ---------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("newline", [b"\n", b""])
def test_cri_stream_cut_inside_a_partial_line_keeps_the_part(tmp_path, mode, newline):
    half = KERNEL  # the whole message, in two P parts, and the F part never comes
    p = tmp_path / "cri.log"
    p.write_bytes(b"2026-01-07T13:43:09Z stdout F (APIServer pid=1) INFO 01-07 13:43:09 [api_server.py:1] up\n"
                  + f"2026-01-07T13:43:10.1Z stdout P {half[:40]}\n".encode()
                  + f"2026-01-07T13:43:10.2Z stdout P {half[40:]}".encode() + newline)
    report = _scan(p, mode)
    assert report["inputs"][0]["lines"] == 3
    ev = [e for e in report["events"] if e["line"] == 2]
    assert ev and ev[0]["message"].endswith("for NVFP4 GEMM")  # the joined parts, numbered at the first
    assert report == _scan(p, "off")


# -- regexes: no catastrophic backtracking ---------------------------------------------------------

def _patterns():
    for pack in default_packs().packs.values():
        for cr in pack.rules:
            yield cr.rule.id, cr.regex, cr.rule
            if cr.item_regex is not None:
                yield cr.rule.id + "#item", cr.item_regex, cr.rule
        for pf in pack.wrappers + pack.processes + pack.prefixes:
            yield f"{pack.engine}:{pf.spec.id}", pf.regex, None


PATTERNS = list(_patterns())
_REPEATS = {sre_c.MAX_REPEAT, sre_c.MIN_REPEAT} | ({sre_c.POSSESSIVE_REPEAT} if hasattr(sre_c, "POSSESSIVE_REPEAT") else set())


def _unbounded_inside(tree) -> bool:
    for op, av in tree:
        if op in _REPEATS:
            if av[1] == sre_c.MAXREPEAT or _unbounded_inside(av[2]):
                return True
        elif op == sre_c.SUBPATTERN and _unbounded_inside(av[-1]):
            return True
        elif op == sre_c.BRANCH and any(_unbounded_inside(b) for b in av[1]):
            return True
    return False


def _nested_unbounded(tree) -> bool:
    """An unbounded repeat holding another unbounded repeat: ``(x+)+``, ``(\\w+\\s?)*``."""
    for op, av in tree:
        if op in _REPEATS:
            if av[1] == sre_c.MAXREPEAT and _unbounded_inside(av[2]):
                return True
            if _nested_unbounded(av[2]):
                return True
        elif op == sre_c.SUBPATTERN and _nested_unbounded(av[-1]):
            return True
        elif op == sre_c.BRANCH and any(_nested_unbounded(b) for b in av[1]):
            return True
        elif op in (sre_c.ASSERT, sre_c.ASSERT_NOT) and _nested_unbounded(av[1]):
            return True
    return False


def test_the_nesting_audit_can_fail():
    assert _nested_unbounded(sre_parse.parse(r"(?:\w+\s?)*x")) and _nested_unbounded(sre_parse.parse(r"(a+)+"))
    assert not _nested_unbounded(sre_parse.parse(r"(?:-SM\d{2,3})*x")) and not _nested_unbounded(sre_parse.parse(r"a+b+"))


def test_no_pack_pattern_nests_unbounded_repeats():
    nested, unparsed = [], []
    for name, rx, _ in PATTERNS:
        try:
            tree = sre_parse.parse(rx.pattern, rx.flags & 0x1F)
        except Exception:  # regex-module syntax Python's parser does not know: the timeout audit covers it
            unparsed.append(name)
            continue
        if _nested_unbounded(tree):
            nested.append(name)
    assert not nested, f"nested unbounded quantifiers backtrack catastrophically: {nested}"
    assert len(unparsed) < len(PATTERNS) // 4, unparsed


def _adversarial(rule) -> list[str]:
    """Strings built to make a pattern try many ways: its keywords and examples repeated and cut."""
    out = ["a" * 3000, " " * 3000, "1" * 3000, "[" * 1500, "(" * 1500, "-" * 3000, "9." * 1500,
           "x=" * 1500, ", " * 1500, "\\" * 2000, "'" * 2000, "é" * 2000]
    if rule is not None:
        for k in rule.keywords[:6]:
            out += [(k + " ") * 120, k * (2000 // max(1, len(k))), k + " " + "a1_-. " * 500]
        for e in (rule.examples + rule.counter_examples)[:4]:
            out += [" ".join([e] * 15), " ".join([e[:-1]] * 15), e + " " + "x" * 3000,
                    e.replace(" ", "  ") * 4, e[: len(e) // 2] * 40]
    return out


#: seconds; a linear pattern takes microseconds on these strings
CATASTROPHE = 2.0


def test_no_pack_pattern_backtracks_catastrophically_on_adversarial_lines():
    slow = []
    for name, rx, rule in PATTERNS:
        for s in _adversarial(rule):
            try:
                rx.search(s, timeout=CATASTROPHE)
            except TimeoutError:
                slow.append((name, s[:60]))
                break
    assert not slow, f"patterns that stall on a hostile line (the matcher would give the line up): {slow}"


# -- broken pack files ---------------------------------------------------------------------------

def _pack_copy(tmp_path):
    import shutil

    dst = tmp_path / "patterns"
    shutil.copytree(patterns_root(), dst)
    return dst


@pytest.mark.parametrize("body,needle", [
    ('[[rule]]\nid = "vllm.hostile.regex"\nkind = "failure"\npattern = "a{2,1}(?P<x"\n'
     'keywords = ["xyz"]\nexamples = ["xyz"]\n', "broken regex"),
    ('[[rule]]\nid = "vllm.hostile.key"\nkind = "failure"\npattern = "xyz"\nkeywords = ["xyz"]\n'
     'examples = ["xyz"]\nkeyword = ["typo"]\n', "keyword"),
])
def test_a_broken_pack_rule_names_file_and_rule_and_exits_2(tmp_path, body, needle):
    dst = _pack_copy(tmp_path)
    (dst / "vllm" / "rules" / "99-hostile.toml").write_text(body)
    log = tmp_path / "x.log"
    log.write_text(KERNEL + "\n")
    r = CliRunner().invoke(cli, ["scan", "--patterns", str(dst), str(log)])
    rid = "vllm.hostile.regex" if "regex" in needle else "vllm.hostile.key"
    assert r.exit_code == 2
    assert "99-hostile.toml" in r.output and rid in r.output and needle in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_a_pack_file_that_is_not_toml_is_named_and_exits_2(tmp_path):
    dst = _pack_copy(tmp_path)
    (dst / "vllm" / "rules" / "99-hostile.toml").write_bytes(b"[[rule]\nid = \x00\xff")
    log = tmp_path / "x.log"
    log.write_text(KERNEL + "\n")
    r = CliRunner().invoke(cli, ["scan", "--patterns", str(dst), str(log)])
    assert r.exit_code == 2 and "99-hostile.toml" in r.output and "Traceback" not in r.output


def test_an_unknown_prefilter_engine_is_a_usage_error(tmp_path, monkeypatch):
    log = tmp_path / "x.log"
    log.write_text(KERNEL + "\n")
    monkeypatch.setenv("LOGSCAN_PREFILTER", "warp-drive")
    r = CliRunner().invoke(cli, ["scan", str(log)])
    assert r.exit_code == 2 and "LOGSCAN_PREFILTER='warp-drive'" in r.output and "Traceback" not in r.output
