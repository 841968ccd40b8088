"""A run told to stop by a signal (docs/lifecycle.md "Stopped"): vllm-357 (sostrowsk/dgx-spark-local-llm's
vllm-int4.log, vLLM 0.25.1) served requests, got SIGTERM ('[shutdown] EngineCore: trigger received
signal=SIGTERM', v1/engine/core.py run_engine_core's handler) and, in its orderly teardown, AsyncLLM's
output_handler raised EngineDeadError. That traceback is the stop's, not a failure: logscan said "failed
WHILE SERVING" (SERVING_FAILED, which the default gate fails); it says "stopped (SIGTERM)". A trigger line
in a start that never came up still leaves its traceback a failed start, and a crash before the stop
still fails the gate."""
from __future__ import annotations

import io
import json
import subprocess
import sys

from logscan.analysis.lifecycle import signal_of
from logscan.follow.runner import Follower
from logscan.models import Event
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES, ROOT, runs_of, write_log

LOG = FIXTURES / "vllm" / "vllm-357.log"  # real
_LINES = LOG.read_bytes().decode("utf-8").split("\n")
TRIGGER = 37  # '[shutdown] EngineCore: trigger received signal=SIGTERM'


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "logscan", *args], capture_output=True, text=True, cwd=ROOT)


def _served_run(path) -> dict:
    return [r for r in runs_of(path) if r["selections"]][0]


def _without(tmp_path, *drop: int):
    """vllm-357 without the given 1-based lines."""
    keep = [t for i, t in enumerate(_LINES, 1) if i not in drop]
    return write_log(tmp_path, "\n".join(keep))


def test_the_sigterm_teardown_is_a_stop_not_a_failure():
    run = _served_run(LOG)
    assert run["start_failure"] is None and run.get("serving_failure") is None
    st = run["stopped"]
    assert (st["signal"], st["line"], st["served"], st["teardown_line"]) == ("SIGTERM", TRIGGER, True, 50)
    assert "EngineDeadError" in st["teardown"]
    assert not [f for f in run["findings"] if f["severity"] == "error"]
    assert [(s["kernel"], s["cost_class"]) for s in run["selections"]] == [("MARLIN", "native")]


def test_text_and_json_say_stopped_sigterm():
    text = _run("scan", str(LOG)).stdout
    assert "stopped (SIGTERM) at line 37 after serving" in text
    assert "WHILE SERVING" not in text and "start FAILED" not in text
    assert "1 stopped by a signal" in text.splitlines()[-1]
    doc = json.loads(_run("scan", "--format", "json", str(LOG)).stdout)
    assert [r["stopped"]["signal"] for r in doc["runs"] if "stopped" in r] == ["SIGTERM"]
    html = _run("scan", "--format", "html", str(LOG)).stdout
    assert "stopped (SIGTERM) at line 37 after serving" in html and "failed while serving" not in html
    md = _run("gate", "--format", "markdown", str(LOG)).stdout
    # one run: the EngineCore's config line continues the APIServer's start (boundary.child_start)
    assert "**run 1:** stopped (SIGTERM) at line 37" in md


def test_without_the_trigger_line_the_api_servers_line_still_stops_it(tmp_path):
    # launcher.py's handler ('[shutdown] API server: shutdown triggered') names no signal
    st = _served_run(_without(tmp_path, TRIGGER))["stopped"]
    assert (st["signal"], st["served"], st["teardown_line"]) == (None, True, 49)
    assert "stopped (signal not named)" in _run("scan", str(tmp_path / "x.log")).stdout


def test_without_any_stop_line_the_traceback_is_a_failure_again(tmp_path):
    # the same teardown with both handlers' lines cut: nothing says a signal came, so the EngineDeadError
    # after the engine left its busy loop is a failure while serving (fail closed)
    run = _served_run(_without(tmp_path, TRIGGER, TRIGGER + 1))
    assert run.get("stopped") is None and run["serving_failure"]["line"] == 48


def test_the_gate_and_fail_on_pass_a_stopped_run():
    g = json.loads(_run("gate", "--format", "json", str(LOG)).stdout)["gate"]
    served = [c for c in g["checks"] if c.get("run") == 1]  # one run since boundary.child_start
    assert served and not [c for c in served if c["code"] in ("SERVING_FAILED", "START_FAILED", "START_INCOMPLETE")]
    assert [c["verdict"] for c in served] == ["pass"] * len(served)
    assert _run("scan", "--fail-on", "START_FAILED", str(LOG)).returncode == 0


def test_a_crash_before_the_stop_still_fails_the_gate(tmp_path):
    # vllm-161's real serving crash (a 200 OK, then EngineDeadError), then its API server's SIGTERM line
    # (vllm-357's, with vllm-161's pid): the crash stays one
    crash = (FIXTURES / "vllm" / "vllm-161.log").read_text(encoding="utf-8").rstrip("\n")
    stop = _LINES[TRIGGER].replace("pid=29938", "pid=83023")
    path = write_log(tmp_path, crash + "\n" + stop + "\n")
    (run,) = runs_of(path)
    assert run["serving_failure"]["line"] == 4 and run["stopped"]["teardown_line"] is None
    p = _run("gate", "--format", "json", "--partial-log", str(path))
    g = json.loads(p.stdout)["gate"]
    assert [(c["code"], c["verdict"]) for c in g["checks"] if c["code"] == "SERVING_FAILED"] == [("SERVING_FAILED", "fail")]
    assert p.returncode == 1


