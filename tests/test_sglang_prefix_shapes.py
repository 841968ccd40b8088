"""SGLang line prefixes seen in real logs beyond SGLang's own formats (docs/grammar.md).

The '[time][LEVEL]: TP1 ' shape (a deployment's logging format that moves the rank list into the
message: sgl-project/sglang#9508, sglang-216; #10711, sglang-233) is read as SGLang's prefix with
its level and rank, so a cause line no longer quotes '[ERROR]: TP1'.
"""
from __future__ import annotations

import pytest

from logscan.packs.loader import default_packs
from logscan.pipeline import scan_inputs
from logscan.sources.prefix import PrefixParser
from tests.conftest import FIXTURES

LOGS = FIXTURES / "sglang"


@pytest.fixture(scope="module")
def parser():
    return PrefixParser(default_packs())


@pytest.mark.parametrize("log,level,rank", [("sglang-216", "ERROR", "TP1"), ("sglang-233", "WARNING", "TP1")])
def test_level_bracket_rank_prefix_on_real_logs(parser, log, level, rank):
    first = (LOGS / f"{log}.log").read_text().splitlines()[0]
    rec = parser.parse(log, 1, first)
    assert rec.prefix_format == "sglang-level-bracket-rank"
    assert (rec.level, rec.rank) == (level, rank)
    assert not rec.message.startswith("[") and not rec.message.startswith("TP")


def test_level_bracket_prefix_needs_the_rank_list(parser):
    """Without SGLang's rank list the shape is any Python app's: not claimed by this format."""
    rec = parser.parse("t", 1, "[2025-09-21 17:10:28][WARNING]: Using default MoE kernel config.")
    assert rec.prefix_format != "sglang-level-bracket-rank"
    rec = parser.parse("t", 1, "[2025-09-21 17:10:28][WARNING]: TPU backend not found")
    assert rec.prefix_format != "sglang-level-bracket-rank"


def test_the_failed_start_cause_drops_the_prefix():
    (run,) = scan_inputs([str(LOGS / "sglang-216.log")]).runs
    assert run.start_failure is not None
    assert "[ERROR]" not in run.start_failure.headline and "TP1 Scheduler" not in run.start_failure.headline

