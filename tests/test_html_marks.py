"""The HTML page carries the text report's doubts (trial 37): a rung the releases disagree on ('6? of 14' with the
RUNG k/n? legend), the fallback the log does not explain (UNEXPLAINED and its undecided needs), and a start not seen
to come up or fail (START_INCOMPLETE). Real log: fixtures/vllm/vllm-005.log (text report: '6/14?', 'fallback
UNEXPLAINED', '1 start(s) not seen to come up or fail')."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import FIXTURES


def _page(name):
    engine = name.rsplit("-", 1)[0]
    return subprocess.run([sys.executable, "-m", "logscan.cli", "scan", "--format", "html",
                           str(FIXTURES / engine / f"{name}.log")], capture_output=True, text=True, check=False).stdout


def _text(name):
    engine = name.rsplit("-", 1)[0]
    return subprocess.run([sys.executable, "-m", "logscan.cli", "scan", str(FIXTURES / engine / f"{name}.log")],
                          capture_output=True, text=True, check=False).stdout


def test_html_carries_the_rung_doubt_the_unexplained_fallback_and_the_incomplete_start():
    text, page = _text("vllm-005"), _page("vllm-005")
    assert "6/14?" in text and "6? of 14" in page
    assert "RUNG k/n? is the rung" in page
    assert "fallback UNEXPLAINED" in text and "fallback UNEXPLAINED" in page
    assert "START_INCOMPLETE" in text and "START_INCOMPLETE" in page
