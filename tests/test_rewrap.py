"""Hard-wrapped pastes: the width detector and the joiner (logscan/sources/rewrap.py), in scan
and follow, with both prefilter engines.

A terminal, tmux or a web console cuts every line longer than its width into pieces of exactly
that width; the real log vllm-001 (fixtures/vllm) is cut the way ``tools/presentation_coverage.py``'s
``hard-wrap-*`` presentations cut it.
"""
from __future__ import annotations

import json

import pytest

from logscan.packs.loader import default_packs
from logscan.pipeline import Pipeline, scan_inputs
from logscan.sources import rewrap
from logscan.sources.prefilter import available_backends

from .conftest import FIXTURES

VLLM_001 = (FIXTURES / "vllm" / "vllm-001.log").read_text(encoding="utf-8")


def _wrap(text: str, width: int) -> str:
    out = []
    for line in text.split("\n")[:-1]:
        out += [line[k:k + width] for k in range(0, len(line), width)] or [""]
    return "\n".join(out) + "\n"


def _joiner():
    return rewrap.joiner(Pipeline(default_packs()).parser)


def _feed_streaming(lines: list[str]) -> list[tuple[int, str, bool]]:
    """What ``logscan follow`` does: the width learnt from the lines seen so far, then the join."""
    width = rewrap.WrapWidth(_joiner())
    rw = rewrap.Rewrapper(width)
    out = []
    for n, line in enumerate(lines, 1):
        width.see(line)
        out += rw.feed(n, line)
    return out + rw.flush()


def _kernels(report: dict) -> list[str]:
    return [s["kernel"] for run in report["runs"] for s in run["selections"]]


def test_the_width_is_the_longest_length_once_two_lines_are_cut_there():
    width = rewrap.WrapWidth(_joiner())
    raw = _wrap(VLLM_001, 100).encode()
    width.measure(raw, len(raw))
    assert width.width == 100 and width.evidence >= 2
    width.see("x" * 101)  # a longer line: no terminal cut at 100
    assert width.width is None


def test_the_unwrapped_log_has_no_width():
    width = rewrap.WrapWidth(_joiner())
    raw = VLLM_001.encode()
    width.measure(raw, len(raw))
    assert width.width is None


def test_rows_of_one_width_and_repeated_messages_are_no_wrap():
    table = ["   | NVIDIA-SMI 550.90.07      Driver Version: 550.90.07      CUDA Version: 12.4     |",
             "   |-----------------------------------------+------------------------+----------------|",
             "   | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Unc ECC |"]
    table = [row.ljust(90, " ")[:89] + "|" for row in table]
    ranks = [f"[2025-03-27 01:03:09 TP{r}] Detected fp8 checkpoint. Please note that the format is experimental."
             for r in range(4)] + ["Loading safetensors checkpoint shards:   0% Completed | 0/163"]
    for lines in (table * 3, ranks):
        assert [t for _, t, _ in _feed_streaming(lines)] == lines


def test_a_line_exactly_the_width_before_a_prefixed_line_stands_alone():
    w = 100
    lines = _wrap(VLLM_001, w).split("\n")[:-1]
    prefixed = ("(VllmWorkerProcess pid=67498) INFO 12-11 21:46:50 model_runner.py:1072] Loading model "
                "weights took 4.0 GB and 2.1 s")[:w]
    assert len(prefixed) == w
    lines = lines + [prefixed, "INFO 12-11 21:46:51 engine.py:1] next line"]
    out = _feed_streaming(lines)
    assert out[-2][1] == prefixed and out[-1][1].startswith("INFO 12-11 21:46:51")


def test_a_line_cut_in_three_is_joined_and_keeps_its_first_line_number():
    w = 80
    original = VLLM_001.split("\n")[3]  # 236 characters: pieces of 80, 80, 76
    assert 2 * w < len(original) <= 3 * w
    lines = _wrap(VLLM_001, w).split("\n")[:-1]
    first = lines.index(original[:w]) + 1
    width = rewrap.WrapWidth(_joiner())
    raw = "\n".join(lines).encode() + b"\n"
    width.measure(raw, len(raw))  # scan: the whole chunk is measured before a line is yielded
    rw = rewrap.Rewrapper(width)
    out = [r for n, line in enumerate(lines, 1) for r in rw.feed(n, line)] + rw.flush()
    assert (first, original, False) in out
    assert [t for _, t, _ in out] == VLLM_001.split("\n")[:-1]  # every line whole, none lost
    assert rw.joined == len(lines) - len(out)


