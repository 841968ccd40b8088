"""Prometheus metrics of ``logscan follow`` (prometheus-client) and its HTTP endpoint.

Names follow the Prometheus naming rules (``logscan_`` prefix, base units, ``_total`` on
counters, ``_info`` on an info-style gauge of value 1). Every label value comes from a
bounded set: engine names and registry names from the packs and ladders, kernel classes from
the ladders (a kernel no ladder holds keeps its logged name, cut to an identifier and capped
at ``MAX_KERNEL_VALUES`` distinct values, then ``other``), cost classes and severities from
enums, finding codes from ``patterns/findings.toml``. No line text, pid, path or timestamp.

Pod identity: in ``sidecar`` mode the scrape target (the pod) is the identity, so no pod
label is added; in ``daemonset`` mode one process reads every pod of a node, and
``namespace``, ``pod`` and ``container`` labels (from the kubelet path) tell them apart.

Endpoints: ``/metrics``; ``/livez`` (200 while the process runs); ``/readyz`` (200 once the
content that existed at start-up has been read and every path given (not a glob) is there,
503 before); served by ``endpoint.serve``. ``logscan follow`` builds these metrics once its first
lines are out (``deferred.py``: importing prometheus-client is a tenth of its start).
"""
from __future__ import annotations

from typing import Iterable, Optional

from prometheus_client import CollectorRegistry, Counter, Gauge

from .. import rxcache
from ..models import Run
from .endpoint import is_loopback, parse_addr, serve  # noqa: F401 (moved there; importable from here)
from .podinfo import PodLabels

POD_LABELS = ("namespace", "pod", "container")
SELECTION_LABELS = ("engine", "registry", "kernel", "cost_class")
#: Distinct values of the ``kernel`` label kept for names no ladder holds; then ``other``.
MAX_KERNEL_VALUES = 128
_NOT_IDENT = rxcache.compile(r"[^A-Za-z0-9_.:+-]")


def child(metric, values: tuple):
    """``metric.labels(*values)``, or the metric itself when it has no labels (sidecar mode)."""
    return metric.labels(*values) if values else metric


