"""Engine identification by evidence (identity rules are pack data; no evidence gives ``unknown``)."""
from __future__ import annotations

import shutil
from pathlib import Path

from logscan.packs.loader import load_packs, patterns_root
from logscan.pipeline import scan_inputs

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _engines(tmp_path, text, packs=None):
    log = tmp_path / "x.log"
    log.write_text(text)
    rep = scan_inputs([str(log)], packs=packs)
    return [(r.engine.name, r.engine.read_with, r.engine.identified_by) for r in rep.runs]


def test_traceback_path_names_vllm(tmp_path):
    # real lines (corpus vllm-029, vLLM 0.6.3): the error first, the package path later
    text = ("NotImplementedError: Error in calling custom op cutlass_scaled_mm: No compiled cutlass_scaled_mm for a "
            "compute capability less than CUDA device capability: 75\n"
            "Traceback (most recent call last):\n"
            '  File "/root/miniconda3/lib/python3.12/site-packages/vllm/engine/multiprocessing/engine.py", line 141, '
            "in from_engine_args\n")
    [(name, read, why)] = _engines(tmp_path, text)
    assert name == "vllm" and read == "vllm"
    assert why.startswith("line 3:")


def test_generic_lines_only_say_unknown(tmp_path):
    # a Triton / ptxas failure (corpus sglang-006) names no engine: never guess one
    text = ('  File "/usr/local/lib/python3.12/dist-packages/triton/compiler/compiler.py", line 359, in compile\n'
            "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
            "RuntimeError: Unsupported kernel config for moe heuristic dispatch\n")
    runs = _engines(tmp_path, text)
    assert runs, "the lines are still read"
    for name, read, why in runs:
        assert name == "unknown"
        assert read in ("vllm", "sglang")
        assert "no line names the engine" in why


def test_prefix_names_the_engine_and_a_foreign_path_does_not_split(tmp_path):
    text = ("(EngineCore pid=1) INFO 06-24 14:35:38 [mxfp4.py:514] Using 'EMULATION' Mxfp4 MoE backend.\n"
            '  File "/x/sglang/srt/layers/quantization/fp8.py", line 2500, in apply\n')
    runs = _engines(tmp_path, text)
    assert [r[0] for r in runs] == ["vllm"]
    assert "vLLM line prefix" in runs[0][2]


def test_a_new_pack_identifies_its_engine_by_data_alone(tmp_path):
    root = tmp_path / "patterns"
    shutil.copytree(patterns_root(), root)
    new = root / "newengine"
    (new / "rules").mkdir(parents=True)
    (new / "pack.toml").write_text('[pack]\nengine = "newengine"\ntitle = "NewEngine"\n')
    (new / "rules" / "05-identity.toml").write_text(
        '[[rule]]\nid = "newengine.identity.path"\nkind = "identity"\n'
        'description = "a frame inside the newengine package"\n'
        "pattern = 'newengine/\\w+\\.py'\nkeywords = [\"newengine/\"]\n"
        'examples = ["  File \\"/x/newengine/server.py\\", line 1"]\n')
    packs = load_packs(root)
    text = ('  File "/x/newengine/server.py", line 1, in main\n'
            "RuntimeError: No compiled cutlass_scaled_mm for a compute capability less than CUDA device capability: 75\n")
    runs = _engines(tmp_path, text, packs=packs)
    assert runs and runs[0][0] == "newengine", runs