def test_follow_joins_from_the_second_cut_and_holds_one_line_at_most():
    lines = _wrap(VLLM_001, 100).split("\n")[:-1]
    out = _feed_streaming(lines)
    original = VLLM_001.split("\n")[:-1]
    # the first cut precedes any evidence of a width: its pieces pass as they are
    assert out[0][1] == lines[0] and out[1][1] == lines[1]
    assert [t for _, t, _ in out[-6:]] == original[-6:]
    width = rewrap.WrapWidth(_joiner())
    rw = rewrap.Rewrapper(width)
    for n, line in enumerate(lines, 1):
        width.see(line)
        rw.feed(n, line)
        if len(line) < 100:
            assert not rw.pending  # a line shorter than the width is never held
    assert rw.pending or not lines[-1] or len(lines[-1]) < 100


@pytest.mark.parametrize("backend", available_backends() + ["off"])
def test_a_keyword_cut_in_two_reaches_the_matcher_joined(tmp_path, backend):
    # cut at 93: 'Using Marli' | 'nLinearKernel for ...': neither piece holds the keyword
    first = VLLM_001.split("\n")[0]
    w = first.index("MarlinLinearKernel") + 5
    path = tmp_path / "wrapped.log"
    path.write_text(_wrap(VLLM_001, w), encoding="utf-8")
    got = json.loads(scan_inputs([str(path)], prefilter=backend).model_dump_json())
    assert "MarlinLinearKernel" in _kernels(got)
    assert got["runs"][0]["first_line"] == 1
    off = json.loads(scan_inputs([str(path)], prefilter="off").model_dump_json())
    assert got["runs"] == off["runs"] and got["events"] == off["events"]


def test_the_unwrapped_log_reads_as_before(tmp_path):
    path = tmp_path / "plain.log"
    path.write_text(VLLM_001, encoding="utf-8")
    got = json.loads(scan_inputs([str(path)]).model_dump_json())
    assert "MarlinLinearKernel" in _kernels(got)


def test_a_joined_record_ends_at_its_last_piece():
    w = 80
    lines = _wrap(VLLM_001, w).split("\n")[:-1]
    original = VLLM_001.split("\n")[3]
    first = lines.index(original[:w]) + 1
    width = rewrap.WrapWidth(_joiner())
    raw = "\n".join(lines).encode() + b"\n"
    width.measure(raw, len(raw))
    rw = rewrap.Rewrapper(width)
    ends = {}
    for n, line in enumerate(lines, 1):
        for rec in rw.feed(n, line):
            ends[rec[0]] = rw.end_of(rec[0])
    assert ends[first] == first + 2  # three pieces
    assert rw.end_of(10_000) is None


@pytest.mark.parametrize("backend", available_backends())
def test_the_line_after_a_held_line_is_read_even_without_a_keyword(tmp_path, backend, monkeypatch):
    """A held line of the longest length waits for the next line: the reader must hand it on
    (hypothesis found a kernel-not-found event whose keyword-free next line was skipped)."""
    from logscan.sources import reader
    data = (b"\x00(EngineCore_DP0 pid=9) ERROR 01-07 13:43:10 [core.py:700] ValueError: Failed to find a kernel "
            b"that can implement the WNA16 linear layer. Reasons: \n\x01\n(Worker_TP0 pid=7) INFO 01-07 "
            b"13:43:10 [modelopt.py:916] Using flashinfer-cutlass for NVFP4 GEMM")
    path = tmp_path / "h.log"
    path.write_bytes(data)
    monkeypatch.setattr(reader, "CHUNK", 3)
    got = json.loads(scan_inputs([str(path)], prefilter=backend).model_dump_json())
    off = json.loads(scan_inputs([str(path)], prefilter="off").model_dump_json())
    assert got == off


def _follow(path, monkeypatch, mode: str, end: bool = True):
    import io

    from logscan.follow.runner import Follower
    from logscan.packs.loader import load_packs, patterns_root

    monkeypatch.setenv("LOGSCAN_PREFILTER", mode)
    out = io.StringIO()
    f = Follower([str(path)], load_packs(patterns_root()), out, idle_flush=0.0)
    f.poll_once()
    if end:
        f.end_all()
    return f, out.getvalue()


@pytest.mark.parametrize("mode", ["auto", "python", "off"])
def test_follow_reads_a_hard_wrapped_start_up(tmp_path, monkeypatch, mode):
    # the start-up twice, cut at 93 ('Using Marli' | 'nLinearKernel'): the first cuts teach the
    # width, the second start's kernel line is joined and read
    first = VLLM_001.split("\n")[0]
    w = first.index("MarlinLinearKernel") + 5
    path = tmp_path / "wrapped.log"
    path.write_text(_wrap(VLLM_001, w) * 2, encoding="utf-8")
    _, out = _follow(path, monkeypatch, mode)
    assert "MarlinLinearKernel" in out
    _, reference = _follow(path, monkeypatch, "off")
    assert out == reference


