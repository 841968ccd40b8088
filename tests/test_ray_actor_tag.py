"""Ray's actor prefix on another node, '(RayWorkerWrapper pid=N, ip=ADDR)', nested in vLLM's EngineCore
tag (vllm-334, vllm#27409): both tags are process tags, so the message behind them is the engine's own."""
from __future__ import annotations

import logscan
from tests.conftest import FIXTURES


def test_a_nested_ray_actor_tag_with_an_ip_is_stripped_and_names_the_process():
    report = logscan.scan(FIXTURES / "vllm" / "vllm-334.log")
    (run,) = report.runs
    assert (run.first_line, run.last_line) == (2, 7)  # was 2-2: the inner tag stayed in the message
    assert report.events and not any(e.message.startswith("(RayWorkerWrapper") for e in report.events)
    assert {e.process for e in report.events} == {"RayWorkerWrapper"}


def test_the_ip_part_needs_the_tag_shape():
    from logscan.packs.loader import load_packs

    pack = load_packs().packs["vllm"]
    tag = next(p for p in pack.processes if p.spec.id == "process-tag")
    assert tag.regex.match("(RayWorkerWrapper pid=223, ip=10.0.0.2) ERROR x")
    for text in ("(RayWorkerWrapper pid=223, ip=) ERROR x", "(RayWorkerWrapper pid=223 ip=10.0.0.2) x",
                 "(RayWorkerWrapper pid=223, ip=a b) x"):
        assert not tag.regex.match(text), text
