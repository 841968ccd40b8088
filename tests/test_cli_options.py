"""Option values are checked the same way in every command: a bad one is a usage error (exit 2)."""
from __future__ import annotations

from click.testing import CliRunner

from logscan.cli import cli
from tests.conftest import FIXTURES

LOG = str(FIXTURES / "vllm" / "vllm-005.log")


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_scan_rejects_a_cuda_that_is_not_a_version():
    r = run("scan", "--cuda", "abc", LOG)
    assert r.exit_code == 2 and "not a version like 12.8" in r.output


def test_torch_error_names_a_torch_version():
    r = run("ladder", "vllm", "nvfp4", "--torch", "abc")
    assert r.exit_code == 2 and "like 2.8.0" in r.output


def test_explain_needs_a_name():
    r = run("explain", " ")
    assert r.exit_code == 2 and "kernel class or backend name" in r.output


def test_gpu_of_another_platform_is_refused():
    r = run("ladder", "vllm", "nvfp4", "--platform", "rocm", "--gpu", "H100")
    assert r.exit_code == 2 and "CUDA device" in r.output


def test_packs_lists_releases_in_version_order():
    out = run("packs").output
    vllm = next(line for line in out.splitlines() if line.startswith("vllm:"))
    rels = vllm.split("ladders ", 1)[1].split(", ")
    assert rels.index("0.6.6.post1") < rels.index("0.33.0")


def test_follow_on_a_directory_is_a_usage_error(tmp_path):
    r = run("follow", "--metrics-addr", "off", str(tmp_path))
    assert r.exit_code == 2 and "is a directory" in r.output


def test_tail_of_a_directory_reads_nothing(tmp_path):
    from logscan.follow.tail import FileTail

    t = FileTail(str(tmp_path))
    assert t._open_live() is False


def test_diff_refuses_an_old_side_without_kernels(tmp_path):
    empty = tmp_path / "old.log"
    empty.write_text("INFO 01-01 00:00:00 [x.py:1] nothing about kernels here\n")
    r = run("diff", str(empty), LOG)
    assert r.exit_code == 2 and "no kernel selection" in r.output


def test_gate_on_an_unreadable_input_does_not_say_pass(tmp_path):
    import gzip

    p = tmp_path / "cut.log.gz"
    p.write_bytes(gzip.compress(b"x" * 5000)[:30])
    r = run("gate", str(p))
    assert r.exit_code == 2
    assert "Gate: PASS" not in r.output and "NO_KERNEL_SEEN" in r.output


def test_cri_record_never_finished_is_counted_as_cut(tmp_path):
    import json as _json

    p = tmp_path / "cri.log"
    p.write_text("2026-01-07T13:43:10Z stdout P (EngineCore pid=1) INFO 01-07 13:43:10 [x.py:1] Using Marlin\n")
    doc = _json.loads(run("scan", "--format", "json", str(p)).stdout)
    assert doc["inputs"][0]["truncated_lines"] == 1


def test_a_taken_metrics_port_names_the_way_out(tmp_path):
    import socket

    log = tmp_path / "engine.log"
    log.write_text("x\n")
    with socket.socket() as s:  # a second `logscan follow` on the host, or anything on the port
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = run("follow", "--metrics-addr", f"127.0.0.1:{port}", str(log))
    assert r.exit_code == 2
    assert "cannot listen on" in r.output and "--metrics-addr off" in r.output
