"""Trial 2, item 8: an empty --fail-on is refused; the gate's Markdown keeps "(unconfirmed)";
docs/follow.md's JSON line agrees with a real run; --metrics-addr 'host:host:port' is refused at
parse time."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from logscan.cli import cli
from logscan.follow.metrics import parse_addr
from tests.conftest import FIXTURES, ROOT

UNCONFIRMED = FIXTURES / "vllm" / "vllm-011.log"  # real; its selection is "(unconfirmed)" in text
REFUSED = FIXTURES / "vllm" / "vllm-001.log"  # real; its KERNEL_NOT_FOUND refuses its Marlin: "(refused)"


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


@pytest.mark.parametrize("value", ["", " ", " , ", ",,"])
def test_an_empty_fail_on_is_exit_2(value):
    r = run("scan", "--fail-on", value, str(UNCONFIRMED))
    assert r.exit_code == 2 and "--fail-on" in r.output and "empty list" in r.output


def test_gate_markdown_keeps_the_unconfirmed_mark():
    text = run("scan", str(UNCONFIRMED)).output
    assert "(unconfirmed)" in text
    md = run("gate", "--format", "markdown", str(UNCONFIRMED)).output
    rows = [ln for ln in md.splitlines() if ln.startswith("| 1 |")]
    assert rows and any("(unconfirmed)" in ln for ln in rows)
    # a selection its failed start's own reasons refuse carries the stronger mark, in both
    assert "(refused)" in run("scan", str(REFUSED)).output
    md = run("gate", "--format", "markdown", str(REFUSED)).output
    assert any("(refused)" in ln for ln in md.splitlines() if ln.startswith("| 1 |"))


def test_follow_doc_example_matches_a_real_run():
    doc = (ROOT / "docs" / "follow.md").read_text()
    block = re.search(r"```json\n(\{\"type\": \"selection\".*?)\n```", doc, re.S).group(1)
    want = json.loads(block)["selection"]
    p = subprocess.run([sys.executable, "-m", "logscan.cli", "follow", "--metrics-addr", "off", "-"],
                       input=(FIXTURES / "vllm" / "vllm-005.log").read_bytes(), capture_output=True, cwd=ROOT,
                       timeout=120)
    got = json.loads(p.stdout.decode().splitlines()[0])["selection"]
    for k in ("family", "kernel", "cost_class", "line", "rule"):
        assert want[k] == got[k], k
    for k, v in want["ladder"].items():
        if k != "...":
            assert got["ladder"][k] == v, k


@pytest.mark.parametrize("addr", ["127.0.0.1:127.0.0.1:35329", "::1:9464", "[nothost]:9464", "a]:1"])
def test_a_host_holding_a_colon_is_refused_at_parse_time(addr):
    with pytest.raises(ValueError):
        parse_addr(addr)
    r = run("follow", "/nonexistent.log", "--metrics-addr", addr)
    assert r.exit_code == 2 and "--metrics-addr" in r.output


@pytest.mark.parametrize("addr, want", [("[::1]:0", ("::1", 0)), ("localhost:9464", ("localhost", 9464)),
                                        (":0", ("127.0.0.1", 0))])
def test_good_addresses_still_parse(addr, want):
    assert parse_addr(addr) == want
