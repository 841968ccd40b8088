"""A run-fact rule cannot swallow a kernel sentence (analysis/targets.py stated_fact, close.py;
patterns/lexicon.toml [target] kinds with `config`). Issue #16 trial: TGI's 'Disabling exllama v2 and
using v1 instead ...' was read by a fact rule, so the sweep never saw it (it takes only lines no rule
read) and the event-target check skipped it (rules with `sets` were exempt): it was neither a selection
nor 'not understood'. Now a fact rule whose line names a kernel as its choice is placed or listed,
unless it states that name as a fact the report shows (the config line, or the pack's
[kernel_facts]). Measured on the 751 bundled logs: 0 new 'not understood' entries (3 before the
exemption, all vLLM's 'Using gptq_marlin kernel.' whose name is the quantization the config line shows).
"""
from __future__ import annotations

import shutil
from pathlib import Path

import logscan
from tests.conftest import FIXTURES

PATTERNS = Path(logscan.__file__).resolve().parent.parent / "patterns"
#: tgi-108 line 14, reworded as a later release might name the kernel it keeps
LINE = ("2024-03-14T02:47:00.825279Z  WARN text_generation_launcher: Disabling exllama v2 and using "
        "ExllamaV1QuantLinear instead because there are issues when sharding\n")


def _patterns(tmp_path: Path, *, shown: bool) -> Path:
    """The shipped packs, with the TGI swap rule widened to take any name after 'using' (as a pack
    author might for a new wording) and, unless ``shown``, TGI's [kernel_facts] table dropped."""
    dst = tmp_path / "patterns"
    shutil.copytree(PATTERNS, dst)
    rules = dst / "tgi" / "rules" / "10-failures.toml"
    text = rules.read_text(encoding="utf-8")
    assert "(?P<to>v1)" in text
    rules.write_text(text.replace("(?P<to>v1)", "(?P<to>\\w{1,40})"), encoding="utf-8")
    if not shown:
        pack = dst / "tgi" / "pack.toml"
        text = pack.read_text(encoding="utf-8")
        pack.write_text(text[:text.index("[kernel_facts]")], encoding="utf-8")
    return dst


def _unread(report) -> list:
    return [u for r in report.runs for u in r.unexplained if u.kind == "unread"]


def test_a_fact_rule_that_keeps_the_kernel_in_no_shown_fact_lists_the_line(tmp_path):
    rep = logscan.scan([LINE], patterns=_patterns(tmp_path, shown=False))
    (run,) = rep.runs
    assert run.config.extra["exllama_version"] == "ExllamaV1QuantLinear"  # a fact only the JSON holds
    [u] = _unread(rep)
    assert u.line == 1 and u.rule == "tgi.fallback.exllama-version-swap"
    assert "names kernel ExllamaV1QuantLinear as its choice (using)" in u.why


def test_a_fact_the_report_shows_is_understood(tmp_path):
    rep = logscan.scan([LINE], patterns=_patterns(tmp_path, shown=True))  # 'switches exllama=...'
    assert not _unread(rep)


def test_a_method_name_the_config_line_shows_is_understood():
    # vllm-016 line 2: 'Using gptq_marlin kernel.' sets quantization = gptq_marlin (a method name by
    # the corpus rules, shared/corpus/README.md); vllm-289 the same on 0.7.0
    for rel in ("vllm/vllm-016.log", "vllm/vllm-289.log"):
        rep = logscan.scan(str(FIXTURES / rel))
        assert rep.runs[0].config.quantization == "gptq_marlin"
        assert not _unread(rep), rel
