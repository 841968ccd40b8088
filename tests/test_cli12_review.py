"""Review leftovers (task cli12): the log's GPU as it spells it, one memo idiom, the C++ abort as data."""
from __future__ import annotations

import functools
import re
from pathlib import Path
from types import SimpleNamespace

from logscan.analysis.ladders import LadderIndex
from logscan.analysis.run_checks import judged_machine
from logscan.analysis.runstate import RunState
from logscan.packs.loader import default_packs

ROOT = Path(__file__).resolve().parent.parent


def test_judged_machine_reads_the_logs_gpu_with_underscores(monkeypatch):
    # sglang-001's tuning-config path names 'device_name=NVIDIA_A100-SXM4-80GB'. resolve_gpu reads
    # '_' as a separator today; judged_machine must not rest on that, but read the log's spelling
    # through resolve_logged_gpu, as infer.py and the notes do (a resolve_gpu that takes no '_')
    from logscan.analysis import gpus

    plain = gpus.resolve_gpu
    monkeypatch.setattr(gpus, "resolve_gpu", lambda t: None if t and "_" in t else plain(t))
    run = RunState(index=0, source="x.log", first_line=1, last_line=1, engine="sglang")
    run.config.gpu = "NVIDIA_A100-SXM4-80GB"
    machine, origin = judged_machine(SimpleNamespace(gpu=None, cuda=None), run)
    assert origin == "log" and machine.cc == 80 and machine.gpu.startswith("A100")


def test_ladder_memo_is_a_cached_property_and_no_module_memoises_through_dict_setdefault():
    assert isinstance(LadderIndex.__dict__["_elsewhere_memo"], functools.cached_property)
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "logscan").rglob("*.py")
            if "__dict__.setdefault(" in p.read_text(encoding="utf-8")]
    assert hits == []


def test_the_cxx_abort_banner_is_rule_data_not_a_regex_in_failhead():
    rules = {cr.rule.id: cr.rule for p in default_packs().packs.values() for cr in p.rules}
    assert rules["lmdeploy.uncaught.cxx-terminate"].cxx_abort
    assert not any(r.cxx_abort for rid, r in rules.items() if rid != "lmdeploy.uncaught.cxx-terminate")
    src = (ROOT / "logscan" / "analysis" / "failhead.py").read_text(encoding="utf-8")
    assert not re.search(r"terminate called after throwing", src.split('"""', 2)[2].replace("``", ""))
