"""The address and the HTTP endpoint of ``logscan follow`` (``/metrics``, ``/livez``, ``/readyz``).

Split from ``metrics.py`` (which re-exports these names) so that binding the endpoint imports
no prometheus-client (start-up, issue 18: ``deferred.py``).
"""
from __future__ import annotations

from typing import Callable


def parse_addr(addr: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPv6]:PORT`` -> (host, port); raises ``ValueError`` when malformed: no
    port, a port above 65535, a host holding ``:`` outside brackets (``127.0.0.1:127.0.0.1:9464``),
    or brackets around what is not an IPv6 address."""
    import ipaddress

    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {addr!r}")
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(f"expected [IPv6]:PORT, got {addr!r}: {host[1:-1]!r} is not an IPv6 address") from None
        return host[1:-1], int(port)
    if ":" in host or "[" in host or "]" in host:
        raise ValueError(f"expected HOST:PORT or [IPv6]:PORT, got {addr!r}: the host {host!r} holds ':' "
                         "(an IPv6 address goes in brackets, e.g. [::1]:9464)")
    return host or "127.0.0.1", int(port)


def serve(metrics, addr: str, ready: Callable[[], bool]):
    """Start the HTTP endpoint for ``metrics`` (a ``FollowMetrics`` or a ``DeferredMetrics``:
    anything with a prometheus-client ``registry``) on ``http.BoundedHTTPServer``
    (per-connection timeouts, a small worker bound); returns the server (``server_address`` has
    the port). prometheus-client is imported at the first ``/metrics`` request, not here.

    Raises ``OSError`` when the address cannot be bound.
    """
    from .http import BoundedHTTPServer

    host, port = parse_addr(addr)

    def handler(path: str) -> tuple[str, str, bytes]:
        if path == "/metrics":
            from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

            return "200 OK", CONTENT_TYPE_LATEST, generate_latest(metrics.registry)
        if path == "/livez":
            return "200 OK", "text/plain", b"ok\n"
        if path == "/readyz":
            ok = ready()
            return ("200 OK" if ok else "503 Service Unavailable"), "text/plain", (b"ready\n" if ok else b"catching up\n")
        return "404 Not Found", "text/plain", b"not found: try /metrics, /livez, /readyz\n"

    return BoundedHTTPServer(host, port, handler).start()


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    import ipaddress
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

