"""tools/derive_ladders.py reads registries from a vLLM tree with ``ast`` and diffs a shipped ladder.

The vLLM tree is a small synthetic package made in ``tmp_path`` with both layouts (0.18+
``kernels/linear`` and the older ``quantization/kernels/{mixed_precision,scaled_mm}``) and a
fused-MoE oracle. Its ``vllm/__init__.py`` raises on import, so a test passes only if the tool
never imports vLLM.
"""
from __future__ import annotations

import textwrap

import pytest

from tests.conftest import load_tool

dl = load_tool("derive_ladders")  # kept in sys.modules: dataclasses look their module up while built


def _write(root, rel, text):
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(textwrap.dedent(text))


@pytest.fixture
def tree(tmp_path):
    _write(tmp_path, "vllm/__init__.py", 'raise RuntimeError("vLLM must not be imported")\n')
    _write(tmp_path, "vllm/_version.py", "__version__ = version = '0.34.0'\n")
    _write(tmp_path, "vllm/model_executor/kernels/linear/__init__.py", """
        from vllm.platforms import PlatformEnum
        # in priority/performance order (when available)
        _POSSIBLE_FP8_KERNELS: dict[PlatformEnum, list[type]] = {
            PlatformEnum.CUDA: [
                FlashInferFP8ScaledMMLinearKernel,
                CutlassFP8ScaledMMLinearKernel,
                NewShinyFP8Kernel,
                MarlinFP8ScaledMMLinearKernel,
            ],
            PlatformEnum.ROCM: [ROCmFP8ScaledMMLinearKernel],
        }
        _POSSIBLE_NVFP4_KERNELS = {
            PlatformEnum.CUDA: [CutlassNvFp4LinearKernel, MarlinNvFp4LinearKernel, EmulationNvFp4LinearKernel],
        }
        NOT_A_REGISTRY = [A, B]
        def choose():
            _POSSIBLE_FP8_KERNELS[PlatformEnum.CUDA] = []
    """)
    _write(tmp_path, "vllm/model_executor/layers/quantization/kernels/mixed_precision/__init__.py", """
        _POSSIBLE_KERNELS: list[type] = [MacheteLinearKernel, MarlinLinearKernel, ExllamaLinearKernel]
    """)
    _write(tmp_path, "vllm/model_executor/layers/quantization/kernels/scaled_mm/__init__.py", """
        _POSSIBLE_KERNELS = {PlatformEnum.CUDA: [CutlassScaledMMLinearKernel], PlatformEnum.ROCM: [TritonScaledMMLinearKernel]}
    """)
    _write(tmp_path, "vllm/model_executor/layers/fused_moe/oracle/fp8.py", """
        B12X_BACKENDS = (Fp8MoeBackend.B12X,)
        _SUPPORTED_BACKENDS = (Fp8MoeBackend.TRITON, Fp8MoeBackend.MARLIN)
        def _get_priority_backends(config):
            def _move_to_front(backends, backend):
                backends.insert(0, backends.pop(backends.index(backend)))
            if current_platform.is_rocm():
                _AVAILABLE_BACKENDS = [Fp8MoeBackend.AITER, Fp8MoeBackend.TRITON]
            else:
                _AVAILABLE_BACKENDS = [
                    Fp8MoeBackend.FLASHINFER_TRTLLM,
                    Fp8MoeBackend.DEEPGEMM,
                    Fp8MoeBackend.TRITON,
                    Fp8MoeBackend.MARLIN,
                ]
            if current_platform.is_cpu():
                return [Fp8MoeBackend.CPU]
            return _AVAILABLE_BACKENDS
        def make_kernel(backend):
            UNSUPPORTED_BACKENDS = [Fp8MoeBackend.FLASHINFER_TRTLLM]
        def backend_to_kernel_cls(backend):
            return [MarlinExperts]
        def _get_requested_backends():
            return [Fp8MoeBackend.B12X]
    """)
    return tmp_path


def test_reads_both_layouts_and_moe_oracles_in_source_order(tree):
    got = {d.name: d for d in dl.derive(dl.find_vllm_root(tree))}
    assert got["_POSSIBLE_FP8_KERNELS"].platforms["CUDA"] == [
        "FlashInferFP8ScaledMMLinearKernel", "CutlassFP8ScaledMMLinearKernel", "NewShinyFP8Kernel",
        "MarlinFP8ScaledMMLinearKernel"]
    assert got["_POSSIBLE_FP8_KERNELS"].platforms["ROCM"] == ["ROCmFP8ScaledMMLinearKernel"]
    # a name defined in both old files gets the reference's file suffix; a plain list is ANY
    assert got["_POSSIBLE_KERNELS@mixed_precision"].platforms == {
        "ANY": ["MacheteLinearKernel", "MarlinLinearKernel", "ExllamaLinearKernel"]}
    assert got["_POSSIBLE_KERNELS@scaled_mm"].platforms["ROCM"] == ["TritonScaledMMLinearKernel"]
    moe = got["moe:fp8:_get_priority_backends._AVAILABLE_BACKENDS"]
    assert moe.platforms == {"ROCM": ["AITER", "TRITON"],
                             "ANY": ["FLASHINFER_TRTLLM", "DEEPGEMM", "TRITON", "MARLIN"]}
    assert got["moe:fp8:_get_priority_backends.return"].platforms == {"CPU": ["CPU"]}
    assert got["moe:fp8:<module>._SUPPORTED_BACKENDS"].platforms == {"ANY": ["TRITON", "MARLIN"]}
    # membership groups, experts-class lists and non-priority helpers are not ladders
    assert not any("B12X" in n or "requested" in n or "NOT_A_REGISTRY" in n or "UNSUPPORTED" in n for n in got)
    assert dl.installed_version(tree) == "0.34.0"


