"""Era hints that no release satisfies together are said to disagree (analysis/era.py ``EraGuess.split``), and the
API server's process tag dates from 0.10.0, not 0.10.2 (patterns/vllm/pack.toml ``process-apiserver``).

New-user trial 37 on a real vLLM 0.10.1.x log (vllm-project/vllm#24377, Jetson Thor, NVFP4, 2025-09-07): its
``(EngineCore_0 pid=N)`` lines (<0.10.2) beside ``(APIServer pid=N)`` lines (then dated >=0.10.2) gave the union
'releases 0.8.5 .. 0.33.0 fit' and the 0.33.0 ladders, though no release fit both tags.
"""
from __future__ import annotations

from logscan.analysis.era import EraGuess, infer_release
from tests.conftest import runs_of, write_log

CORE = "(EngineCore_0 pid=16272) INFO 09-07 00:57:36 [cuda.py:275] Using FlashInfer backend on V1 engine.\n"


def test_apiserver_tag_beside_enginecore_0_is_a_0_10_1_log(tmp_path):
    log = write_log(tmp_path, CORE + "(APIServer pid=16152) RuntimeError: Engine core initialization failed. See root "
                                     "cause above. Failed core proc(s): {}\n")
    (run,) = runs_of(log)
    assert run["engine"]["ladder_version"] == "0.10.1.1"
    assert "no release fits them all" not in run["engine"]["version_evidence"]


def test_disjoint_tags_are_said_to_disagree(tmp_path):
    log = write_log(tmp_path, CORE + "(Worker_TP0 pid=16273) INFO 09-07 00:57:37 [cuda.py:275] "
                                     "Using FlashInfer backend on V1 engine.\n")
    (run,) = runs_of(log)
    assert "no release fits them all" in run["engine"]["version_evidence"]


class _Hint:
    def __init__(self, why, rels):
        self.why, self.rels = why, set(rels)

    def allows(self, rel):
        return rel in self.rels


def test_split_only_when_no_winner_fits_every_agreeing_hint():
    known = ["0.8.5", "0.9.2", "0.10.2", "0.11.2"]
    both = infer_release([_Hint("a", known[:3]), _Hint("b", known[1:])], known)
    assert both.releases == ["0.9.2", "0.10.2"] and not both.split
    apart = infer_release([_Hint("a", known[:2]), _Hint("b", known[2:])], known)
    assert apart.releases == known and apart.split
    assert isinstance(apart, EraGuess) and "no release fits them all" in apart.describe()
