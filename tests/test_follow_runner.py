"""``Follower`` in process: same selections and findings as ``scan``, exactly once, across restarts;
pod labels; metrics names and labels; state file handling; the CLI's stdin mode and bad options.
"""
from __future__ import annotations

import collections
import io
import json
import subprocess
import sys

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from logscan.follow.metrics import MAX_KERNEL_VALUES, FollowMetrics
from logscan.follow.podinfo import PodLabels, labels_from_path
from logscan.follow.runner import Follower
from logscan.pipeline import scan_inputs
from tests.conftest import ROOT, end_on_a_selection, http_get, real_logs
from tests.helpers.log_writer import cri_records

LOGS = [p for p in real_logs("vllm") if p.name.startswith("vllm-")]
POD = "var/log/pods/llm_vllm-0_0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9/vllm/0.log"


def _scan_keys(path) -> collections.Counter:
    keys: collections.Counter = collections.Counter()
    for run in scan_inputs([str(path)]).runs:
        for s in run.selections:
            keys[(run.first_line, "selection", s.family, s.kernel, s.cost_class.value)] += 1
        for f in run.findings:
            keys[(run.first_line, "finding", f.family, f.code)] += 1
        if run.start_failure is not None:
            keys[(run.first_line, "start_failure", run.start_failure.line)] += 1
    return keys


def _json_keys(text: str) -> collections.Counter:
    keys: collections.Counter = collections.Counter()
    for line in text.splitlines():
        r = json.loads(line)
        if r["type"] == "selection":
            s = r["selection"]
            keys[(r["run_line"], "selection", s["family"], s["kernel"], s["cost_class"])] += 1
        elif r["type"] == "start_failure":
            keys[(r["run_line"], "start_failure", r["start_failure"]["line"])] += 1
        else:
            keys[(r["run_line"], "finding", r["finding"].get("family"), r["finding"]["code"])] += 1
    return keys


def _cri_lines() -> list[str]:
    # the metrics tests read the latest run's selections: end on a fixture that has some
    lines = [ln for f in end_on_a_selection(LOGS) for ln in f.read_text(encoding="utf-8").split("\n")]
    return [f"2026-11-29T00:00:00.000000Z stdout {r}" for ln in lines for r in cri_records(ln, 90)]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_follow_reports_what_scan_reports_once(packs, tmp_path, log):
    path = tmp_path / "engine.log"
    lines = log.read_text(encoding="utf-8").split("\n")
    out = io.StringIO()
    f = Follower([str(path)], packs, out, idle_flush=0.0)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(0, len(lines), 3):  # the log grows three lines per poll
            fh.write("".join(ln + "\n" for ln in lines[i:i + 3]))
            fh.flush()
            f.poll_once()
    f.poll_once()
    got = _json_keys(out.getvalue())
    assert {k: n for k, n in got.items() if n > 1} == {}
    assert set(got) == set(_scan_keys(path))


def test_restart_after_every_chunk_reports_everything_once(packs, tmp_path):
    path = tmp_path / POD
    path.parent.mkdir(parents=True)
    state = tmp_path / "state.json"
    lines = _cri_lines()
    outs = []
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(0, len(lines), 37):  # a restart of logscan after every 37 lines
            fh.write("".join(ln + "\n" for ln in lines[i:i + 37]))
            fh.flush()
            out = io.StringIO()
            f = Follower([str(tmp_path / "var/log/pods/*/*/*.log")], packs, out, state_file=str(state),
                         idle_flush=3600)
            f.poll_once()
            if i + 37 >= len(lines):
                # the end of the file, as scan sees it: the last follower polls once more and
                # reads no new line, so a failed start held back for its traceback's end (a
                # traceback window with no exception line, vllm-181) is reported then
                f.poll_once()
                # then the stream ends, as the file does for scan: the last run is still open, and
                # follow's repeat folding holds a record an earlier run of the stream reported
                # until the run closes or REPEAT_EVERY passes (the last fixture, vllm-361 since
                # batch 14, selects MarlinLinearKernel for WNA16 as earlier ones do)
                f.end_all()
            f.save_state()
            outs.append(out.getvalue())
    got = _json_keys("".join(outs))
    assert {k: n for k, n in got.items() if n > 1} == {}
    assert set(got) == set(_scan_keys(path))
    for text in outs:
        for line in text.splitlines():
            r = json.loads(line)
            assert (r["namespace"], r["pod"], r["container"]) == ("llm", "vllm-0", "vllm")
    saved = json.loads(state.read_text())
    assert saved["version"] == 1 and saved["streams"][str(path)]["line"] <= len(lines)


