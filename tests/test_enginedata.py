"""Engine knowledge that lives in pack data, not in code (#16 enginedata): each test fails when
the data it names is removed.

- ``shared`` on vLLM's ``[[process]]`` tag (patterns/vllm/pack.toml): rankless process names that
  several processes of one start print (``VllmWorkerProcess``, ``RayWorkerWrapper``), no role for
  ``analysis/newstart``; without it vllm-176's four worker pids read as four starts.
- ``[platform.HPU]`` in patterns/gpus.toml: a platform without compute capability, judged against
  the platform (TGI's Gaudi branch); without it the Gaudi walk finds no machine.
- ``runstate.MODEL_FACTS``: the ``sets`` keys that ``set_fact`` may store as the model.
"""
from __future__ import annotations

import shutil

import pytest

from logscan.analysis import gpus, newstart
from logscan.analysis.runstate import MODEL_FACTS, RunState, set_fact
from logscan.models import Event
from logscan.packs.loader import default_packs, load_packs, patterns_root
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES


def _packs_without_shared(tmp_path):
    root = tmp_path / "patterns"
    shutil.copytree(patterns_root(), root)
    toml = root / "vllm" / "pack.toml"
    text = toml.read_text()
    assert "\nshared = 'Worker|Wrapper'\n" in text
    toml.write_text(text.replace("\nshared = 'Worker|Wrapper'\n", "\n"))
    return load_packs(root)


def test_the_shared_process_names_are_pack_data():
    rx = newstart.shared_names(default_packs())
    assert rx is not None
    ev = dict(line=1, rule="r", kind="k", source="s", message="m")
    for name in ("VllmWorkerProcess", "RayWorkerWrapper"):
        assert newstart.role(Event(**ev, process=name, pid=5), rx) is None
    assert newstart.role(Event(**ev, process="APIServer", pid=5), rx) == "APIServer#"
    # the data gone: the same names are roles (a second pid would be a second start)
    assert newstart.role(Event(**ev, process="VllmWorkerProcess", pid=5), None) == "VllmWorkerProcess#"


def test_vllm_176s_worker_processes_are_one_start_because_the_pack_says_their_name_is_shared(tmp_path):
    # vllm-176: four VllmWorkerProcess pids (TP ranks of one V0 start) print under one rankless name
    log = str(FIXTURES / "vllm" / "vllm-176.log")
    shipped = scan_inputs([log]).runs
    stripped = scan_inputs([log], packs=_packs_without_shared(tmp_path)).runs
    assert len(stripped) > len(shipped)


def test_a_platform_without_compute_capability_is_gpus_toml_data(tmp_path, monkeypatch):
    entry = gpus.platform_without_cc("HPU")
    assert entry is not None and entry.device == "Intel Gaudi"
    assert gpus.platform_without_cc("CUDA") is None and gpus.platform_without_cc("ROCM") is None
    args = ('2025-06-01T10:00:00.000000Z  INFO text_generation_launcher: Args { model_id: "m", revision: None, '
            'quantize: Some(Fp8), dtype: None }\n')
    p = tmp_path / "x.log"
    p.write_text("root@h:~# docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=all tgi_gaudi --model-id m "
                 "--quantize fp8\n" + args)
    (run,) = scan_inputs([str(p)]).runs
    assert [s.kernel for s in run.selections] == ["Fp8Linear (HPU fp8_gemm_v2)"]
    assert "Intel Gaudi (HPU, from the log)" in run.selections[0].evidence
    # the [platform.HPU] table removed: no machine to judge the HPU run against, no walk
    stripped = gpus.gpu_file().model_copy(update={"platform": {}})
    monkeypatch.setattr(gpus, "gpu_file", lambda root=None: stripped)
    (run,) = scan_inputs([str(p)]).runs
    assert run.selections == []
    # and --gpu Gaudi2 (platform HPU, no cc) is judged against the platform only through the table
    (run,) = scan_inputs([str(p)], gpu="Gaudi2").runs
    assert run.selections == []


def test_the_model_facts_are_the_keys_set_fact_stores_as_the_model():
    values = {"model": "org/M", "config": "model='org/M', quantization=fp8",
              "args": "{'model': 'org/M'}", "server_args": "ServerArgs(model_path='org/M', tp_size=1)"}
    keys = set()
    for cr in (c for p in default_packs().packs.values() for c in p.rules):
        keys.update(cr.rule.sets)
    naming = set()
    for k in sorted(keys | set(values)):
        run = RunState(index=0, source="s", first_line=1, last_line=1, engine="vllm")
        set_fact(run, k, values.get(k, "model='org/M'"), Event(line=1, rule="r", kind="k", source="s", message="m"))
        if run.config.model:
            naming.add(k)
    assert naming == set(MODEL_FACTS)


def test_vllm_029s_failed_start_carries_vllms_rule_once_the_run_is_known_to_be_vllm():
    # vllm-029: the traceback header (line 7) comes before the first .../vllm/... frame (line 12)
    # that names vLLM; every pack's generic traceback rule could read it, llama.cpp's did
    (run,) = scan_inputs([str(FIXTURES / "vllm" / "vllm-029.log")]).runs
    assert run.engine.name == "vllm"
    assert (run.start_failure.line, run.start_failure.rule) == (7, "vllm.uncaught.traceback")


