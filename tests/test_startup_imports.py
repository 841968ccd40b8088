"""Start-up: ``scan --format json`` imports only what it uses; ``python -m logscan`` works.

No timing here (figures come from ``bench/compare.py --startup`` and ``bench/startup.py``):
these tests check the mechanism, the modules a run leaves in ``sys.modules``.
"""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES

LOG = str(FIXTURES / "vllm" / "vllm-005.log")

PROBE = """
import sys
from logscan.cli import cli
try:
    cli.main(sys.argv[1:], prog_name="logscan")
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + " ".join(sorted(sys.modules)), file=sys.stderr)
"""


def _modules(*args: str) -> set[str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, r.stderr
    return set(line[-1].split()[1:])


def test_scan_json_imports_no_renderer_it_does_not_use():
    mods = _modules("scan", "--format", "json", LOG)
    assert "logscan.pipeline" in mods  # the probe did run a scan
    unused = {"rich", "logscan.formats.html", "logscan.formats.text", "prometheus_client", "jsonschema",
              "logscan.gate.evaluate", "logscan.analysis.predict", "logscan.follow.runner"}
    assert not (mods & unused), sorted(mods & unused)


def test_scan_text_does_not_import_html_the_gate_or_rich_when_piped():
    mods = _modules("scan", LOG)  # stdout is a pipe here: ASCII tables need no rich
    assert "logscan.formats.text" in mods
    assert not (mods & {"logscan.formats.html", "logscan.gate.evaluate", "prometheus_client", "rich.console"})


def test_python_dash_m_logscan_runs_the_cli():
    r = subprocess.run([sys.executable, "-m", "logscan", "scan", "--format", "json", LOG],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["runs"] and doc["runs"][0]["selections"]
    v = subprocess.run([sys.executable, "-m", "logscan", "--version"], capture_output=True, text=True, timeout=60)
    assert v.returncode == 0 and "logscan" in v.stdout


def test_a_command_name_that_does_not_exist_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "logscan", "sacn", LOG], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "No such command" in r.stderr


def _modules_in(env: dict, *args: str) -> set[str]:
    import os

    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
                       env={**os.environ, **env})
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, r.stderr
    return set(line[-1].split()[1:])


def test_a_scan_with_the_pack_cache_filled_never_imports_pydantic(tmp_path):
    """Issue 18: report models and pattern-pack models are plain classes; pydantic validates a pack
    file the first time its contents are seen (cold cache), never in a later scan."""
    small = tmp_path / "small.log"
    small.write_text("".join((FIXTURES / "vllm" / "vllm-001.log").read_text().splitlines(True)[:30]))
    env = {"LOGSCAN_CACHE_DIR": str(tmp_path / "cache")}
    cold = _modules_in(env, "scan", "--format", "json", str(small))
    assert "pydantic" in cold  # the first start validated the TOML files (the probe sees imports)
    for fmt in ("json", "text"):
        warm = _modules_in(env, "scan", "--format", fmt, str(small))
        assert "logscan.pipeline" in warm
        assert not {m for m in warm if m == "pydantic" or m.startswith("pydantic.") or m == "logscan.validate"}
    for log in (FIXTURES / "sglang" / "sglang-110.log", FIXTURES / "vllm" / "vllm-022.log"):  # ladders, overlay
        _modules_in(env, "scan", "--format", "json", str(log))  # the first sight of a lazily read file
        warm = _modules_in(env, "scan", "--format", "json", str(log))
        assert "pydantic" not in warm, log


def test_the_schema_command_still_uses_pydantic(tmp_path):
    mods = _modules_in({"LOGSCAN_CACHE_DIR": str(tmp_path)}, "schema")
    assert "pydantic" in mods and "logscan.validate" in mods
