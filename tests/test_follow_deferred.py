"""``logscan follow`` builds its Prometheus metrics once its first lines are out
(``follow/deferred.py``, start-up, issue 18): the series are the ones direct calls give, a scrape
before that point builds them at once, and the first JSON line comes before prometheus-client is
imported. Real logs throughout."""
from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys

import pytest
from prometheus_client import generate_latest

from logscan.follow.deferred import DeferredMetrics
from logscan.follow.metrics import FollowMetrics, serve
from logscan.follow.runner import Follower
from tests.conftest import FIXTURES, http_get

#: a vLLM start with a degraded selection and findings, an SGLang one that came up, a failed start
LOGS = [FIXTURES / "vllm" / "vllm-005.log", FIXTURES / "sglang" / "sglang-009.log", FIXTURES / "vllm" / "vllm-011.log"]
#: series whose value is a clock reading of each run: the last line's time, the *_created times
STAMP = re.compile(r"^(logscan_last_line_timestamp_seconds(\{[^}]*\})?|\w+_created(\{[^}]*\})?) \S+$", re.M)


def _text(m) -> str:
    """The exposition, clock readings masked."""
    return STAMP.sub(r"\1 <time>", generate_latest(m.registry).decode())


def _follow(packs, tmp_path, metrics, mode_dir: str) -> Follower:
    folder = tmp_path / mode_dir / "var/log/pods/llm_vllm-0_0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9/vllm"
    folder.mkdir(parents=True)
    paths = []
    for i, log in enumerate(LOGS):
        p = folder / f"{i}.log"
        p.write_bytes(log.read_bytes())
        paths.append(str(p))
    f = Follower(paths, packs, io.StringIO(), metrics=metrics, idle_flush=0.0)
    f.poll_once()
    f.poll_once()  # a second round: the held-back traceback and the idle flush
    return f


@pytest.mark.parametrize("mode", ["sidecar", "daemonset"])
def test_replayed_calls_give_the_series_direct_calls_give(packs, tmp_path, mode):
    direct = FollowMetrics(mode, packs.findings.cost_class_finding)
    _follow(packs, tmp_path, direct, "direct")
    deferred = DeferredMetrics(mode, packs.findings.cost_class_finding)
    _follow(packs, tmp_path, deferred, "deferred")
    assert deferred._real is None and deferred._calls  # nothing built yet: every call recorded
    want, got = _text(direct), _text(deferred)
    assert got == want.replace(str(tmp_path / "direct"), str(tmp_path / "deferred"))
    assert 'logscan_kernel_selection_info{' in got and "logscan_findings_total{" in got


def test_a_scrape_before_the_first_round_builds_the_metrics(packs, http_server):
    m = DeferredMetrics("sidecar", packs.findings.cost_class_finding)
    m.files(2, 1)
    server, port = http_server(serve(m, "127.0.0.1:0", lambda: False))
    status, body = http_get(port, "/metrics")
    assert status == 200 and b"logscan_followed_files 2.0" in body and b"logscan_missing_files 1.0" in body
    assert m._real is not None and not m._calls
    m.files(3, 0)  # after the build: straight to the real metrics
    assert b"logscan_followed_files 3.0" in http_get(port, "/metrics")[1]


def test_a_bad_mode_fails_at_once():
    with pytest.raises(ValueError, match="sidecar or daemonset"):
        DeferredMetrics("cluster", [])


#: run the CLI with stdout wrapped: on the first write, say whether prometheus-client is imported
PROBE = """
import sys
from logscan.cli import main

class Out:
    def __init__(self, f):
        self.f, self.said = f, False
    def write(self, text):
        if not self.said:
            self.said = True
            print("PROMETHEUS_AT_FIRST_LINE", "prometheus_client" in sys.modules, file=sys.stderr, flush=True)
        return self.f.write(text)
    def __getattr__(self, name):
        return getattr(self.f, name)

sys.stdout = Out(sys.stdout)
main()
"""


def test_follow_prints_its_first_line_before_importing_prometheus_client_and_then_serves(tmp_path):
    env = {**os.environ, "LOGSCAN_CACHE_DIR": str(tmp_path / "cache")}
    args = ["follow", "--metrics-addr", "127.0.0.1:0", "--poll-interval", "0.05", str(LOGS[0])]
    subprocess.run([sys.executable, "-m", "logscan", "scan", str(LOGS[0])], env=env, capture_output=True, timeout=120)
    proc = subprocess.Popen([sys.executable, "-c", PROBE, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        port = None
        while port is None:
            line = proc.stderr.readline()
            assert line, "follow ended before saying where its metrics are"
            m = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", line)
            port = int(m.group(1)) if m else None
        first = proc.stdout.readline()
        status, body = http_get(port, "/metrics")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert first.startswith('{"type":"selection"'), first
    assert "PROMETHEUS_AT_FIRST_LINE False" in err, err
    assert status == 200 and b"logscan_kernel_selection_info{" in body and b"logscan_degraded 1.0" in body
    assert b"_created" not in body  # follow's no-created setting reached the built metrics