def test_a_corrupt_state_file_is_ignored_with_a_note(packs, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(LOGS[0].read_text(encoding="utf-8"))
    state = tmp_path / "state.json"
    state.write_text("{not json")
    out, err = io.StringIO(), io.StringIO()
    f = Follower([str(log)], packs, out, state_file=str(state), err=err)
    f.poll_once()
    f.save_state()
    assert "ignored" in err.getvalue() and out.getvalue()
    assert json.loads(state.read_text())["version"] == 1  # replaced, atomically, by a good one
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".logscan-state.")] == []


def test_labels_from_kubelet_paths():
    assert labels_from_path("/" + POD) == PodLabels("llm", "vllm-0", "vllm", 0)
    assert labels_from_path("/" + POD.replace("0.log", "3.log")).restart == 3
    assert labels_from_path(
        "/var/log/containers/vllm-0_llm_vllm-" + "a" * 64 + ".log") == PodLabels("llm", "vllm-0", "vllm")
    assert labels_from_path("/logs/engine.log") == PodLabels()
    assert labels_from_path("/var/log/pods/not-a-pod-dir/vllm/0.log") == PodLabels()


def _follow_metrics(packs, tmp_path, mode: str) -> dict:
    path = tmp_path / POD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(_cri_lines()) + "\n")
    m = FollowMetrics(mode, packs.findings.cost_class_finding)
    f = Follower([str(path)], packs, io.StringIO(), metrics=m)
    f.poll_once()
    return {fam.name: fam for fam in text_string_to_metric_families(generate_latest(m.registry).decode())}


def test_sidecar_metrics_carry_no_pod_labels(packs, tmp_path):
    fams = _follow_metrics(packs, tmp_path, "sidecar")
    sel = fams["logscan_kernel_selection_info"].samples
    assert sel and all(set(s.labels) == {"engine", "registry", "kernel", "cost_class"} for s in sel)
    assert fams["logscan_degraded"].samples[0].labels == {}
    codes = {s.labels["code"] for s in fams["logscan_findings"].samples if s.name.endswith("_total")}
    assert codes and codes <= set(packs.findings.code)
    lines = next(s for s in fams["logscan_read_lines"].samples if s.name.endswith("_total"))
    assert lines.value == len(_cri_lines())


def test_daemonset_metrics_carry_the_pod_and_bounded_values_only(packs, tmp_path):
    fams = _follow_metrics(packs, tmp_path, "daemonset")
    pod = {"namespace": "llm", "pod": "vllm-0", "container": "vllm"}
    for name in ("logscan_kernel_selection_info", "logscan_degraded", "logscan_findings", "logscan_read_lines"):
        samples = fams[name].samples
        assert samples and all({k: s.labels.get(k) for k in pod} == pod for s in samples), name
    for s in fams["logscan_kernel_selection_info"].samples:
        assert str(tmp_path) not in json.dumps(s.labels) and " " not in s.labels["kernel"]


def test_kernel_label_values_are_capped():
    m = FollowMetrics("sidecar", [])
    values = {m._kernel_value(f"Kernel{i} with spaces") for i in range(MAX_KERNEL_VALUES + 10)}
    assert "other" in values and len(values) == MAX_KERNEL_VALUES + 1
    assert all(" " not in v for v in values)


def test_cli_follows_stdin_to_its_end(tmp_path):
    log = LOGS[0]
    p = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "-", "--metrics-addr", "off"],
                       input=log.read_bytes(), capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 0, p.stderr
    got = _json_keys(p.stdout.decode())
    assert set(got) == set(_scan_keys(log)) and max(got.values()) == 1


@pytest.mark.parametrize("addr", ["nonsense", "127.0.0.1:99999"])
def test_cli_refuses_a_bad_metrics_address_without_traceback(addr):
    p = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "/nonexistent.log", "--metrics-addr", addr],
                       capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and b"Traceback" not in p.stderr and b"metrics-addr" in p.stderr


def test_an_unwritable_state_file_is_a_note_not_a_crash(packs, tmp_path):
    log = tmp_path / "engine.log"
    log.write_text(LOGS[0].read_text(encoding="utf-8"))
    err = io.StringIO()
    f = Follower([str(log)], packs, io.StringIO(), state_file=str(tmp_path / "missing-dir" / "state.json"), err=err)
    f.poll_once()
    f.save_state()
    f.save_state()
    assert err.getvalue().count("cannot write state file") == 1


