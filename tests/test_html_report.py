"""The HTML report (``scan --format html``, ``gate --output html=...``): one self-contained page
that draws each selection's ladder, checked as markup and in headless Chromium (Debian's
``chromium``): a screenshot is kept under ``test-artifacts/`` (CI keeps it as an artifact), the
DOM is checked for the selected rung, and Chromium's net log for any request the page made.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import regex

import logscan
from logscan.formats import html as html_format
from tests.conftest import ROOT

LOG = ROOT / "fixtures" / "vllm" / "vllm-005.log"  # real: NVFP4 on weight-only Marlin, rung 6 of 14
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the flags every run uses: no GPU, no background or component traffic, a fresh profile, and a
#: proxy and resolver that point anything Chromium itself tries at nowhere (loopback only)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=http://127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND"]
#: hosts Chromium's own services contact (time, updates, accounts): not the page's requests
BROWSER_HOSTS = regex.compile(r"^https?://([\w-]+\.)*(google\.com|googleapis\.com|gvt1\.com|gstatic\.com)(/|:|$)")


def _page(gated: bool = True) -> str:
    report = logscan.scan(LOG)
    # LOG is an excerpt cut before its ready line: partial_log keeps the page's verdict on its kernels
    return html_format.render(report, logscan.gate(report, partial_log=True) if gated else None)


def test_page_is_self_contained():
    page = _page()
    assert "<script" not in page.lower() and "@import" not in page and "url(" not in page
    assert not regex.search(r"\b(src|href)\s*=", page)
    assert "default-src 'none'" in page  # and a CSP forbids any load should a value slip through


def test_ladder_is_drawn_whole_with_the_selected_rung_and_the_gates_of_the_skipped_ones():
    page = _page()
    rungs = regex.findall(r'<li class="rung (\w+) cost-(\w+)" data-rung="(\d+)"', page)
    assert len(rungs) == 14
    assert [int(n) for _, _, n in rungs] == list(range(1, 15))
    states = [s for s, _, _ in rungs]
    assert states == ["skipped"] * 5 + ["selected"] + ["below"] * 8
    sel = regex.search(r'<li class="rung selected[^>]*>.*?</li>', page).group(0)
    assert "MarlinNvFp4LinearKernel" in sel and "weight_only" in sel
    skipped = regex.findall(r'<li class="rung skipped.*?</li>', page)
    assert all("gate:" in li for li in skipped) and "is_supported" in skipped[0]
    assert dict((n, c) for _, c, n in rungs)["13"] == "emulated"
    bg, _ = html_format.COLOURS["weight_only"]
    assert bg in sel


def test_run_header_findings_and_gate_verdict():
    page = _page()
    for text in ("vllm 0.1.dev14910+g20b14095a", "0.10.2 .. 0.33.0", "CUDA", "WEIGHT_ONLY_SUBSTITUTION",
                 "evidence: Your GPU does not have native support for FP4", 'id="verdict">WARN<'):
        assert text in page, text


def test_log_text_is_escaped(tmp_path):
    log = tmp_path / "x.log"
    log.write_text(LOG.read_text().replace("Your GPU does not have native support for FP4 computation",
                                           "Your GPU does not have native support for FP4 computation <img src=x onerror=alert(1)>"))
    page = html_format.render(logscan.scan(log))
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_cli_writes_the_page(tmp_path):
    out = subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "--format", "html", str(LOG)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("<!DOCTYPE html>")
    target = tmp_path / "report.html"
    gated = subprocess.run([sys.executable, "-m", "logscan.cli", "gate", "--partial-log", "--output", f"html={target}",
                            str(LOG)],
                           capture_output=True, text=True, timeout=120)
    assert gated.returncode == 0 and 'id="verdict">WARN<' in target.read_text()


def _chromium(url: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, url],
                          capture_output=True, text=True, timeout=120)


def _page_requests(netlog) -> set[str]:
    data = json.loads(netlog.read_text() or "{}") if netlog.stat().st_size else {"events": []}
    urls = {e.get("params", {}).get("url") for e in data.get("events", [])}
    return {u for u in urls if u and not u.startswith("file://") and not BROWSER_HOSTS.match(u)}


needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian's chromium package; "
                                                             ".ci/run installs it)")


@needs_chromium
def test_chromium_renders_the_ladder_and_makes_no_request(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(_page())
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "html-report.png"
    shot.unlink(missing_ok=True)
    netlog = tmp_path / "net.json"
    dom = _chromium(page.as_uri(), tmp_path, f"--log-net-log={netlog}", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    selected = regex.findall(r'<li class="rung selected[^"]*" data-rung="(\d+)"[^>]*>.*?</li>', dom.stdout, flags=regex.S)
    assert selected == ["6"]
    assert "MarlinNvFp4LinearKernel" in regex.search(r'<li class="rung selected.*?</li>', dom.stdout, flags=regex.S).group(0)
    assert _page_requests(netlog) == set()
    snap = _chromium(page.as_uri(), tmp_path, f"--screenshot={shot}", "--window-size=1200,1500",
                     "--hide-scrollbars")
    assert snap.returncode == 0 and shot.is_file(), snap.stderr[-2000:]
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")) == (1200, 1500)
    assert shot.stat().st_size > 50_000  # a drawn page, not a blank one (a blank 1200x1500 PNG is ~10 KB)


@needs_chromium
def test_the_request_check_can_fail(tmp_path):
    page = tmp_path / "external.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    netlog = tmp_path / "net.json"
    _chromium(page.as_uri(), tmp_path, f"--log-net-log={netlog}", "--dump-dom")
    assert _page_requests(netlog) == {"http://127.0.0.1:9/x.png"}


def test_every_cost_class_has_its_own_colour_and_terminal_style():
    """A cost class without an entry rendered as ``unknown`` (grey) and left the legend: the
    HTML ladder and the terminal table said nothing of an ``activation_upcast`` selection
    (llama.cpp's MMQ config for NVFP4 weights; found by the new-user trial)."""
    from logscan.formats.table import STYLES
    from logscan.models_kernel import CostClass

    classes = {c.value for c in CostClass}
    assert set(html_format.COLOURS) == classes
    assert set(STYLES) == classes
    assert len(set(html_format.COLOURS.values())) == len(classes)  # no two share a colour
