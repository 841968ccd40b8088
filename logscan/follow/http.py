"""The HTTP endpoint of ``logscan follow`` (/metrics, /livez, /readyz), bounded against idle clients.

``wsgiref`` with ``ThreadingMixIn`` gave each connection a thread with no timeout: 200 idle,
half-open requests held 202 threads, and the DaemonSet binds ``0.0.0.0``, so any pod could
exhaust it. Here one event-loop thread (``selectors``) accepts connections and reads request
heads without blocking; a connection whose head is not complete within ``HEAD_TIMEOUT``
seconds, or that sends more than ``MAX_HEAD`` bytes, is closed, and at most ``MAX_CONNS``
are open at once (the oldest is closed first). A complete head is answered by one of
``WORKERS`` threads, whose send has a ``SEND_TIMEOUT``. Idle clients therefore cost a file
descriptor each until their timeout, never a thread, and ``/livez`` keeps answering.
Only ``GET`` and ``HEAD`` are served; every response closes the connection (HTTP/1.0 style).
"""
from __future__ import annotations

import selectors
import socket
import threading
import time
from typing import Callable, Optional

HEAD_TIMEOUT = 5.0  #: seconds a client has to send its whole request head
SEND_TIMEOUT = 5.0  #: seconds a worker waits on a client that does not read its response
MAX_HEAD = 8192  #: bytes of request head accepted
MAX_CONNS = 256  #: open connections at once; beyond, the oldest is closed
WORKERS = 2  #: threads that build and send responses

#: ``handler(path) -> (status line, content type, body)``
Handler = Callable[[str], tuple[str, str, bytes]]


class BoundedHTTPServer:
    """Serve ``handler`` on ``(host, port)``; see the module docstring. Raises ``OSError`` on bind."""

    def __init__(self, host: str, port: int, handler: Handler, head_timeout: float = HEAD_TIMEOUT,
                 max_conns: int = MAX_CONNS, workers: int = WORKERS):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
            self.sock.listen(128)
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.server_address = self.sock.getsockname()
        self.handler = handler
        self.head_timeout, self.max_conns = head_timeout, max_conns
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.sock, selectors.EVENT_READ, None)
        self.conns: dict[socket.socket, tuple[float, bytearray]] = {}  # insertion order: oldest first
        self.workers = workers
        self._pool = None  #: the workers, started at the first complete request head (``pool``)
        self._stop = threading.Event()
        self.closed_idle = 0  #: connections closed because their head did not arrive in time
        self._thread: Optional[threading.Thread] = None

    @property
    def pool(self):
        """The ``ThreadPoolExecutor`` of ``workers`` threads answering requests, made on first use
        (from the loop thread only): ``concurrent.futures`` is not imported by a start that binds
        the port before its first scrape (start-up, issue 18)."""
        if self._pool is None:
            import concurrent.futures

            self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=self.workers,
                                                               thread_name_prefix="logscan-http")
        return self._pool

    def start(self) -> "BoundedHTTPServer":
        self._thread = threading.Thread(target=self._loop, name="logscan-metrics", daemon=True)
        self._thread.start()
        return self

    @property
    def open_connections(self) -> int:
        return len(self.conns)

    def _drop(self, conn: socket.socket) -> None:
        self.conns.pop(conn, None)
        try:
            self.sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.sel.select(timeout=0.2):
                if key.data is None:
                    self._accept()
                else:
                    self._read(key.fileobj)  # type: ignore[arg-type]
            now = time.monotonic()
            for conn, (t0, _) in list(self.conns.items()):
                if now - t0 > self.head_timeout:
                    self.closed_idle += 1
                    self._drop(conn)

    def _accept(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except (BlockingIOError, InterruptedError, OSError):
            return
        conn.setblocking(False)
        while len(self.conns) >= self.max_conns:  # the oldest waiting client goes first
            self._drop(next(iter(self.conns)))
        self.conns[conn] = (time.monotonic(), bytearray())
        self.sel.register(conn, selectors.EVENT_READ, "conn")

    def _read(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        entry = self.conns.get(conn)
        if not data or entry is None:
            self._drop(conn)
            return
        buf = entry[1]
        buf += data
        if b"\r\n\r\n" not in buf and b"\n\n" not in buf:
            if len(buf) > MAX_HEAD:
                self._drop(conn)
            return
        self.conns.pop(conn, None)
        self.sel.unregister(conn)
        self.pool.submit(self._answer, conn, bytes(buf))

    def _answer(self, conn: socket.socket, head: bytes) -> None:
        try:
            line = head.split(b"\n", 1)[0].decode("latin-1").strip()
            parts = line.split()
            if len(parts) < 2 or parts[0] not in ("GET", "HEAD"):
                status, ctype, body = "405 Method Not Allowed", "text/plain", b"only GET\n"
            else:
                status, ctype, body = self.handler(parts[1].split("?", 1)[0])
            out = (f"HTTP/1.0 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
                   f"Connection: close\r\n\r\n").encode("latin-1")
            conn.setblocking(True)
            conn.settimeout(SEND_TIMEOUT)
            conn.sendall(out + (b"" if parts and parts[0] == "HEAD" else body))
        except Exception:  # noqa: BLE001 - a client's failure never stops the server
            pass
        finally:
            conn.close()

    def shutdown(self) -> None:
        """Stop the loop (waits for its thread)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def server_close(self) -> None:
        """Close every socket and the workers."""
        for conn in list(self.conns):
            self._drop(conn)
        try:
            self.sel.unregister(self.sock)
        except (KeyError, ValueError):
            pass
        self.sock.close()
        self.sel.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
