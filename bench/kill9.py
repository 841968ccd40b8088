"""kill -9 restarts of ``logscan follow`` under a fast writer: duplicated and missing records.

A writer appends real vLLM start-up logs (every bundled fixture, over and over, so each pass is
new runs) plus request noise to one file at about ``--rate`` lines/s; ``logscan follow
--state-file`` is killed with SIGKILL at random moments ``--kills`` times and restarted. Prints
the records printed, the duplicates (same run line and key printed twice) and the records that
``logscan scan`` of the whole file reports but no follow process printed.

    python bench/kill9.py --rate 25000 --kills 10
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _key(r: dict) -> tuple:
    if r["type"] == "selection":
        s = r["selection"]
        return (r["run_line"], "s", s["family"], s["kernel"], s["cost_class"])
    if r["type"] == "start_failure":
        return (r["run_line"], "x", r["start_failure"]["line"])
    return (r["run_line"], "f", r["finding"].get("family"), r["finding"]["code"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=25000)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=20.0)
    a = ap.parse_args()
    logs = [ln for p in sorted((ROOT / "fixtures" / "vllm").glob("vllm-*.log"))
            for ln in p.read_text(encoding="utf-8").split("\n") if ln]
    noise = "(APIServer pid=1) INFO 01-07 13:43:31 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s"
    tmp = Path(tempfile.mkdtemp())
    log, state = tmp / "engine.log", tmp / "state.json"
    stop = threading.Event()
    written = [0]

    def writer():
        with open(log, "a", encoding="utf-8") as fh:
            t0 = time.monotonic()
            i = 0
            while not stop.is_set():
                batch = []
                for _ in range(500):
                    batch.append(logs[i % len(logs)] if (i // 400) % 3 == 0 else noise)
                    i += 1
                fh.write("\n".join(batch) + "\n")
                fh.flush()
                written[0] = i
                ahead = i / a.rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)

    outs = []

    def start():
        out = open(tmp / f"out-{len(outs)}.jsonl", "w")
        outs.append(out.name)
        return subprocess.Popen([sys.executable, "-m", "logscan.cli", "follow", "--metrics-addr", "off",
                                 "--state-file", str(state), "--poll-interval", "0.05", str(log)],
                                stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT)

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    p = start()
    rnd = random.Random(7)
    for _ in range(a.kills):
        time.sleep(rnd.uniform(0.3, a.seconds / a.kills))
        p.send_signal(signal.SIGKILL)
        p.wait()
        p = start()
    time.sleep(1.0)
    stop.set()
    w.join()
    t_end = time.monotonic()
    total = written[0]
    caught = None
    while time.monotonic() - t_end < 300:  # let the last process catch up (the state says how far)
        try:
            st = json.loads(state.read_text())["streams"][str(log)]
            if st["line"] >= total - 2:
                caught = time.monotonic() - t_end
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.5)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    p.wait()
    got = collections.Counter()
    for name in outs:
        for ln in Path(name).read_text().splitlines():
            if ln.strip():
                got[_key(json.loads(ln))] += 1
    from logscan.pipeline import scan_inputs

    expected = set()
    for run in scan_inputs([str(log)]).runs:
        expected |= {(run.first_line, "s", s.family, s.kernel, s.cost_class.value) for s in run.selections}
        expected |= {(run.first_line, "f", f.family, f.code) for f in run.findings}
        if run.start_failure is not None:
            expected.add((run.first_line, "x", run.start_failure.line))
    dups = sum(n - 1 for n in got.values() if n > 1)
    print(f"lines written {written[0]} (~{a.rate}/s), kill -9 restarts {a.kills}")
    print(f"records printed {sum(got.values())}, distinct {len(got)}, expected (scan) {len(expected)}")
    print(f"caught up {caught:.1f} s after the writer stopped" if caught is not None else "did not catch up in 300 s")
    print(f"duplicated {dups}, missing {len(expected - set(got))}, not in scan {len(set(got) - expected)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