def test_generic_lines_are_settled_to_the_runs_engine_and_nothing_else_is():
    from logscan.analysis.analyzer import Analyzer
    from logscan.analysis.run_checks import settle_engine

    ctx = Analyzer(default_packs())
    run = RunState(index=0, source="s", first_line=1, last_line=3, engine="sglang")
    base = dict(source="s", kind="uncaught")
    run.events = [
        Event(line=1, rule="llamacpp.uncaught.traceback", message="Traceback (most recent call last):", **base),
        # a traceback logged at WARNING: the run's pack reads tracebacks at error levels only
        Event(line=2, rule="llamacpp.uncaught.traceback", message="Traceback (most recent call last):",
              level="WARNING", **base),
        Event(line=3, rule="vllm.uncaught.exception", message="KeyError: 'type'", level="ERROR", **base),
    ]
    first = next(c for c, p in ctx.rules.values() if p.engine == "llamacpp" and c.rule.kind not in
                 ("uncaught", "ready", "progress", "identity", "platform"))
    run.events.append(Event(line=4, rule=first.rule.id, message="x", source="s", kind=first.rule.kind))
    settle_engine(ctx, run)
    assert [e.rule for e in run.events] == [
        "sglang.uncaught.traceback", "llamacpp.uncaught.traceback", "sglang.uncaught.exception", first.rule.id]


def _codes(path, gpu=None):
    return [[f.code for f in r.findings] for r in scan_inputs([str(path)], gpu=gpu).runs]


def test_a_deepgemm_selection_under_gpu_t4_is_flagged_from_the_ladders_sm90_floor():
    # sglang-002: "Entering DeepGEMM JIT Pre-Complie session" is rung 1/5 of SGLang's
    # dispatch_w8a8_block_fp8_linear, whose gate (patterns/planning/sglang.toml) needs sm90 or newer
    log = FIXTURES / "sglang" / "sglang-002.log"
    (run,) = scan_inputs([str(log)], gpu="T4").runs
    (f,) = [f for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]
    assert f.kernel == "DeepGEMM" and f.inferred and "sm90 or newer" in f.reasons[0] and "sm75" in f.reasons[0]
    for ok in ("H100", "B200", None):  # a GPU that can run it, or none given: nothing to say
        assert "GPU_CONTRADICTS_LOG" not in sum(_codes(log, ok), [])


def test_the_contradiction_rests_on_the_ladder_data(monkeypatch):
    # the planning overlay's gate terms removed, the contradiction still rests on data: the FP8
    # hardware floor (patterns/hardware-floors.toml, ladder31) of DeepGEMM's fp8 block registry,
    # which a T4 (sm75) lacks; with the floors removed too the rung has no recorded terms, and
    # nothing is claimed
    from logscan.analysis import floors, overlay

    log = FIXTURES / "sglang" / "sglang-002.log"
    monkeypatch.setattr(overlay, "load_overlay", lambda engine, root=None: None)
    (run,) = scan_inputs([str(log)], gpu="T4").runs
    (f,) = [f for f in run.findings if f.code == "GPU_CONTRADICTS_LOG"]
    assert f.kernel == "DeepGEMM" and "FP8 hardware floor" in f.reasons[0] and "sm75" in f.reasons[0]
    monkeypatch.setattr(floors, "load_floors", lambda root=None: {})
    assert "GPU_CONTRADICTS_LOG" not in sum(_codes(log, "T4"), [])


def test_an_exact_arch_rung_on_a_newer_gpu_is_no_contradiction(tmp_path):
    # vLLM 0.10.2 prints "FlashInfer MXFP4 BF16" for its SM90 and its SM100 backend (template history);
    # the ladders' alias names the SM90 class: on a B200 that is an alias gap, not a wrong --gpu
    lines = [ln for ln in (FIXTURES / "vllm" / "synthetic-era-0.10.log").read_text().splitlines()
             if not ln.startswith("#")]
    sm100 = [ln.replace("backend for SM90", "backend for SM100, For faster performance on SM100, consider setting "
                        "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1, though this may impact accuracy.") for ln in lines]
    p = tmp_path / "b200.log"
    p.write_text("\n".join(sm100) + "\n")
    assert "GPU_CONTRADICTS_LOG" not in sum(_codes(p, "B200"), [])
    assert "GPU_CONTRADICTS_LOG" in sum(_codes(p, "A100"), [])  # older than either backend: contradicted


def test_gpu_supplies_no_kernel_for_an_engine_that_logs_its_own(tmp_path):
    # vllm-176: quantization=awq_marlin in the config, no kernel line: --gpu H100 infers nothing
    # (scan --help and docs/ladders-and-predictions.md say so), the run stays without a kernel
    from click.testing import CliRunner

    from logscan.cli import cli

    log = str(FIXTURES / "vllm" / "vllm-176.log")
    (run,) = scan_inputs([log], gpu="H100").runs
    assert run.config.quantization == "awq_marlin" and run.selections == []
    r = CliRunner().invoke(cli, ["scan", "--gpu", "H100", "--fail-on", "NO_KERNEL_SEEN", log])
    assert r.exit_code == 1 and "NO_KERNEL_SEEN" in r.output
    help_text = " ".join(CliRunner().invoke(cli, ["scan", "--help"]).output.split())
    assert "no kernel line stays NO_KERNEL_SEEN" in help_text and "GPU_CONTRADICTS_LOG" in help_text
