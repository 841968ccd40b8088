"""Fuzz suite: generated hostile logs through every subcommand and output format.

Strategies build logs the way attackers and broken pipelines do: raw bytes; real kernel lines
(from ``fixtures/``) wrapped in Kubernetes CRI (``F`` and ``P`` parts), Docker json-file or a
JSON formatter, behind vLLM/SGLang prefixes; digits of any length and kind in pids and config
values; JSON ``\\uXXXX`` escapes that decode to lone surrogates; control characters, line
breaks, ANSI, bidi overrides; workflow commands and Markdown links spliced into messages.

Every example goes through ``tests/helpers/hostile_check.check_log``: no traceback, exit codes
as documented, JSON/JUnit/SARIF parse (SARIF against the official schema), no injection.

Cost: ``LOGSCAN_FUZZ_EXAMPLES`` examples per test (default 12, a few seconds each test on a
loaded 2-core machine); raise it for a longer run, e.g. ``LOGSCAN_FUZZ_EXAMPLES=2000``. A failing
input is printed by hypothesis; with ``LOGSCAN_FUZZ_SAVE=1`` it is also written under
``tests/data/hostile/`` (``fuzz-<hash>.log``), where ``test_hostile_regressions.py`` keeps
running it: commit it with the fix.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logscan.formats.escape import markdown_text, text_line
from logscan.sources.safe import bounded_int, safe_text
from tests.conftest import FIXTURES
from tests.helpers.hostile_check import check_log, check_markdown, check_text, run

EXAMPLES = int(os.environ.get("LOGSCAN_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("LOGSCAN_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
HOSTILE = Path(__file__).parent / "data" / "hostile"


def _real_lines() -> list[str]:
    lines: list[str] = []
    for name in ("vllm/vllm-024.log", "vllm/vllm-009.log", "sglang/sglang-001.log", "trtllm/trtllm-002.log",
                 "llamacpp/llamacpp-001.log", "vllm/vllm-019.log"):
        lines += [ln for ln in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if ln.strip()][:12]
    return lines


REAL = _real_lines()

INJECTIONS = ["\n::error::INJ", "\r\n::set-output name=INJ::1", "\n\n::add-mask::INJ", "##[add-mask]INJ",
              "%0A::error::x", "![x](https://attacker.example/p.png)", "[Fix: click here](https://attacker.example/f)",
              "<img src=x onerror=alert(1)>", "www.attacker.example", "`code`|pipe|", "\x1b]8;;https://a.example\x07l\x1b]8;;\x07",
              "\u202eevil", "\u2028::error::LS", "\x85::error::NEL", "]]></x>", "&amp;&#0;"]
CONTROL = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x9F), max_size=8)
SURROGATE_ESCAPES = st.sampled_from(["\\ud800", "\\udfff", "\\udbff\\udbff", "\\ud83d", "\\udc00x"])
DIGITS = st.one_of(
    st.integers(min_value=0, max_value=6000).map(lambda n: "9" * n),
    st.text(alphabet="0123456789²³¹٣٤۷߂০१๓໒፩①⑫", min_size=1, max_size=40),
)


@st.composite
def messages(draw) -> str:
    """A real line, maybe cut, with hostile fragments spliced in."""
    base = draw(st.sampled_from(REAL))
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(base)))
        base = base[:cut]
    parts = [base]
    for _ in range(draw(st.integers(0, 3))):
        parts.insert(draw(st.integers(0, len(parts))), draw(st.one_of(st.sampled_from(INJECTIONS), CONTROL,
                                                                         DIGITS, st.text(max_size=20))))
    return " ".join(parts)


def _json_escape(text: str, surrogate: str) -> str:
    """``text`` as a JSON string body, with a raw ``\\uD8xx`` escape (``json.dumps`` cannot write one)."""
    return json.dumps(text)[1:-1] + surrogate


@st.composite
def wrapped_line(draw) -> bytes:
    """One physical line: plain, CRI (F, or P then F), Docker json-file, or a JSON formatter record."""
    msg = draw(messages())
    kind = draw(st.sampled_from(["plain", "prefix", "cri", "cri-partial", "docker", "jsonfmt", "jsonfmt-pid"]))
    if kind == "plain":
        return msg.encode("utf-8", "surrogatepass")
    if kind == "prefix":
        d = draw(DIGITS)
        tag = draw(st.sampled_from([f"(EngineCore_0 pid={d}) ", f"(Worker_TP0 pid={d}) ", f"[{d}] ",
                                    f"[2026-01-01 00:00:00 TP{d}] ", ""]))
        cfg = draw(st.sampled_from(["", f" tensor_parallel_size={d}", f" {{'tensor_parallel_size': {d}}}",
                                    f" pipeline_parallel_size={d}, compute_capability={d}"]))
        return (tag + "INFO 05-01 10:00:00 [core.py:58] " + msg + cfg).encode("utf-8", "surrogatepass")
    if kind in ("cri", "cri-partial"):
        ts = "2026-01-01T00:00:00.123456789Z stdout "
        if kind == "cri":
            return (ts + "F " + msg).encode("utf-8", "surrogatepass")
        k = draw(st.integers(0, len(msg)))
        return (ts + "P " + msg[:k] + "\n" + ts + "F " + msg[k:]).encode("utf-8", "surrogatepass")
    sur = draw(st.one_of(st.just(""), SURROGATE_ESCAPES))
    if kind == "docker":
        nl = draw(st.sampled_from(["\\n", "", "\\r\\n"]))
        return ('{"log": "' + _json_escape(msg, sur) + nl + '", "stream": "stdout", "time": "2026-01-01T00:00:00Z"}'
                ).encode("utf-8", "surrogatepass")
    pid = draw(DIGITS) if kind == "jsonfmt-pid" else "1"
    pid = pid if pid.isascii() and pid.isdigit() else json.dumps(pid)
    return ('{"message": "' + _json_escape(msg, sur) + '", "levelname": "INFO", "filename": "a.py", "lineno": '
            + (pid if kind == "jsonfmt-pid" else "1") + ', "processName": "EngineCore_0", "process": ' + pid + "}"
            ).encode("utf-8", "surrogatepass")


LOGS = st.one_of(
    st.lists(wrapped_line(), min_size=1, max_size=8).map(lambda ls: b"\n".join(ls) + b"\n"),
    st.binary(max_size=2000),
    st.lists(st.one_of(wrapped_line(), st.binary(max_size=200)), min_size=1, max_size=6).map(b"\n".join),
)


def _save(data: bytes) -> None:
    if os.environ.get("LOGSCAN_FUZZ_SAVE"):
        HOSTILE.mkdir(parents=True, exist_ok=True)
        (HOSTILE / f"fuzz-{hashlib.sha256(data).hexdigest()[:12]}.log").write_bytes(data)


@FUZZ
@given(data=LOGS)
def test_fuzzed_logs_keep_the_contract_in_every_command_and_format(data):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "fuzz.log"
        p.write_bytes(data)
        try:
            check_log(p, Path(d))
        except BaseException:
            _save(data)
            raise


@settings(FUZZ, max_examples=max(2, EXAMPLES // 4))  # a process each: follow reads a real descriptor
@given(data=LOGS)
def test_fuzzed_logs_followed_from_stdin_keep_the_contract(data):
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "--metrics-addr", "off", "--poll-interval",
                        "0.01", "--idle-flush", "0.05", "-"], input=data, capture_output=True, timeout=120)
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode in (0, 2) and "Traceback" not in err, err[-2000:]
    for line in r.stdout.decode("utf-8").splitlines():  # strict UTF-8: a surrogate cannot reach the output
        json.loads(line)  # JSON lines, one per event: a log line cannot break one


@FUZZ
@given(arg=st.text(max_size=60))
def test_fuzzed_arguments_of_the_ladder_commands_are_usage_errors_or_answers(arg):
    for args in (["explain", arg], ["ladder", "vllm", arg], ["matrix", arg], ["ladder", "vllm", "NVFP4", "--gpu", arg],
                 ["matrix", "FP8", "--cuda", arg], ["scan", "--gpu", arg, str(FIXTURES / "vllm" / "vllm-024.log")]):
        res = run(args)
        assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception))
        assert res.exit_code in (0, 2) and "Traceback" not in res.stderr, (args, res.stderr[-500:])


@FUZZ
@given(text=st.text(max_size=200), sur=st.lists(st.integers(0xD800, 0xDFFF).map(chr), max_size=3))
def test_text_and_markdown_escapes_hold_for_any_text(text, sur):
    s = text + "".join(sur)
    safe = safe_text(s)
    safe.encode("utf-8")
    check_text(text_line(safe))
    check_markdown(markdown_text(safe).replace("<", "&lt;"))


@FUZZ
@given(digits=DIGITS, sign=st.sampled_from(["", "-", "+", " "]))
def test_bounded_int_never_raises_and_keeps_small_ascii_numbers(digits, sign):
    v = bounded_int(sign + digits)
    ok = digits != "" and digits.isascii() and digits.isdigit() and len(digits) <= 18
    assert v == (int(sign + digits) if ok else None)


@pytest.mark.parametrize("policy", [
    "x = " + "[" * 5000 + "]" * 5000, "x = " + "9" * 5000, "[[rule]]\nkernels = ['" + "*" * 5000 + "']\nlevel = 'fail'\n",
    "\ufeff[[rule]]\nkernels = ['x']\nlevel = 'warn'\n", "[[rule]]\nkernels = ['\\ud800']\nlevel = 'fail'\n",
    "[[rule]]\n" * 3 + "level = 'fail'\n", "\x00\x01\x02", "defaults = 1e99999\n",
])
def test_hostile_policies_are_one_line_errors_or_work(tmp_path, policy):
    p = tmp_path / "p.toml"
    p.write_text(policy, encoding="utf-8")
    res = run(["gate", "--policy", str(p), str(FIXTURES / "vllm" / "vllm-024.log")])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (0, 1, 2) and "Traceback" not in res.stderr
    if res.exit_code == 2:
        assert res.stderr.count("\n") == 1, res.stderr


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
              DIGITS),
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)),
    max_leaves=20)


@st.composite
def baselines(draw) -> bytes:
    """A saved report broken in some way: fields replaced by any JSON, escapes, nesting, encodings."""
    report = json.loads(run(["scan", "--format", "json", str(FIXTURES / "vllm" / "vllm-024.log")]).stdout)
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from([("runs",), ("runs", 0, "selections"), ("runs", 0, "engine", "version"),
                                     ("runs", 0, "selections", 0, "kernel"), ("runs", 0, "first_line"),
                                     ("inputs",), ("logscan_version",)]))
        node = report
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = draw(JSON_VALUES)
        except (KeyError, IndexError, TypeError):
            pass
    text = json.dumps(report)
    if draw(st.booleans()):  # a raw surrogate escape in a string value
        text = text.replace('"MARLIN"', '"MARLIN\\ud800"', 1)
    depth = draw(st.sampled_from([0, 0, 5000]))
    if depth:
        text = text[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]))
    return text.encode(enc, "surrogatepass") if enc.startswith("utf-8") else text.encode(enc)


@FUZZ
@given(data=baselines())
def test_fuzzed_baselines_are_reports_or_one_line_errors(data):
    with tempfile.TemporaryDirectory() as d:
        b = Path(d) / "base.json"
        b.write_bytes(data)
        log = FIXTURES / "vllm" / "vllm-024.log"
        for args in (["gate", "--baseline", str(b), str(log)], ["diff", str(b), str(log)],
                     ["diff", "--format", "markdown", str(log), str(b)],
                     ["gate", "--format", "sarif", "--baseline", str(b), str(log)]):
            res = run(args)
            assert res.exception is None or isinstance(res.exception, SystemExit), (args, repr(res.exception))
            assert res.exit_code in (0, 1, 2) and "Traceback" not in res.stderr, (args, res.stderr[-800:])
            if res.exit_code == 2:
                assert res.stderr.count("\n") == 1, res.stderr
            elif "markdown" in args:
                check_markdown(res.stdout)
