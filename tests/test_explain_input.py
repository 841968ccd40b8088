"""``logscan explain`` takes a kernel name or scheme (trial 2, item 7): a log given to it is told to
use ``scan``; a label exactly as ``explain turbomind`` lists it is accepted; exit codes in --help."""
from __future__ import annotations

import json

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

LABEL = "TurboMind U4 (AWQ / GPTQ / compressed-tensors int4)"


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_a_log_file_is_pointed_to_scan():
    log = str(FIXTURES / "vllm" / "vllm-005.log")
    r = run("explain", log)
    assert r.exit_code == 2 and "on no shipped ladder" not in r.output
    assert "kernel name or scheme" in r.output and f"logscan scan {log}" in r.output


def test_an_existing_file_without_a_slash_is_a_file_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Marlin").write_text("a log\n")
    r = run("explain", "Marlin")
    assert r.exit_code == 2 and "logscan scan Marlin" in r.output


def test_the_listed_label_is_accepted():
    listed = run("explain", "turbomind")
    assert listed.exit_code == 0 and LABEL in listed.output
    r = run("explain", LABEL)
    assert r.exit_code == 0 and "on 1 ladder(s)" in r.output and "rung 1/1" in r.output
    assert run("explain", "TurboMind U4 (something else)").exit_code == 2


def test_help_documents_exit_codes():
    h = run("explain", "--help").output
    assert "Exit status" in h and "0 when" in h and "2 when" in h and "logscan scan FILE" in h


def test_a_typo_gets_the_nearest_shipped_names_on_stderr():
    r = CliRunner().invoke(cli, ["explain", "Marlni"])
    assert r.exit_code == 2 and "on no shipped ladder" in r.stdout
    assert "did you mean:" in r.stderr and "marlin" in r.stderr.lower()
    far = CliRunner().invoke(cli, ["explain", "zzzzqqqq"])
    assert far.exit_code == 2 and "did you mean" not in far.stderr  # nothing close: no guess


def test_releases_that_share_an_own_gate_are_one_row():
    # SGLang 0.4.3.post3 .. 0.4.5.post2 each carry the GPTQ -> gptq_marlin override with their own
    # (opaque) gate text, which named the release: ~20 one-release rows before
    import json

    doc = json.loads(CliRunner().invoke(cli, ["explain", "Marlin", "--format", "json"]).output)
    rows = [r for r in doc["ladders"] if r["engine"] == "sglang"
            and r["registry"] == "GPTQMarlinConfig.override_quantization_method"]
    own = [r for r in rows if "own gate" in r["gate"]]
    assert len(own) == 1 and own[0]["releases"] == "0.4.3.post3–0.4.5.post2", [r["releases"] for r in own]
    assert "the release's own gate" in own[0]["gate"]


def test_a_shared_class_suffix_is_no_likeness():
    """'NoSuchKernel' suggested 'ConchLinearKernel' (both end in 'Kernel'; new-user trial): the
    suffixes every rung's class name shares are left out of the comparison, and a typo in the
    suffix itself still finds the name."""
    r = CliRunner().invoke(cli, ["explain", "NoSuchKernel"])
    assert r.exit_code == 2 and "did you mean" not in r.stderr
    t = CliRunner().invoke(cli, ["explain", "MarlinLinearKernl"])
    assert t.exit_code == 2 and t.stderr.split("did you mean: ")[1].startswith("MarlinLinearKernel,")


def test_explain_rows_line_up_whatever_the_release_range():
    """'vllm 0.8.5.post1–0.9.2' is wider than the old fixed column of 12: the registries must still
    start in one column (a new user's trial saw them pushed right on long ranges)."""
    from logscan.formats.ladder import render_explain

    rows = [dict(engine="vllm", ladder_version=v, registry="_POSSIBLE_KERNELS", role="wna16 linear",
                 platform="ANY", rung=1, rungs=2, cost_class="native", gate="", words="")
            for v in ("0.8.5", "0.8.5.post1–0.9.2", "0.10.1–0.10.1.1")]
    lines = render_explain("MarlinLinearKernel", rows).splitlines()[1:]
    assert len({line.index("_POSSIBLE_KERNELS") for line in lines}) == 1, lines