def test_a_trigger_during_a_start_that_never_came_up_leaves_a_failed_start(tmp_path):
    text = ("(EngineCore pid=30070) INFO 08-01 23:20:03 [gpu_model_runner.py:5209] Starting to load model m...\n"
            + _LINES[TRIGGER - 1] + "\n"
            "(EngineCore pid=30070) ERROR 08-01 23:37:28 [core.py:900] Traceback (most recent call last):\n"
            "(EngineCore pid=30070) ERROR 08-01 23:37:28 [core.py:900] RuntimeError: CUDA error: out of memory\n")
    run = runs_of(write_log(tmp_path, text))[-1]
    assert run["start_failure"] is not None and run.get("serving_failure") is None
    assert run["stopped"]["served"] is False and run["stopped"]["teardown_line"] is None
    p = _run("gate", "--format", "json", str(tmp_path / "x.log"))
    assert p.returncode == 1 and "START_FAILED" in [c["code"] for c in json.loads(p.stdout)["gate"]["checks"]]


# -- other engines' signal lines, as their sources print them ---------------------------------------

def test_sglang_sigterm_after_serving(tmp_path):
    # managers/tokenizer_manager.py SignalHandler.sigterm_handler; the scheduler's traceback after it
    text = ("[2025-07-31 01:29:00] The server is fired up and ready to roll!\n"
            "[2025-07-31 01:30:11] SIGTERM received. signum=15 frame=None. Draining requests and shutting down...\n"
            "[2025-07-31 01:30:12] Traceback (most recent call last):\n"
            "[2025-07-31 01:30:12] RuntimeError: engine stopped\n")
    path = write_log(tmp_path, "[2025-07-31 01:28:00] server_args=ServerArgs(model_path='m', quantization='fp8')\n" + text)
    run = runs_of(path)[-1]
    assert run["stopped"]["signal"] == "SIGTERM" and run["stopped"]["served"] is True
    assert run["start_failure"] is None and run.get("serving_failure") is None


def test_signal_names_from_numbers_and_rule_defaults():
    ev = Event(line=1, rule="tgi.run.stopped", kind="stop", source="x", message="Exiting gracefully: Signal 15",
               groups={"signum": "15"})
    assert signal_of(ev) == "SIGTERM"
    assert signal_of(ev.model_copy(update={"groups": {"signum": "2"}})) == "SIGINT"
    assert signal_of(ev.model_copy(update={"groups": {}}), "SIGINT") == "SIGINT"  # llama-cli's stop_signal
    assert signal_of(ev.model_copy(update={"groups": {}})) is None


def test_llama_cli_interrupted_after_its_timings(tmp_path):
    text = ("llama_model_loader: loaded meta data with 30 key-value pairs and 291 tensors from m.gguf (version GGUF V3 (latest))\n"
            "llama_perf_context_print: prompt eval time =      48.12 ms /    12 tokens (    4.01 ms per token,   249.38 tokens per second)\n"
            "Interrupted by user\n")
    run = runs_of(write_log(tmp_path, text))[-1]
    assert run["stopped"]["signal"] == "SIGINT" and run["stopped"]["served"] is True


# -- a restored follow ends the run where scan does (docs/corpus.md "Still imperfect after batch 14") --

class _Recording(Follower):
    """A follower that keeps every run it reports as closed (``final``), for comparing with scan."""

    def __init__(self, *args, kept: list, **kwargs):
        super().__init__(*args, **kwargs)
        self._kept = kept

    def _report(self, s, run, final=True, closed=None):
        if final if closed is None else closed:
            self._kept.append(run)
        super()._report(s, run, final, closed)


def _dump(run) -> dict:
    d = run.model_dump(mode="json")
    d.pop("index")
    return d


def test_a_follow_restored_at_any_line_ends_vllm_357_where_scan_does(packs, tmp_path):
    # The matcher reads one sparse state line per start (vllm.run.shutdown-after-serve: 'exiting busy
    # loop' at line 42; 'engine client stopped' at line 57 is then skipped). A follower restarted from
    # its state file after line 42 used to read line 57 again: its run ended at 57, not 56, and the
    # teardown traceback before it read as recovered from (no stop teardown). Restored, the matcher's
    # sparse state comes back from the replayed events (sources/sparse.read_since_start).
    path = tmp_path / "engine.log"
    state = tmp_path / "state.json"
    text = LOG.read_bytes().decode("utf-8")
    expected = [_dump(r) for r in scan_inputs([str(LOG)], packs).runs]
    lines = text.split("\n")
    for k in range(1, len(lines)):
        kept: list = []
        state.unlink(missing_ok=True)
        path.write_text("\n".join(lines[:k]) + "\n", encoding="utf-8")
        f = _Recording([str(path)], packs, io.StringIO(), state_file=str(state), idle_flush=3600, kept=kept)
        f.poll_once()
        f.save_state()
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines[k:]))
        g = _Recording([str(path)], packs, io.StringIO(), state_file=str(state), idle_flush=3600, kept=kept)
        g.poll_once()
        g.poll_once()
        g.end_all()
        got = [_dump(r) for r in kept]
        assert [(d["first_line"], d["last_line"], d.get("stopped")) for d in got] == \
            [(d["first_line"], d["last_line"], d.get("stopped")) for d in expected], f"restarted after line {k}"
