"""An unknown --gpu is refused with names an installed user can give (not a repository path)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from logscan.cli import cli

@pytest.mark.parametrize("command", [["matrix", "NVFP4"], ["ladder", "vllm", "FP8"]])
def test_an_unknown_gpu_is_refused_with_the_names_an_installed_user_can_give(command):
    # the message named 'patterns/gpus.toml', a repository path an installed user does not have
    r = CliRunner().invoke(cli, [*command, "--gpu", "H10"])
    assert r.exit_code == 2
    assert "patterns/" not in r.output and "did you mean H100" in r.output and "RTX 5090" in r.output


FIXTURES_VLLM = __import__("pathlib").Path(__file__).parent.parent / "fixtures" / "vllm"


@pytest.mark.parametrize("command", [["scan"], ["gate"]])
def test_the_gpu_given_by_flag_is_named_in_the_report_and_a_different_logged_gpu_is_said(command):
    # a new-user trial: 'gate --gpu H100' judged the run on sm90 and the report never said so;
    # vllm-103 (a real L40S log: 'device_name=NVIDIA_L40S' in its tuning-config path)
    log = str(FIXTURES_VLLM / "vllm-103.log")
    out = CliRunner().invoke(cli, [*command, "--gpu", "B200", log]).output
    assert "gpu      B200 (sm100), given by --gpu: the run is judged on it; the log names NVIDIA_L40S" in out
    same = CliRunner().invoke(cli, [*command, "--gpu", "L40S", log]).output
    assert "L40S (sm89), given by --gpu" in same and "the log names" not in same
    assert "given by --gpu" not in CliRunner().invoke(cli, [*command, log]).output


def test_the_gpu_given_by_flag_is_a_run_fact_in_json():
    import json
    out = CliRunner().invoke(cli, ["scan", "--format", "json", "--gpu", "H100", str(FIXTURES_VLLM / "vllm-101.log")]).output
    run = json.loads(out)["runs"][0]
    assert run["config"]["extra"]["gpu_given"].startswith("H100 (sm90), given by --gpu")


def test_a_rocm_gpu_is_judged_by_its_gfx_arch_never_as_an_sm_number_on_cuda_rungs():
    # new-user trial: 'scan --gpu MI300X --cuda 12.4' on vLLM's FP8 Marlin warning said "Marlin is
    # below what sm94 should reach: CutlassFP8ScaledMMLinearKernel" (a CUDA-only kernel, on an AMD GPU)
    import json
    args = ["scan", "--format", "json", "--engine-version", "0.33.0", "--cuda", "12.4", "--gpu", "MI300X",
            str(FIXTURES_VLLM / "vllm-004.log")]
    run = json.loads(CliRunner().invoke(cli, args).output)["runs"][0]
    assert [f["code"] for f in run["findings"]] == ["WEIGHT_ONLY_SUBSTITUTION"]
    assert "sm94" not in json.dumps(run) and run["config"]["extra"]["gpu_given"].startswith("MI300X (gfx942)")
    # the same GPU given for a log that names an NVIDIA GPU is said to contradict it, and not used
    out = CliRunner().invoke(cli, ["scan", "--gpu", "MI300X", str(FIXTURES_VLLM / "vllm-103.log")]).output
    assert "MI300X is a ROCM GPU and the log is a CUDA run: the run is not judged on MI300X" in out
    assert "given by --gpu" not in out


def test_the_unknown_gpu_error_counts_the_aliases_and_its_examples_are_accepted():
    """The error listed the table's names only, though the option also takes their aliases (H200,
    L4, RTX 4090, A6000, GH200: new-user trial); the aliases it names as examples must resolve."""
    import re

    from logscan.analysis.gpus import resolve_gpu, unknown_gpu_message

    msg = unknown_gpu_message("A1000")
    assert re.search(r"and \d+ aliases of them \(H200, L4, RTX 4090, \.\.\.\)", msg), msg
    for alias in ("H200", "L4", "RTX 4090"):
        assert resolve_gpu(alias) is not None, alias


def test_a_letter_o_for_a_zero_suggests_the_gpu_it_spells():
    """'H1OO' suggested 'Jetson Thor, H100' (new-user trial 2): the zeroed spelling comes first."""
    from logscan.analysis.gpus import unknown_gpu_message

    assert "did you mean H100" in unknown_gpu_message("H1OO")
    assert "did you mean V100" in unknown_gpu_message("V1OO")
