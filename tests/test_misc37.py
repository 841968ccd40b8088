"""Older report leftovers (misc37): JSON for an input that cannot be opened, vLLM identity of
vllm-376, the FP8 Marlin fallback explained from the GPU the log states, ranks read from
rank-tagged traceback lines. Real logs wherever one exists (fixtures/)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

LOG = FIXTURES / "vllm" / "vllm-005.log"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "logscan.cli", *args], capture_output=True, text=True,
                          timeout=300)


# 1. an input that cannot be opened still yields a valid JSON document -----------------------------

def _schema(gate=False):
    return json.loads(_cli("schema", *(["--gate"] if gate else [])).stdout)


@pytest.mark.parametrize("cmd", ["scan", "gate"])
def test_json_states_each_unopenable_input_and_reports_the_others(cmd, tmp_path):
    import jsonschema

    p = _cli(cmd, "--format", "json", "nosuch.log", str(tmp_path), str(LOG))
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, _schema(gate=cmd == "gate"))
    errs = {i["source"]: i["error"] for i in doc["inputs"]}
    assert errs == {"nosuch.log": "nosuch.log: No such file or directory",
                    str(tmp_path): f"{tmp_path}: is a directory", str(LOG): None}
    assert [r["source"] for r in doc["runs"]] == [str(LOG)] and doc["runs"][0]["selections"]
    assert "logscan: nosuch.log: No such file or directory" in p.stderr.splitlines()


def test_json_of_a_lone_missing_input_is_a_report_with_no_run():
    p = _cli("scan", "--format", "json", "nosuch.log")
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    assert doc["runs"] == [] and doc["inputs"][0]["error"] == "nosuch.log: No such file or directory"


def test_html_report_names_the_missing_input_and_scans_the_other():
    p = _cli("scan", "--format", "html", "nosuch.log", str(LOG))
    assert p.returncode == 2
    assert "input nosuch.log: nosuch.log: No such file or directory" in p.stdout
    assert str(LOG) in p.stdout


def test_text_still_refuses_before_any_output():
    p = _cli("scan", "nosuch.log", str(LOG))
    assert p.returncode == 2 and p.stdout == ""


@pytest.mark.parametrize("fmt", ["sarif", "junit"])
def test_gate_machine_formats_state_the_unreadable_input(fmt):
    p = _cli("gate", "--format", fmt, "nosuch.log")
    assert p.returncode == 2
    assert "INPUT_UNREADABLE" in p.stdout and "No such file or directory" in p.stdout


@pytest.mark.parametrize("sides,side", [(("nosuch.log", str(LOG)), "old"), ((str(LOG), "nosuch.log"), "new")])
def test_diff_json_names_the_side_that_cannot_be_read(sides, side):
    p = _cli("diff", "--format", "json", *sides)
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    assert doc["error"] == {"side": side, "path": "nosuch.log", "reason": "cannot read: No such file or directory"}
    assert doc["changes"] == [] and doc["new_failures"] == []


# 2. an enum member printed with its class names the engine whose code defines the enum ---------

def _runs(path):
    from tests.conftest import scan_json

    return scan_json(path)["runs"]


def test_vllm_376_is_vllm_by_its_backend_enum_not_trtllm_by_flashinfer_lines():
    (run,) = _runs(FIXTURES / "vllm" / "vllm-376.log")
    assert run["engine"]["name"] == "vllm"
    assert "NvFp4LinearBackend" in run["engine"]["identified_by"]
    assert run["first_line"] == 5  # the FlashInfer '[TensorRT-LLM][ERROR]' line opens no TensorRT-LLM run


def test_enum_classes_of_the_packs_are_disjoint(packs):
    seen: dict[str, str] = {}
    for engine, pack in packs.packs.items():
        for cls in pack.meta.pack.enum_classes:
            assert cls not in seen, (cls, seen.get(cls), engine)
            seen[cls] = engine
    assert seen["NvFp4LinearBackend"] == "vllm" and seen["Fp4GemmRunnerBackend"] == "sglang"


def test_an_sglang_enum_read_by_vllm_rules_names_no_engine(tmp_path):
    from tests.conftest import scan_json, write_log

    # the enum-backend grammar rule is vLLM's, but the class is SGLang's: not vLLM (fail closed)
    p = write_log(tmp_path, "Using Fp4GemmRunnerBackend.FLASHINFER_CUTLASS\n")
    runs = scan_json(p)["runs"]
    assert runs and all(r["engine"]["name"] != "vllm" for r in runs)


def test_a_member_without_its_class_names_no_engine(tmp_path):
    from logscan.analysis.kernel_identity import enum_class

    assert enum_class("NvFp4LinearBackend.MARLIN") == "NvFp4LinearBackend"
    assert enum_class("MARLIN") is None and enum_class("fp8.e4m3 x") is None


# 3. the FP8 Marlin fallback is judged on any GPU the log states ---------------------------------

def _marlin(lines: list[str], tmp_path) -> dict:
    from tests.conftest import scan_json

    p = tmp_path / "x.log"
    p.write_text("\n".join(lines) + "\n")
    (run,) = scan_json(p)["runs"]
    (sel,) = [s for s in run["selections"] if s["kernel"] == "Marlin"]
    return {"undecided": sel["ladder"]["undecided"], "gpu": run["config"].get("gpu")}


V018 = (FIXTURES / "vllm" / "vllm-018.log").read_text().splitlines()
# real lines of other bundled logs, in vllm-018's worker prefix (vllm-378's device line names an MI50;
# vllm-018's label gives its GPU as an RTX 3090, so that is the name put in)
BF16 = ("(Worker_TP0 pid=101) WARNING 07-06 10:45:02 [model.py:1679] Your device 'NVIDIA GeForce RTX 3090' "
        "(with compute capability 8.6) doesn't support torch.bfloat16. Falling back to torch.float16 for compatibility.")
MOE = ("(Worker_TP0 pid=101) INFO 07-06 10:45:00 [fused_moe.py:806] Using configuration from /opt/vllm/model_executor/"
       "layers/fused_moe/configs/E=8,N=7168,device_name=NVIDIA_GeForce_RTX_3090.json for MoE layer.")
SMI = "|   0  NVIDIA GeForce RTX 3090        On  |   00000000:01:00.0 Off |                  N/A |"
CAP = ("(Worker_TP0 pid=101) ERROR 07-06 10:45:03 [core.py:700] RuntimeError: MacheteLinearKernel requires "
       "capability 90, current compute capability is 86")


def test_fp8_marlin_without_gpu_evidence_stays_unexplained(tmp_path):
    got = _marlin(V018, tmp_path)
    assert got["undecided"] and got["gpu"] is None


@pytest.mark.parametrize("extra,at", [(BF16, None), (MOE, 5), (SMI, 0), (CAP, None)])
def test_fp8_marlin_is_explained_by_a_gpu_line(extra, at, tmp_path):
    lines = list(V018)
    lines.insert(len(lines) if at is None else at, extra)
    got = _marlin(lines, tmp_path)
    assert got["undecided"] == []  # every better rung is refused on sm86 (FP8 hardware floor, sm89)


def test_the_device_line_sets_only_the_name_not_hip_capability():
    (run,) = _runs(FIXTURES / "vllm" / "vllm-378.log")
    assert run["config"]["gpu"] == "Radeon Instinct MI50 32GB"
    assert run["config"].get("compute_capability") in (None, "")  # HIP's 9.0 is no CUDA sm90


# 4. torch.distributed's '[rankN]: ' wrapper names the rank of the line behind it ------------------

def test_a_torch_rank_wrapper_gives_its_lines_a_rank():
    from tests.conftest import scan_json

    doc = scan_json(FIXTURES / "tgi" / "tgi-123.log")  # a TGI shard's traceback, every line '[rank1]: '
    assert doc["events"] and {e["rank"] for e in doc["events"]} == {"rank1"}


def test_selections_printed_behind_rank_wrappers_list_those_ranks(tmp_path):
    from tests.conftest import scan_json

    line = (FIXTURES / "vllm" / "vllm-302.log").read_text().splitlines()[2]  # a real 'Selected ...' line
    p = tmp_path / "r.log"
    p.write_text(f"[rank0]: {line}\n[rank1]: {line}\n")
    (run,) = scan_json(p)["runs"]
    assert [s["ranks"] for s in run["selections"]] == [["rank0", "rank1"]]


def test_an_engine_rank_tag_wins_over_the_torch_wrapper_behind_it():
    from tests.conftest import scan_json

    doc = scan_json(FIXTURES / "vllm" / "vllm-265.log")  # '(Worker_TP1 pid=42) [rank1]:W1217 ...'
    assert "rank1" not in {e.get("rank") for e in doc["events"]}


# 5. a lone bare exception line (vllm-379) makes no run, and the gate still fails it -----------------

def test_vllm_379_makes_no_run_and_fails_the_gate_closed():
    doc = json.loads(_cli("gate", "--format", "json", str(FIXTURES / "vllm" / "vllm-379.log")).stdout)
    assert doc["runs"] == []
    assert [(c["code"], c["verdict"]) for c in doc["gate"]["checks"]] == [("NO_KERNEL_SEEN", "fail")]
