"""The run's GPU from lines that are not the engine's: tool output and wrapper echoes (ident34).

``patterns/gpus.toml`` ``[source.*]`` ranks the kinds of line naming a GPU (engine > tool >
wrapper); ``patterns/common-rules/60-machine-lines.toml`` reads nvidia-smi's table and
``--query-gpu`` csv, wrapper echoes and Unsloth's banner as kind ``machine`` (never a run of its
own: ``analysis/machine_lines.py``); vLLM's 'Detected different devices in the system' names the
system's devices (``analysis/gpu_source.set_one_of``). Real logs wherever one holds the line.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from logscan.analysis.gpus import gpu_file, source_rank
from logscan.analysis.run_checks import judged_machine
from logscan.analysis.runstate import RunState
from logscan.api import scan
from logscan.packs.loader import default_packs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text(errors="replace").splitlines(keepends=True)


def _run(report, i: int = 0):
    return report.runs[i]


def test_source_table_ranks_the_engine_above_a_tool_above_a_wrapper():
    assert source_rank("engine") > source_rank("tool") > source_rank("wrapper")
    assert source_rank(None) == source_rank("engine")
    assert set(gpu_file().source) == {"engine", "tool", "wrapper"}


def test_every_rule_gpu_source_is_a_kind_of_the_table():
    kinds = set(gpu_file().source)
    seen = set()
    for pack in default_packs().packs.values():
        for cr in pack.rules:
            r = cr.rule
            for sets in (r.sets, r.continuation.sets if r.continuation else {}):
                if "gpu_source" in sets:
                    seen.add(sets["gpu_source"])
                    assert sets["gpu_source"] in kinds, r.id
                    assert "gpu" in sets, f"{r.id}: gpu_source without gpu"
    assert seen == {"tool", "wrapper"}


def test_wrapper_echo_names_the_gpu_as_weaker_evidence_and_opens_no_run():
    # vllm-358: '✅ NVIDIA GPU: NVIDIA GB10' at line 9; the vLLM run starts at line 52, the NGC container's
    # 'vLLM Version 0.13.0+faa43dbf' banner (env37: read as the reporter's environment; before, line 68)
    report = scan(FIXTURES / "vllm" / "vllm-358.log")
    run = _run(report)
    assert run.first_line == 52
    assert run.config.gpu == "NVIDIA GB10"
    assert run.config.extra["gpu_source"] == "wrapper"
    assert "line 9" in run.config.extra["gpu_evidence"] and "weaker" in run.config.extra["gpu_evidence"]
    alone = scan(_lines("vllm/vllm-358.log")[8:9])  # the echo with no engine line: no run
    assert alone.runs == []


def test_the_engines_own_gpu_line_wins_over_a_wrapper_before_and_after_it():
    # llamacpp-213: ggml's 'Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6'
    lines = _lines("llamacpp/llamacpp-213.log")
    for log in (["GPU: NVIDIA H100 80GB HBM3\n"] + lines, lines + ["GPU: NVIDIA H100 80GB HBM3\n"]):
        run = _run(scan(log))
        assert "3090" in run.config.gpu
        assert "gpu_source" not in run.config.extra and "gpu_evidence" not in run.config.extra
    run = _run(scan(["GPU: NVIDIA H100 80GB HBM3\n"] + lines))
    assert "H100" in run.config.extra["gpu_other"]  # the weaker line's other GPU is said, not taken


def test_a_logged_compute_capability_is_judged_before_a_wrapper_named_gpu():
    run = RunState(index=0, source="s", first_line=1, last_line=1, engine="vllm")
    run.config.gpu, run.config.compute_capability = "NVIDIA H100 80GB HBM3", "75"
    run.config.extra["gpu_source"] = "wrapper"
    ctx = SimpleNamespace(gpu=None, cuda=None)
    machine, origin = judged_machine(ctx, run)
    assert (machine.cc, origin) == (75, "log")
    del run.config.extra["gpu_source"]  # the same name from the engine's own line: the name first
    assert judged_machine(ctx, run)[0].cc == 90


def test_nvidia_smi_rows_are_a_tool_and_a_cut_name_keeps_its_whole_words():
    run = _run(scan(FIXTURES / "tgi" / "tgi-112.log"))
    assert run.config.gpu == "NVIDIA H100 80GB HBM3" and run.config.extra["gpu_source"] == "tool"
    assert (run.first_line, run.last_line) == (1, 15)  # the row is inside TGI's --env block
    for name in ("tgi-151", "tgi-160"):  # 'NVIDIA A100 80G...' (domain 00000001), 'NVIDIA A100-SXM...'
        run = _run(scan(FIXTURES / "tgi" / f"{name}.log"))
        assert run.config.gpu == "NVIDIA A100", name
    cut = "   |   0  NVIDIA H100...  On   | 00000000:0F:00.0 Off |                    0 |\n"
    assert scan(_lines("tgi/tgi-112.log")[:14] + [cut]).runs[0].config.gpu is None


def test_tool_rows_of_different_gpu_kinds_leave_the_run_unjudged():
    rows = ["|   0  NVIDIA GeForce RTX 3090        Off | 00000000:27:00.0 Off |                  N/A |\n",
            "|   1  NVIDIA H100 80GB HBM3          On  | 00000000:0F:00.0 Off |                    0 |\n"]
    run = _run(scan(rows + _lines("vllm/vllm-358.log")[67:81]))
    assert "gpu_weak_mixed" in run.config.extra
    assert judged_machine(SimpleNamespace(gpu=None, cuda=None), _state(run)) == (None, None)
    same = [rows[0], rows[0].replace("   0  ", "   1  ").replace(":27:", ":28:")]
    run = _run(scan(same + _lines("vllm/vllm-358.log")[67:81]))
    assert "gpu_weak_mixed" not in run.config.extra and "3090" in run.config.gpu


def _state(run) -> RunState:
    st = RunState(index=0, source="s", first_line=1, last_line=1, engine=run.engine.name)
    st.config = run.config
    return st


def test_nvidia_smi_query_csv_rows_follow_their_header():
    log = ["name, memory.total [MiB]\n", "NVIDIA L40S, 46068 MiB\n"] + _lines("vllm/vllm-358.log")[67:81]
    run = _run(scan(log))
    assert run.config.gpu == "NVIDIA L40S" and run.config.extra["gpu_source"] == "tool"
    bare = ["NVIDIA L40S, 46068 MiB\n"] + _lines("vllm/vllm-358.log")[67:81]  # no header: no tool line
    assert _run(scan(bare)).config.gpu is None


def test_vllm_different_devices_judges_the_run_only_on_a_shared_capability():
    # vllm-360: 'NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3060' (both sm86)
    run = _run(scan(FIXTURES / "vllm" / "vllm-360.log"))
    # the GPU itself is named only by the engine's fused-MoE config lookup (line 41's device_name=,
    # the device of its process: misc37), which agrees with the shared capability
    assert run.config.extra["gpu_one_of_cc"] == "86" and run.config.gpu == "NVIDIA_GeForce_RTX_3090"
    old = ["INFO 02-13 10:47:30 __init__.py:190] Automatically detected platform cuda.\n",
           "WARNING 02-13 10:47:30 cuda.py:336] Detected different devices in the system:\n",
           "WARNING 02-13 10:47:30 cuda.py:336] NVIDIA GeForce RTX 3090\n",
           "WARNING 02-13 10:47:30 cuda.py:336] Tesla T4\n",
           "WARNING 02-13 10:47:30 cuda.py:336] Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior.\n",
           "INFO 02-13 10:47:32 api_server.py:840] vLLM API server version 0.7.2\n"]
    run = _run(scan(["GPU: NVIDIA H100 80GB HBM3\n"] + old))  # 0.7's one device per line, of two kinds
    assert run.config.extra["gpu_one_of"] == "NVIDIA GeForce RTX 3090, Tesla T4"
    assert "gpu_one_of_cc" not in run.config.extra
    assert judged_machine(SimpleNamespace(gpu=None, cuda=None), _state(run)) == (None, None)  # nor the wrapper's H100


def test_unsloth_banner_and_a_benchmark_device_line_are_wrappers():
    for name, gpu in (("vllm-349", "NVIDIA GeForce RTX 4090"), ("vllm-342", "NVIDIA H100 80GB HBM3")):
        run = _run(scan(FIXTURES / "vllm" / f"{name}.log"))
        assert (run.config.gpu, run.config.extra["gpu_source"]) == (gpu, "wrapper"), name