def _samples(m: FollowMetrics) -> list:
    return [s for fam in text_string_to_metric_families(generate_latest(m.registry).decode()) for s in fam.samples]


def test_daemonset_exports_the_running_container_not_its_previous_restart(packs):
    degraded_run = scan_inputs([str(ROOT / "fixtures/vllm/vllm-005.log")]).runs[0]  # Marlin, weight-only
    native_run = scan_inputs([str(ROOT / "fixtures/vllm/vllm-011.log")]).runs[0]
    m = FollowMetrics("daemonset", packs.findings.cost_class_finding)
    d = "/var/log/pods/llm_vllm-0_0f1e2d3c/vllm/"
    m.set_run(d + "0.log", labels_from_path(d + "0.log"), degraded_run)
    assert m.degraded.labels("llm", "vllm-0", "vllm")._value.get() == 1
    m.set_run(d + "1.log", labels_from_path(d + "1.log"), native_run)  # the container restarted, fixed
    m.set_run(d + "0.log", labels_from_path(d + "0.log"), degraded_run)  # the old log reports again
    sel = [s for s in _samples(m) if s.name == "logscan_kernel_selection_info"]
    assert {s.labels["cost_class"] for s in sel} == {"native"}
    assert m.degraded.labels("llm", "vllm-0", "vllm")._value.get() == 0
    m.finding(labels_from_path(d + "1.log"), "SLOW_QUANT_METHOD", "info")
    m.forget(d + "0.log", labels_from_path(d + "0.log"))
    assert any(s.labels.get("pod") == "vllm-0" for s in _samples(m))  # 1.log is still followed
    m.forget(d + "1.log", labels_from_path(d + "1.log"))  # the pod is gone: all its series go
    assert [s for s in _samples(m) if s.labels.get("pod") == "vllm-0"] == []


def test_http_endpoints_on_loopback(packs, http_server):
    from logscan.follow.metrics import serve

    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    state = {"ready": False}
    _, port = http_server(serve(m, "127.0.0.1:0", lambda: state["ready"]))

    def get(path: str) -> tuple[int, str]:
        status, body = http_get(port, path)
        return status, body.decode()

    assert get("/readyz")[0] == 503  # the existing content is not caught up yet
    state["ready"] = True
    assert get("/readyz")[0] == 200
    assert get("/livez")[0] == 200
    assert get("/nope")[0] == 404
    status, text = get("/metrics")
    assert status == 200 and "logscan_degraded 0.0" in text and "# TYPE logscan_findings_total counter" in text


def test_a_stop_signal_while_the_poll_sleep_holds_its_lock_does_not_deadlock(packs, tmp_path):
    # a signal handler runs in the main thread, possibly while that thread holds the wake
    # event's (non-reentrant) lock inside Event.wait: request_stop must not take that lock itself
    import threading

    f = Follower([str(tmp_path / "engine.log")], packs, io.StringIO())

    def handler_inside_wait():
        with f.wake._cond:  # where Event.wait is when the signal lands
            f.request_stop()

    t = threading.Thread(target=handler_inside_wait, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "request_stop deadlocked on the wake event's lock"
    assert f.stop and f.wake.wait(5)


def test_a_restarted_follower_exports_the_restored_runs_gauges(packs, tmp_path):
    """After a restart with --state-file, the gauges of the run the state restores (its kernel
    selections, ``logscan_degraded``) are exported at once: before, they were empty until the
    run's next event, and an alert on a degraded kernel (deploy/prometheusrule.yaml) resolved
    while the engine still ran it (found by the new-user trial, fixtures/vllm/vllm-005.log)."""
    log = tmp_path / "vllm.log"
    log.write_bytes((ROOT / "fixtures/vllm/vllm-005.log").read_bytes())
    state = tmp_path / "state.json"

    def run_once() -> dict:
        m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
        f = Follower([str(log)], packs, io.StringIO(), metrics=m, state_file=str(state))
        f.poll_once()
        f.save_state()
        fams = {fam.name: fam for fam in text_string_to_metric_families(generate_latest(m.registry).decode())}
        sel = {(s.labels["kernel"], s.labels["cost_class"]) for s in fams["logscan_kernel_selection_info"].samples}
        return {"selections": sel, "degraded": fams["logscan_degraded"].samples[0].value}

    first = run_once()
    assert ("MarlinNvFp4LinearKernel", "weight_only") in first["selections"] and first["degraded"] == 1
    assert run_once() == first  # the restart reads no new line, and exports the same
