"""``FollowMetrics`` built after the first lines are reported (start-up, issue 18).

Importing prometheus-client pulls in ``http.server``, ``urllib.request``, ``ssl`` and ``email``
(~140 M instructions, ~25 ms on a 2-core machine): more than a tenth of ``logscan follow``'s
start. ``DeferredMetrics`` stands in for ``FollowMetrics`` until it is needed: it records each
call the follower makes (``set_run``, ``finding``, ``read``, ...; all return nothing) and replays
them, in order, on the real ``FollowMetrics`` when that is built, so the series are exactly the
ones direct calls would have made (the arguments, such as the time of the last line read, were
computed when the call was made). The follower builds it right after its first round of reading
(``Follower.run``), once that round's JSON lines are out; a scrape or a ``registry`` access
before then builds it at once. The HTTP endpoint itself is bound before the first line, as
before (``serve``: a port that cannot be bound still fails the start).

Thread-safe: the follower records from the main thread while the HTTP server's workers may
scrape; one lock orders recording and building, and calls made after the build go straight to
the real object.
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Optional


class DeferredMetrics:
    """A ``FollowMetrics(mode, degraded_classes)`` built on first need (module docstring).

    ``realise()`` builds it (importing prometheus-client) and returns it; ``registry`` is the
    real one's. ``mode`` is checked at once (``ValueError``, as ``FollowMetrics`` raises).
    ``no_created``: call prometheus-client's ``disable_created_metrics`` first (no ``*_created``
    series), as ``logscan follow`` does.
    """

    def __init__(self, mode: str, degraded_classes: Iterable[str], no_created: bool = False):
        if mode not in ("sidecar", "daemonset"):
            raise ValueError(f"mode must be sidecar or daemonset, not {mode!r}")
        self.mode = mode
        self._degraded = tuple(degraded_classes)
        self._no_created = no_created
        self._calls: list[tuple[str, tuple, dict]] = []
        self._real: Optional[Any] = None
        self._lock = threading.Lock()

    def realise(self):
        """The real ``FollowMetrics``, built (and every recorded call replayed) on the first call."""
        with self._lock:
            if self._real is None:
                from .metrics import FollowMetrics

                if self._no_created:
                    from prometheus_client import disable_created_metrics

                    disable_created_metrics()
                real = FollowMetrics(self.mode, self._degraded)
                for name, args, kwargs in self._calls:
                    getattr(real, name)(*args, **kwargs)
                self._calls.clear()
                self._real = real
            return self._real

    @property
    def registry(self):
        """The real metrics' ``CollectorRegistry`` (built now if it was not)."""
        return self.realise().registry

    def _record(self, name: str, *args, **kwargs) -> None:
        with self._lock:
            if self._real is None:
                self._calls.append((name, args, kwargs))
                return
        getattr(self._real, name)(*args, **kwargs)

    #: the calls ``Follower`` makes on its metrics (every one returns None), each recorded by
    #: a method of the same name (``_recorder``)
    CALLS = ("files", "read", "rotated", "lines_dropped", "finding", "start_failure", "set_run", "forget")


def _recorder(name: str):
    def call(self, *args, **kwargs) -> None:
        self._record(name, *args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``FollowMetrics.{name}``, recorded until the real metrics are built."
    return call


for _name in DeferredMetrics.CALLS:
    setattr(DeferredMetrics, _name, _recorder(_name))
del _name