def test_follow_holds_a_line_of_the_width_until_a_quiet_spell(tmp_path, monkeypatch):
    w = 100
    lines = _wrap(VLLM_001, w).split("\n")[:-1]
    last = ("(VllmWorkerProcess pid=67498) INFO 12-11 21:46:50 model_runner.py:1072] Loading model "
            "weights took 4.0 GB and 2.1 s")[:w]
    path = tmp_path / "wrapped.log"
    path.write_text("\n".join(lines + [last]) + "\n", encoding="utf-8")
    f, _ = _follow(path, monkeypatch, "auto", end=False)
    (stream,) = f.streams.values()
    assert stream.wrap.width == w and stream.rewrap.pending  # its rest may still come
    f.poll_once()  # nothing new: the idle flush (0 s here) hands the held line on
    assert not stream.rewrap.pending
    assert stream.ck[1] == stream.line  # a checkpoint again, after the last line
    f.end_all()


@pytest.mark.parametrize("backend", available_backends() + ["off"])
def test_a_sentence_whose_pieces_hold_no_keyword_is_read(tmp_path, backend):
    """'vLLM s' | 'erver version 0.26.0': neither piece holds a prefilter keyword, so the reader
    must yield every line while a width holds (LineReader.wrap), not only the prefiltered ones."""
    version = "(APIServer pid=1) INFO 01-07 13:43:10 [api_utils.py:88] vLLM server version 0.26.0, serving model m"
    w = version.index("vLLM server") + len("vLLM s")
    path = tmp_path / "wrapped.log"
    path.write_text(_wrap(version + "\n" + VLLM_001, w), encoding="utf-8")
    got = json.loads(scan_inputs([str(path)], prefilter=backend).model_dump_json())
    assert got["runs"][0]["engine"]["version"] == "0.26.0"


@pytest.mark.parametrize("mode", ["auto", "python"])
def test_follow_reads_a_sentence_whose_pieces_hold_no_keyword(tmp_path, monkeypatch, mode):
    version = "(APIServer pid=1) INFO 01-07 13:43:10 [api_utils.py:88] vLLM server version 0.26.0, serving model m"
    w = version.index("vLLM server") + len("vLLM s")
    path = tmp_path / "wrapped.log"
    path.write_text(_wrap(VLLM_001 + version + "\n" + VLLM_001, w), encoding="utf-8")
    _, out = _follow(path, monkeypatch, mode)
    assert '"0.26.0"' in out
    _, reference = _follow(path, monkeypatch, "off")
    assert out == reference


def test_the_report_says_how_many_lines_were_rejoined(tmp_path):
    path = tmp_path / "wrapped.log"
    path.write_text(_wrap(VLLM_001, 100), encoding="utf-8")
    st = json.loads(scan_inputs([str(path)]).model_dump_json())["inputs"][0]
    cut = sum(max(0, -(-len(line) // 100) - 1) for line in VLLM_001.split("\n"))
    assert st["wrap_width"] == 100 and 0 < st["rejoined_lines"] <= cut
    assert any("hard-wrapped it at 100 columns" in w for w in st["warnings"])
    plain = tmp_path / "plain.log"
    plain.write_text(VLLM_001, encoding="utf-8")
    st = json.loads(scan_inputs([str(plain)]).model_dump_json())["inputs"][0]
    assert "rejoined_lines" not in st and "wrap_width" not in st


def test_a_follow_restart_keeps_the_learnt_width(tmp_path, monkeypatch):
    """The width is part of the checkpoint: a follower restarted from the state file joins the
    next cut as the uninterrupted one does (tests/test_follow_e2e.py's exactly-once scenario
    found a start failure read otherwise after a restart)."""
    from logscan.pipeline import Pipeline as P

    width = rewrap.WrapWidth(_joiner())
    for line in _wrap(VLLM_001, 100).split("\n")[:-1]:
        width.see(line)
    pipe = P(default_packs())
    pipe.wrap = width
    state = json.loads(json.dumps(pipe.checkpoint().to_json()))
    assert state["wrap"]["max"] == 100 and state["wrap"]["evidence"] >= 2
    fresh = P(default_packs())
    fresh.wrap = rewrap.WrapWidth(_joiner())
    fresh.restore(state)
    assert fresh.wrap.width == 100
    with pytest.raises(ValueError):
        fresh.restore({**state, "wrap": {"max": "x"}})


def test_lines_a_console_padded_to_its_width_are_not_cuts():
    """other-111 (GPTQModel's log through a rich console): three lines padded with blanks to 307
    columns, each followed by an unprefixed line; padding ends a whole line, so no width is found
    and nothing is rejoined (without the padding test two of them were joined to the next line)."""
    import json

    from logscan.formats import json as json_format
    from logscan.pipeline import scan_inputs
    from tests.conftest import FIXTURES

    doc = json.loads(json_format.render(scan_inputs([str(FIXTURES / "other" / "other-111.log")])))
    assert not doc["inputs"][0].get("rejoined_lines")
    assert doc["runs"][0]["first_line"] == 2
