"""End to end: a real writer process, rotations by rename and copytruncate, a restart of
``logscan follow`` midway, every selection and finding exactly once, and ``/metrics`` over HTTP.

The writer (``tests/helpers/log_writer.py``) writes real vLLM start-up lines (every bundled
fixture log, twice) in kubelet's CRI format at a steady rate into
``var/log/pods/<ns>_<pod>_<uid>/<container>/0.log``. Meanwhile the test rotates the file like
kubelet (rename to ``0.log.<timestamp>``, older rotated files gzipped) and like logrotate's
copytruncate, and stops ``logscan follow`` (SIGTERM) and starts it again with the same
``--state-file`` while rotations go on. The expected selections and findings are those that
``logscan scan`` reports on the same content written as one file.
"""
from __future__ import annotations

import collections
import contextlib
import fcntl
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from logscan.pipeline import scan_inputs
from tests.conftest import ROOT, end_on_a_selection, real_logs
from tests.helpers.log_writer import cri_records
from tests.helpers.waiting import wait_until

HARD_TIMEOUT = 60.0  # seconds for the whole scenario; each wait below has its own bound
POD_DIR = "llm_vllm-0_0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"


#: lines of real vLLM logs per pass of the scenario (written twice at 100 lines/s): a fixed budget,
#: so the scenario's length does not grow with the bundled corpus (corpus batch 14's twelve vLLM logs
#: took it from ~35 s to past HARD_TIMEOUT); the logs are taken in order until the budget is spent
LINE_BUDGET = 1800


def _source_lines() -> list[str]:
    # /metrics exports the selections of the latest run: the budget keeps end_on_a_selection's last log
    logs = end_on_a_selection([p for p in real_logs("vllm") if p.name.startswith("vllm-")])
    texts = [log.read_text(encoding="utf-8").split("\n") for log in logs]
    chosen, used = [], len(texts[-1])
    for text in texts[:-1]:
        if used + len(text) > LINE_BUDGET:
            continue
        chosen.append(text)
        used += len(text)
    chosen.append(texts[-1])
    lines: list[str] = []
    for _ in range(2):
        for text in chosen:
            lines.extend(text)
    return lines


def _expected(tmp: Path, lines: list[str]) -> collections.Counter:
    whole = tmp / "whole.log"
    with whole.open("w", encoding="utf-8") as fh:
        for line in lines:
            for r in cri_records(line, 120):
                fh.write(f"2026-11-29T00:00:00.000000Z stdout {r}\n")
    # the per-run comparison is with scan's unfolded runs, and the followers run with folding off
    # (LOGSCAN_FOLD=0): this test is about every record once across rotations and restarts; follow's
    # folding of repeated runs is tests/test_follow_repeats.py's
    report = scan_inputs([str(whole)], fold=False)
    keys: collections.Counter = collections.Counter()
    for run in report.runs:
        for s in run.selections:
            keys[(run.first_line, "selection", s.family, s.kernel, s.cost_class.value)] += 1
        for f in run.findings:
            keys[(run.first_line, "finding", f.family, f.code)] += 1
        if run.start_failure is not None:
            keys[(run.first_line, "start_failure", run.start_failure.line)] += 1
    return keys


def _got(outputs: list[str]) -> collections.Counter:
    keys: collections.Counter = collections.Counter()
    for text in outputs:
        for line in text.splitlines():
            rec = json.loads(line)
            assert (rec["namespace"], rec["pod"], rec["container"]) == ("llm", "vllm-0", "vllm")
            if rec["type"] == "selection":
                s = rec["selection"]
                keys[(rec["run_line"], "selection", s["family"], s["kernel"], s["cost_class"])] += 1
            elif rec["type"] == "start_failure":
                keys[(rec["run_line"], "start_failure", rec["start_failure"]["line"])] += 1
            else:
                keys[(rec["run_line"], "finding", rec["finding"].get("family"), rec["finding"]["code"])] += 1
    return keys


class _Follow:
    """One ``logscan follow`` process with stdout to a file and the metrics port read from stderr."""

    def __init__(self, tmp: Path, n: int, pattern: str, state: Path):
        self.out = tmp / f"follow-{n}.jsonl"
        self.err = tmp / f"follow-{n}.err"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "logscan.cli", "follow", pattern, "--state-file", str(state),
             "--mode", "daemonset", "--metrics-addr", "127.0.0.1:0", "--poll-interval", "0.05", "--idle-flush", "0.2"],
            stdout=self.out.open("w"), stderr=self.err.open("w"), cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "LOGSCAN_FOLD": "0"})
        self.port = None
        deadline = time.monotonic() + 20
        while self.port is None and time.monotonic() < deadline and self.proc.poll() is None:
            for line in self.err.read_text().splitlines():
                if "/metrics" in line:
                    self.port = int(line.split("127.0.0.1:")[1].split("/")[0])
            time.sleep(0.02)
        assert self.port is not None, self.err.read_text()

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def stop(self) -> str:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=15) == 0, self.err.read_text()
        assert "Traceback" not in self.err.read_text()
        return self.out.read_text()