def test_diff_names_added_removed_and_moved_rungs(tree):
    shipped = {"registry": [
        {"name": "_POSSIBLE_FP8_KERNELS", "kind": "linear", "role": "fp8 linear", "platforms": {
            "CUDA": ["CutlassFP8ScaledMMLinearKernel", "FlashInferFP8ScaledMMLinearKernel",
                     "OldFP8Kernel", "MarlinFP8ScaledMMLinearKernel"],
            "ROCM": ["ROCmFP8ScaledMMLinearKernel"]}},
        {"name": "_POSSIBLE_GONE_KERNELS", "kind": "linear", "role": "x", "platforms": {"CUDA": ["X"]}},
        {"name": "ifchain:fp8:get_fp8_moe_backend", "kind": "if_chain", "role": "fp8 moe", "platforms": {"ANY": ["A"]}},
    ]}
    diffs, skipped = dl.diff(shipped, dl.derive(tree))
    by = {d.name: d for d in diffs}
    fp8 = by["_POSSIBLE_FP8_KERNELS"]
    assert fp8.status == "changed"
    assert "[CUDA] + NewShinyFP8Kernel (rung 3)" in fp8.lines
    assert "[CUDA] - OldFP8Kernel (was rung 3)" in fp8.lines
    assert "[CUDA] ~ FlashInferFP8ScaledMMLinearKernel moved: rung 2 -> 1" in fp8.lines
    assert not any(line.startswith("[ROCM]") for line in fp8.lines)
    assert by["_POSSIBLE_GONE_KERNELS"].status == "removed"
    assert by["_POSSIBLE_NVFP4_KERNELS"].status == "added"
    assert skipped == ["ifchain:fp8:get_fp8_moe_backend"]


def test_identical_tree_and_ladder_give_no_difference(tree):
    derived = dl.derive(tree)
    shipped = {"registry": [{"name": d.name, "kind": d.kind, "role": d.name, "platforms": d.platforms}
                            for d in derived]}
    diffs, _ = dl.diff(shipped, derived)
    assert diffs and all(d.status == "same" for d in diffs)


def test_written_ladder_keeps_known_costs_and_marks_new_rungs_unknown(tree):
    shipped = {"registry": [{"name": "_POSSIBLE_FP8_KERNELS", "kind": "linear", "role": "fp8 linear",
                             "scheme": "FP8 W8A8", "platforms": {"CUDA": ["MarlinFP8ScaledMMLinearKernel"]},
                             "cost": {"MarlinFP8ScaledMMLinearKernel": "weight_only"}}],
               "kernel": {"MarlinFP8ScaledMMLinearKernel": {"cost_class": "weight_only"}}}
    doc = dl.to_ladder(dl.derive(tree), shipped, "0.34.0")
    fp8 = next(r for r in doc["registry"] if r["name"] == "_POSSIBLE_FP8_KERNELS")
    assert fp8["role"] == "fp8 linear" and fp8["scheme"] == "FP8 W8A8"
    assert fp8["cost"]["MarlinFP8ScaledMMLinearKernel"] == "weight_only"
    assert fp8["cost"]["NewShinyFP8Kernel"] == "unknown"
    # the written document is a valid shipped ladder file
    from logscan.packs.model import LadderFile

    LadderFile.model_validate(doc)


def test_cli_exit_status(tree, tmp_path, capsys):
    against = tmp_path / "shipped.toml"
    against.write_text('engine = "vllm"\nversion = "0.34.0"\n[[registry]]\nname = "_POSSIBLE_FP8_KERNELS"\n'
                       'kind = "linear"\nrole = "fp8 linear"\n[registry.platforms]\nCUDA = ["X"]\n')
    assert dl.main([str(tree), "--against", str(against)]) == 1
    out = capsys.readouterr().out
    assert "CHANGED  _POSSIBLE_FP8_KERNELS" in out and "- X (was rung 1)" in out
    empty = tmp_path / "empty" / "site-packages"
    empty.mkdir(parents=True)
    assert dl.main([str(empty)]) == 2
    assert "no vllm/__init__.py" in capsys.readouterr().err


def test_conditional_platform_key_spells_the_condition(tmp_path):
    """``if is_rocm() and config.routing_method == X:`` keys its list ``when ROCm and cfg.routing_method == X``
    (the shipped 0.26.0+ DeepSeek-V4 MXFP4 registry); ``not is_rocm()`` and ``or`` key nothing."""
    _write(tmp_path, "vllm/__init__.py", "")
    _write(tmp_path, "vllm/model_executor/layers/fused_moe/oracle/mxfp4.py", """
        def select_v4_backend(config: FusedMoEConfig):
            if current_platform.is_rocm() and config.routing_method == RoutingMethodType.DeepseekV4:
                priority_backends = [Mxfp4MoeBackend.AITER_MXFP4_BF16, Mxfp4MoeBackend.TRITON_UNFUSED]
            if not current_platform.is_rocm():
                other_backends = [Mxfp4MoeBackend.TRITON]
            if current_platform.is_xpu():
                xpu_backends = [Mxfp4MoeBackend.XPU]
    """)
    got = {d.name: d.platforms for d in dl.derive(tmp_path)}
    assert got["moe:mxfp4:select_v4_backend.priority_backends"] == {
        "when ROCm and cfg.routing_method == RoutingMethodType.DeepseekV4": ["AITER_MXFP4_BF16", "TRITON_UNFUSED"]}
    assert got["moe:mxfp4:select_v4_backend.other_backends"] == {"ANY": ["TRITON"]}
    assert got["moe:mxfp4:select_v4_backend.xpu_backends"] == {"XPU": ["XPU"]}
