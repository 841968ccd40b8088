"""Random bytes are said not to look like a log (``formats.inputs.input_warnings``): a new-user
trial scanned 200 KB of /dev/urandom and got "read 785 line(s) with repairs" and "No engine log
line ... was recognised", which reads like a log without kernel lines."""
from __future__ import annotations

import random

from logscan.formats.inputs import input_warnings
from logscan.pipeline import scan_inputs
from tests.conftest import FIXTURES

NOTE = "does not look like a log"


def _warnings(path) -> list[str]:
    return input_warnings(scan_inputs([str(path)]).inputs[0])


def test_random_bytes_are_said_not_to_be_text(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(random.Random(7).randbytes(200_000))
    assert any(NOTE in w for w in _warnings(junk))


def test_a_log_with_some_invalid_utf8_is_still_a_log(tmp_path):
    lines = (FIXTURES / "vllm" / "vllm-005.log").read_bytes().split(b"\n")
    lines[3] = lines[3] + b" \xff\xfe"  # one damaged line of 19
    log = tmp_path / "damaged.log"
    log.write_bytes(b"\n".join(lines))
    got = _warnings(log)
    assert any("invalid UTF-8" in w for w in got) and not any(NOTE in w for w in got)


def test_no_bundled_real_log_is_called_not_text():
    logs = sorted(FIXTURES.glob("*/*.log"))
    assert len(logs) > 700
    called = [p.name for p in logs if any(NOTE in w for w in _warnings(p))]
    assert called == []