class _Rotator:
    """Rotates the log under the writer's lock: kubelet-style rename (+ gzip) or copytruncate."""

    def __init__(self, log: Path, lock: Path):
        self.log, self.lock = log, lock
        self.n = 0

    @contextlib.contextmanager
    def locked(self):
        """Hold the writer's lock: the writer waits."""
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def rotate(self, kind: str) -> None:
        self.n += 1
        rotated = self.log.with_name(f"{self.log.name}.20261129-0000{self.n:02d}")
        fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not self.log.exists():
                return
            if kind == "rename":
                os.rename(self.log, rotated)
            else:
                shutil.copyfile(self.log, rotated)
                os.truncate(self.log, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        # kubelet compresses every rotated file but the newest
        plain = sorted(p for p in self.log.parent.glob(self.log.name + ".*") if p.suffix != ".gz")
        for p in plain[:-1]:
            with p.open("rb") as src, gzip.open(str(p) + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            p.unlink()




def test_follow_rotations_restart_exactly_once_and_metrics(tmp_path):
    t0 = time.monotonic()
    lines = _source_lines()
    expected = _expected(tmp_path, lines)
    assert sum(1 for k in expected if k[1] == "finding") >= 4  # the scenario must have findings to lose

    src = tmp_path / "source.log"
    src.write_text("\n".join(lines), encoding="utf-8")
    logdir = tmp_path / "var/log/pods" / POD_DIR / "vllm"
    logdir.mkdir(parents=True)
    log, lock, state = logdir / "0.log", tmp_path / "writer.lock", tmp_path / "state.json"
    pattern = str(tmp_path / "var/log/pods/*/*/*.log")

    progress = tmp_path / "progress"
    first = _Follow(tmp_path, 1, pattern, state)  # started before the file exists: found by the glob
    writer = subprocess.Popen([sys.executable, "-m", "tests.helpers.log_writer", str(src), str(log), str(lock),
                               "--rate", "100", "--split", "120", "--progress", str(progress)], cwd=ROOT)

    def written() -> int:
        try:
            return int(progress.read_text() or 0)
        except (OSError, ValueError):
            return 0

    rot = _Rotator(log, lock)
    outputs = []
    second = None
    try:
        kinds = ["rename", "copytruncate"] * 4
        step = len(lines) // (len(kinds) + 1)
        for i, kind in enumerate(kinds):
            # rotations at fixed points of the log, however slow the machine
            assert wait_until(lambda: written() >= (i + 1) * step, 20), f"writer stalled at {written()} lines"
            rot.rotate(kind)
            if i == 2:
                outputs.append(first.stop())  # down across the next two rotations and a gzip
            if i == 4:
                with rot.locked():  # the writer waits while logscan starts again
                    second = _Follow(tmp_path, 2, pattern, state)
        assert writer.wait(timeout=HARD_TIMEOUT) == 0
        assert second is not None
        total = sum(len(cri_records(line, 120)) for line in lines)

        def caught_up() -> bool:
            status, text = second.get("/metrics")
            return status == 200 and len(_got([second.out.read_text()])) + len(_got(outputs)) >= len(expected)

        wait_until(caught_up, 20)
        status, ready = second.get("/readyz")
        assert status == 200, ready
        assert second.get("/livez")[0] == 200
        status, text = second.get("/metrics")
        assert status == 200
        time.sleep(0.3)  # > --idle-flush: a multi-line message at the very end is complete
        outputs.append(second.stop())
    finally:
        for p in (writer, first.proc, second.proc if second else None):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(timeout=10)

    got = _got(outputs)
    assert {k: n for k, n in got.items() if n != 1} == {}, "reported more than once"
    assert sorted(set(expected) - set(got)) == [], "lost"
    assert sorted(set(got) - set(expected)) == [], "not reported by scan"
    assert rot.n == 8 and list(logdir.glob("0.log.*.gz")), "the scenario rotated and gzipped"

    fams = {f.name: f for f in text_string_to_metric_families(text)}
    pod = {"namespace": "llm", "pod": "vllm-0", "container": "vllm"}
    sel = fams["logscan_kernel_selection_info"].samples
    assert sel and all(s.value == 1 and {k: s.labels[k] for k in pod} == pod for s in sel)
    assert {s.labels["cost_class"] for s in sel} <= {"native", "weight_only", "emulated", "dequant_at_load",
                                                     "portable", "unknown"}
    findings = [s for s in fams["logscan_findings"].samples if s.name == "logscan_findings_total"]
    assert findings and all(s.labels["code"] and s.labels["severity"] for s in findings)
    rotations = {s.labels["kind"]: s.value for s in fams["logscan_rotations"].samples
                 if s.name == "logscan_rotations_total"}
    assert sum(rotations.values()) >= 1  # which kind it saw depends on the timing of its polls
    saved = json.loads(state.read_text())["streams"][str(log)]
    assert saved["line"] == total  # every physical line read, none twice (line numbers run on)
    assert time.monotonic() - t0 < HARD_TIMEOUT
