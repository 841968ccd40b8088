"""End to end with a real Prometheus (Debian's ``prometheus`` package, which ``.ci/run``
installs): ``logscan follow`` tails a log being written, Prometheus scrapes it on 127.0.0.1 with
deploy/prometheusrule.yaml's alert rules loaded, and the test asks Prometheus's HTTP API, bounded
in time, until the series and the alerts appear.

The log grows while both run: first real vLLM start-up lines with a native selection
(fixtures/vllm/vllm-009.log), then an emulation line (tests/data/constructed-emulation.log: no
real log of the corpus shows one), then a failed start (fixtures/vllm/vllm-019.log, real).
The rules' ``for: 5m`` is cut to 0s here, so the test stays bounded; everything else is as shipped.
Nothing listens beyond 127.0.0.1; every process is stopped at the end.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest
import regex
import yaml

from tests.conftest import ROOT

PROMETHEUS = shutil.which("prometheus")
BIN = os.path.dirname(sys.executable)
BOUND = 120.0  #: seconds for the whole scenario
pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="the prometheus server is not installed (Debian's "
                                                           "prometheus package; .ci/run installs it)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - 127.0.0.1 only
        return json.load(r)


def _until(what: str, probe, deadline: float, every: float = 0.5):
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except OSError as exc:  # not listening yet
            last = exc
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prom-e2e")
    deadline = time.monotonic() + BOUND
    log = tmp / "engine.log"
    log.write_text("")
    follow = subprocess.Popen([os.path.join(BIN, "logscan"), "follow", str(log), "--metrics-addr", "127.0.0.1:0",
                               "--poll-interval", "0.1", "--idle-flush", "0.5"],
                              stdout=open(tmp / "follow.out", "w"), stderr=open(tmp / "follow.err", "w"),
                              env={**os.environ, "LOGSCAN_CACHE_DIR": str(tmp / "cache")})
    procs = [follow]
    try:
        port = int(_until("logscan's metrics port", lambda: (m := regex.search(
            r"metrics on http://127\.0\.0\.1:(\d+)/", (tmp / "follow.err").read_text())) and m.group(1), deadline))
        (rule,) = [d for d in yaml.safe_load_all((ROOT / "deploy" / "prometheusrule.yaml").read_text())
                   if d["kind"] == "PrometheusRule"]
        groups = rule["spec"]["groups"]
        for g in groups:
            for r in g["rules"]:
                r.pop("for", None)  # bounded time: fire at the first evaluation
        (tmp / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}))
        (tmp / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(tmp / "rules.yaml")],
            "scrape_configs": [{"job_name": "logscan", "static_configs": [{
                "targets": [f"127.0.0.1:{port}"], "labels": {"namespace": "llm", "pod": "vllm-0"}}]}]}))
        prom_port = _free_port()
        prom = subprocess.Popen([PROMETHEUS, f"--config.file={tmp / 'prometheus.yml'}",
                                 f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}",
                                 "--storage.tsdb.retention.time=1h", "--log.level=warn"],
                                stdout=open(tmp / "prom.out", "w"), stderr=subprocess.STDOUT)
        procs.append(prom)
        api = f"http://127.0.0.1:{prom_port}/api/v1"
        _until("Prometheus to scrape logscan", lambda: any(
            t["health"] == "up" for t in _get(f"{api}/targets")["data"]["activeTargets"]), deadline)

        def write(path):
            with log.open("a", encoding="utf-8") as fh:
                fh.write(path.read_text(encoding="utf-8"))
        yield {"api": api, "write": write, "deadline": deadline, "tmp": tmp}
    finally:
        for p in reversed(procs):
            _stop(p)


def _query(api: str, expr: str) -> list:
    return _get(f"{api}/query?" + urllib.parse.urlencode({"query": expr}))["data"]["result"]


def _alerts(api: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for a in _get(f"{api}/alerts")["data"]["alerts"]:
        if a["state"] == "firing":
            out.setdefault(a["labels"]["alertname"], []).append(a["labels"])
    return out


def test_a_native_start_raises_no_alert_then_an_emulation_line_fires(stack):
    api, deadline = stack["api"], stack["deadline"]
    stack["write"](ROOT / "fixtures" / "vllm" / "vllm-009.log")  # real, native kernels
    native = _until("the native selection series", lambda: _query(
        api, 'logscan_kernel_selection_info{cost_class="native"} == 1'), deadline)
    assert native[0]["metric"]["namespace"] == "llm"
    time.sleep(2.5)  # two rule evaluations on the native series
    assert "QuantizedKernelDegraded" not in _alerts(api)
    stack["write"](ROOT / "tests" / "data" / "constructed-emulation.log")
    emulated = _until("the emulated selection series", lambda: _query(
        api, 'logscan_kernel_selection_info{cost_class="emulated"} == 1'), deadline)
    assert {s["metric"]["engine"] for s in emulated} == {"vllm"}
    fired = _until("QuantizedKernelDegraded to fire", lambda: _alerts(api).get("QuantizedKernelDegraded"), deadline)
    assert {"emulated"} <= {a["cost_class"] for a in fired}
    assert _query(api, "logscan_degraded == 1")


def test_a_failed_start_fires_the_start_failure_alert(stack):
    api, deadline = stack["api"], stack["deadline"]
    stack["write"](ROOT / "fixtures" / "vllm" / "vllm-019.log")  # real: "EngineCore failed to start."
    total = sum(len(p.read_text().splitlines()) for p in (ROOT / "fixtures" / "vllm" / "vllm-009.log",
                                                          ROOT / "tests" / "data" / "constructed-emulation.log",
                                                          ROOT / "fixtures" / "vllm" / "vllm-019.log"))
    _until("logscan to read the failed start", lambda: _query(api, f"logscan_read_lines_total >= {total}"), deadline)
    time.sleep(2.5)  # a scrape after the read
    names = set(_get(f"{api}/label/__name__/values")["data"])
    assert "logscan_kernel_selection_info" in names
    if "logscan_start_failures_total" not in names:
        pytest.skip("this logscan exports no logscan_start_failures_total yet (the fail-closed work adds it): "
                    "the alert rule itself is unit-tested with promtool in tests/test_deploy.py")
    _until("the start-failure series", lambda: _query(api, "logscan_start_failures_total > 0"), deadline)
    fired = _until("EngineStartFailed to fire", lambda: _alerts(api).get("EngineStartFailed"), deadline)
    assert fired[0]["namespace"] == "llm"
