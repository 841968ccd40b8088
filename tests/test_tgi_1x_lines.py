"""TGI 1.2-1.3's 'Disabling exllama v2 and using v1 instead because there are issues when sharding'
(server/text_generation_server/utils/layers.py at v1.2.0-v1.3.4, module level, WORLD_SIZE > 1; not at
v1.1.x, commented out from v1.4.0). Issue #16 trial: the line was read as a run fact and shown nowhere
in the text report, so it looked silent. It is no selection (printed for every sharded model, GPTQ or
not: tgi-108, -144, -145 hold no quantized model), so the gate still says NO_KERNEL_SEEN; the report now
shows the fact ('switches' line, tgi pack.toml [kernel_facts]) and dates the log to 1.2.0 .. 1.3.4, read
against no shipped ladder (2.0.0+, where GPTQ-Marlin is the first rung). Real logs: tgi-108 (TGI #1645),
tgi-142 (#1355)."""
from __future__ import annotations

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES, scan_json, write_log

FIX = FIXTURES / "tgi"


def test_the_swap_is_shown_and_dates_the_log():
    (run,) = scan_json(FIX / "tgi-108.log")["runs"]
    assert run["config"]["extra"]["exllama_version"] == "v1"
    assert run["engine"]["release_range"] == ["1.2.0", "1.3.4"] and run["engine"]["ladder_version"] is None
    out = CliRunner().invoke(cli, ["scan", str(FIX / "tgi-108.log")], catch_exceptions=False).stdout
    assert "switches exllama=v1 exllama_v2_off=there are issues when sharding" in out
    assert "none shipped for tgi 1.2.0 .. 1.3.4" in out


def test_the_swap_is_no_selection():
    r = CliRunner().invoke(cli, ["gate", str(FIX / "tgi-108.log")], catch_exceptions=False)
    assert r.exit_code == 1 and "NO_KERNEL_SEEN" in r.stdout
    (run,) = scan_json(FIX / "tgi-142.log")["runs"]  # sharded GPTQ: 'Using exllama kernels v1' is the selection
    assert [(s["kernel"], s["line"]) for s in run["selections"]] == [("ExLlama v1", 2)]


def test_a_tagged_or_reworded_swap_is_read(tmp_path):
    line = (FIX / "tgi-108.log").read_text(encoding="utf-8").splitlines()[13]
    assert line.endswith("Disabling exllama v2 and using v1 instead because there are issues when sharding")
    reworded = line.replace("Disabling exllama v2 and using v1", "[rank0] disabled exllama v2 and switched to v1")
    (run,) = scan_json(write_log(tmp_path, reworded + "\n"))["runs"]
    assert run["config"]["extra"]["exllama_version"] == "v1" and run["unexplained"] == []


def test_the_shards_bitsandbytes_8bit_line_is_a_selection(tmp_path):
    """TGI 1.1-2.1 (utils/layers.py, then layers/linear.py get_linear -> warn_deprecate_bnb; removed in
    v2.2.0): printed when a layer is built as bitsandbytes Linear8bitLt, CLI or config.json --quantize.
    It was silent: no rule read it and its words name no kernel of the sweep's vocabulary."""
    p = write_log(tmp_path, "2024-05-01T10:00:00.000000Z  INFO text_generation_launcher: Starting shard rank=0\n"
                            "2024-05-01T10:00:05.000000Z  WARN text_generation_launcher: Bitsandbytes 8bit is "
                            "deprecated, using `eetq` is a drop-in replacement, and has much better performnce\n")
    (run,) = scan_json(p)["runs"]
    [s] = run["selections"]
    assert (s["kernel"], s["cost_class"], s["line"]) == ("bitsandbytes Linear8bitLt", "emulated", 2)
    assert run["config"]["quantization"] == "bitsandbytes"
    assert run["engine"]["release_range"][-1] == "2.1.1"  # the line dates the shard before 2.2.0