def test_engine_keeps_one_engines_ladders():
    """--engine reads a name many engines hold (Marlin: on 100+ ladders, SGLang's first) for one
    engine only (a new-user trial: 263 lines and no way to narrow them but --engine-version)."""
    import json

    whole = json.loads(run("explain", "Marlin", "--format", "json").output)["ladders"]
    assert len({r["engine"] for r in whole}) > 1
    r = run("explain", "Marlin", "--engine", "vllm", "--format", "json")
    assert r.exit_code == 0
    only = json.loads(r.output)["ladders"]
    assert only and {x["engine"] for x in only} == {"vllm"}
    assert len(only) == len([x for x in whole if x["engine"] == "vllm"])


def test_engine_unknown_or_holding_none_is_exit_2():
    r = run("explain", "Marlin", "--engine", "nope")
    assert r.exit_code == 2 and "one of:" in r.output and "vllm" in r.output
    r = run("explain", "turbomind", "--engine", "vllm")
    assert r.exit_code == 2 and "on ladders of lmdeploy, none of vllm" in r.output
    assert "did you mean" not in r.output
    assert "on no shipped vllm ladder (on lmdeploy's)" in r.output  # stdout agrees with stderr
    assert "turbomind: on no shipped ladder" not in r.output


def test_a_scheme_too_short_for_a_label_match_lists_its_ladders():
    """'explain FP8' (trial 35): FP8 is a scheme (patterns/schemes.toml) no rung label holds by the
    four-character label match, so it was 'on no shipped ladder' with exit 2 while 'ladder vllm FP8'
    walked it. The scheme's role on each engine gives every rung of its ladders, as 'ladder' does."""
    r = CliRunner().invoke(cli, ["explain", "FP8", "--engine", "vllm", "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["ladders"]
    assert rows and {x["role"] for x in rows} == {"fp8 linear"}
    kernels = {x["kernel"] for x in rows}
    assert "CutlassFP8ScaledMMLinearKernel" in kernels and any("Marlin" in k for k in kernels)
    # a name that is no scheme and no rung stays unknown
    r = CliRunner().invoke(cli, ["explain", "FP9"])
    assert r.exit_code == 2 and "on no shipped ladder" in r.stdout


def test_explain_a_scheme_walks_every_rung_and_names_each(tmp_path):
    # trial 37: 'explain NVFP4' gave one label-matched rung per ladder (MarlinNvFp4LinearKernel on one release,
    # B12xNvFp4LinearKernel on another) with no kernel named on the row, read as "NVFP4 is rung 10/14"
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "logscan.cli", "explain", "NVFP4", "--engine", "vllm"],
                         capture_output=True, text=True, check=False).stdout
    rows = [ln for ln in out.splitlines() if ": rung " in ln]
    newest = [ln for ln in rows if "0.33.0 _POSSIBLE_NVFP4_KERNELS (nvfp4 linear, CUDA)" in ln]
    import re

    # every rung of the 0.33.0 NVFP4 linear list (a rung unchanged since an older release is on its older row)
    assert {int(m) for ln in rows for m in re.findall(r"rung (\d+)/14 ", ln)} == set(range(1, 15))
    assert any("rung 6/14 MarlinNvFp4LinearKernel, weight_only" in ln for ln in newest)
    assert all(" rung " in ln and ln.split(": rung ", 1)[1].split(",")[0].count(" ") == 1 for ln in rows)


def test_matrix_fp8_moe_says_llamacpp_refuses():
    # GGUF has no FP8 weight type for experts either: the FP8 row's refusal, not 'no ladder' (trial 37)
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "logscan.cli", "matrix", "FP8-MOE", "--gpu", "A100"],
                         capture_output=True, text=True, check=False).stdout
    (row,) = [ln for ln in out.splitlines() if ln.strip().startswith("llamacpp")]
    assert "refuses" in row
