"""The metrics endpoint cannot be exhausted by idle clients (issue 13, case 10).

With wsgiref + ThreadingMixIn, 200 idle half-open requests held 202 threads and nothing
closed them. Now: no thread per connection, heads must arrive within a timeout, and /livez
answers while 200 idle connections are open.
"""
from __future__ import annotations

import socket
import threading
import time

from logscan.follow.http import BoundedHTTPServer
from logscan.follow.metrics import FollowMetrics, serve
from tests.conftest import http_get as _get


def _idle(port: int, n: int) -> list[socket.socket]:
    out = []
    for i in range(n):
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # half-open: the head never ends
        out.append(c)
    return out


def test_livez_answers_under_200_idle_connections_without_a_thread_each(packs, http_server):
    m = FollowMetrics("sidecar", packs.findings.cost_class_finding)
    server, port = http_server(serve(m, "127.0.0.1:0", lambda: True))
    before = threading.active_count()
    http_server.keep(_idle(port, 200))
    time.sleep(0.3)
    t0 = time.monotonic()
    assert _get(port, "/livez") == (200, b"ok\n")
    assert time.monotonic() - t0 < 2.0
    status, body = _get(port, "/metrics")
    assert status == 200 and b"logscan_degraded 0.0" in body
    assert threading.active_count() <= before + 3  # workers, not one thread per connection


def test_idle_connections_are_closed_within_the_timeout(http_server):
    server, port = http_server(BoundedHTTPServer("127.0.0.1", 0, lambda p: ("200 OK", "text/plain", b"ok\n"),
                                                 head_timeout=0.5).start())
    idle = _idle(port, 50)
    http_server.keep(idle)
    time.sleep(0.2)
    assert server.open_connections == 50
    deadline = time.monotonic() + 3.0
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.open_connections == 0 and server.closed_idle == 50
    for c in idle:  # the client side sees the close: EOF
        c.settimeout(2)
        assert c.recv(10) == b""
    assert _get(port, "/livez")[0] == 200


def test_connection_cap_closes_the_oldest(http_server):
    server, port = http_server(BoundedHTTPServer("127.0.0.1", 0, lambda p: ("200 OK", "text/plain", b"ok\n"),
                                                 max_conns=10).start())
    http_server.keep(_idle(port, 30))
    time.sleep(0.3)
    assert server.open_connections <= 10
    assert _get(port, "/livez")[0] == 200