class FollowMetrics:
    """The metrics of one ``logscan follow`` process, in their own registry.

    ``mode`` is ``sidecar`` or ``daemonset`` (pod labels only in the latter).
    ``degraded_classes``: the cost classes that set ``logscan_degraded`` to 1 (the classes
    that ``patterns/findings.toml`` maps to a finding: weight_only, emulated, dequant_at_load).
    """

    def __init__(self, mode: str, degraded_classes: Iterable[str]):
        if mode not in ("sidecar", "daemonset"):
            raise ValueError(f"mode must be sidecar or daemonset, not {mode!r}")
        self.mode = mode
        self.degraded_classes = frozenset(degraded_classes)
        self.registry = CollectorRegistry(auto_describe=True)
        pod = POD_LABELS if mode == "daemonset" else ()
        r = self.registry
        self.selection = Gauge("logscan_kernel_selection_info",
                               "A quantized layer family runs this kernel (value 1), in the latest engine run",
                               pod + SELECTION_LABELS, registry=r)
        self.degraded = Gauge("logscan_degraded",
                              "1 when the latest engine run selected a weight-only, emulated or "
                              "dequantize-at-load kernel, else 0", pod, registry=r)
        self.findings = Counter("logscan_findings", "Findings reported, by code and severity",
                                pod + ("code", "severity"), registry=r)
        self.start_failures = Counter("logscan_start_failures",
                                      "Engine runs whose log says the start failed (EngineCore failed to start., ...)",
                                      pod, registry=r)
        self.start_failed = Gauge("logscan_start_failed",
                                  "1 when the latest engine run's log says its start failed, else 0", pod, registry=r)
        self.unexplained = Gauge("logscan_unexplained_lines",
                                 "Kernel-relevant lines of the latest engine run that gave no selection or finding",
                                 pod, registry=r)
        self.lines = Counter("logscan_read_lines", "Log lines read", pod, registry=r)
        self.bytes = Counter("logscan_read_bytes", "Log bytes read", pod, registry=r)
        self.rotations = Counter("logscan_rotations", "Log rotations followed, by kind (rename, copytruncate)",
                                 pod + ("kind",), registry=r)
        self.dropped = Counter("logscan_partial_lines_dropped",
                               "Lines cut short: over-long lines, partial CRI records that never ended, "
                               "content lost to a copytruncate without a copy", pod, registry=r)
        self.last_line = Gauge("logscan_last_line_timestamp_seconds",
                               "Unix time at which the last log line was read", pod, registry=r)
        self.streams = Gauge("logscan_followed_files", "Log files followed now (present, or open)", registry=r)
        self.missing = Gauge("logscan_missing_files",
                             "Paths given on the command line (not globs) that are not there", registry=r)
        if not pod:  # series that exist from the start, at 0
            for kind in ("rename", "copytruncate"):
                self.rotations.labels(kind)
            self.degraded.set(0)
            self.start_failed.set(0)
            self.start_failures.inc(0)
        self._kernels: set[str] = set()
        self._sel: dict[str, set[tuple]] = {}  # stream -> exported selection label tuples
        self._deg: dict[str, tuple[tuple, bool]] = {}  # stream -> (pod label tuple, degraded)
        self._gen: dict[str, tuple[tuple, Optional[int]]] = {}  # stream -> (pod label tuple, restart)
        self._children: dict[tuple, set] = {}  # pod label tuple -> {(metric, label values)}

    def pod_values(self, labels: PodLabels) -> tuple:
        """Label values identifying the pod (empty tuple in sidecar mode)."""
        if self.mode != "daemonset":
            return ()
        return (labels.namespace or "", labels.pod or "", labels.container or "")

    def _kernel_value(self, name: str) -> str:
        v = _NOT_IDENT.sub("_", name)[:64]
        if v in self._kernels:
            return v
        if len(self._kernels) >= MAX_KERNEL_VALUES:
            return "other"
        self._kernels.add(v)
        return v

    def _current(self, stream: str) -> bool:
        """False when a later restart of the same container (a higher ``N.log``) is followed too."""
        pod, gen = self._gen.get(stream, ((), None))
        return gen is None or all(g is None or g <= gen for s, (p, g) in self._gen.items() if p == pod and s != stream)

    def _withdraw(self, stream: str) -> None:
        old = self._sel.pop(stream, set())
        for lv in old:
            if not any(lv in other for other in self._sel.values()):
                self.selection.remove(*lv)

    def set_run(self, stream: str, labels: PodLabels, run: Run) -> None:
        """Export the selections of ``run`` (the latest of ``stream``) and its degraded flag.

        In daemonset mode the log of a container's earlier restart (kubelet keeps ``0.log``
        next to ``1.log``) stops counting once a later one is followed: only the running
        container's kernels are exported.
        """
        pod = self.pod_values(labels)
        self._gen[stream] = (pod, labels.restart if pod else None)
        if not self._current(stream):
            self._withdraw(stream)
            self._deg.pop(stream, None)
            self._set_degraded(pod)
            return
        for other in [s for s, (p, _) in self._gen.items() if p == pod and s != stream and not self._current(s)]:
            self._withdraw(other)
            self._deg.pop(other, None)
        self.child(self.unexplained, pod).set(len(run.unexplained))
        new = set()
        for s in run.selections:
            kernel = s.ladder.kernel_class if s.ladder else s.kernel
            registry = s.ladder.registry if s.ladder else "none"
            new.add(pod + (run.engine.name, registry, self._kernel_value(kernel), s.cost_class.value))
        old = self._sel.get(stream, set())
        self._sel[stream] = new
        for lv in old - new:
            if not any(lv in other for other in self._sel.values()):
                self.selection.remove(*lv)
        for lv in new:
            self.child(self.selection, lv).set(1)
        bad = any(s.cost_class.value in self.degraded_classes for s in run.selections)
        self._deg[stream] = (pod, bad)
        self._set_degraded(pod)
        self.child(self.start_failed, pod).set(1 if run.start_failure is not None else 0)

    def _set_degraded(self, pod: tuple) -> None:
        self.child(self.degraded, pod).set(1 if any(b for p, b in self._deg.values() if p == pod) else 0)

    def start_failure(self, labels: PodLabels) -> None:
        """Count one run whose start failed."""
        self.child(self.start_failures, self.pod_values(labels)).inc()

    def finding(self, labels: PodLabels, code: str, severity: str) -> None:
        """Count one reported finding."""
        self.child(self.findings, self.pod_values(labels) + (code, severity)).inc()

    def files(self, followed: int, missing: int) -> None:
        """Set the number of files followed now and of paths given that are not there."""
        self.streams.set(followed)
        self.missing.set(missing)

    def read(self, labels: PodLabels, lines: int, nbytes: int, now: float) -> None:
        """Count ``lines`` lines (``nbytes`` bytes) read, the last one at Unix time ``now``."""
        pod = self.pod_values(labels)
        self.child(self.lines, pod).inc(lines)
        self.child(self.bytes, pod).inc(nbytes)
        self.child(self.last_line, pod).set(now)

    def rotated(self, labels: PodLabels, kind: str, n: int) -> None:
        """Count ``n`` rotations of ``kind`` (``rename``, ``copytruncate``)."""
        self.child(self.rotations, self.pod_values(labels) + (kind,)).inc(n)

    def lines_dropped(self, labels: PodLabels, n: int) -> None:
        """Count ``n`` lines cut short or lost (over-long, a partial record that never ended, a gap)."""
        self.child(self.dropped, self.pod_values(labels)).inc(n)

    def child(self, metric, values: tuple):
        """The child of ``metric`` for ``values`` (pod label values first), remembered per pod
        so that ``forget`` can remove every series of a pod that is gone."""
        if self.mode == "daemonset" and values:
            self._children.setdefault(values[:len(POD_LABELS)], set()).add((metric, values))
        return child(metric, values)

    def forget(self, stream: str, labels: PodLabels) -> None:
        """A followed file is gone: drop its selections (and, in daemonset mode, once no file
        of its pod is followed, every series of the pod: memory stays flat under pod churn)."""
        self._withdraw(stream)
        self._gen.pop(stream, None)
        self._deg.pop(stream, None)
        pod = self.pod_values(labels)
        if self.mode == "daemonset" and not any(p == pod for p, _ in self._gen.values()):
            for metric, values in self._children.pop(pod, set()):
                try:
                    metric.remove(*values)
                except KeyError:  # already withdrawn
                    pass
        else:
            self._set_degraded(pod)
