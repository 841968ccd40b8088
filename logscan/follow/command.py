"""Wire ``logscan follow`` together: metrics endpoint, signals, the follower loop.

Exit status: 0 after SIGTERM/SIGINT (state saved) or at the end of stdin; 1 when the last
write of --state-file failed ("state NOT saved"); 2 when the metrics address cannot be bound or
is malformed, the state file's directory cannot be written at start, or no input is given.
"""
from __future__ import annotations

import signal
import sys
from typing import Optional

import click

from ..packs.loader import PackSet
from .deferred import DeferredMetrics
from .endpoint import is_loopback, parse_addr, serve
from .podinfo import PodLabels
from .runner import Follower


def run_follow(inputs: list[str], packs: PackSet, state_file: Optional[str], metrics_addr: str, mode: str,
               labels: PodLabels, poll: float, idle_flush: float = 2.0) -> int:
    """Run until a signal or the end of stdin; returns the exit status."""
    metrics = None
    server = None
    degraded = set(packs.findings.cost_class_finding)
    if metrics_addr.lower() != "off":
        try:
            host, _ = parse_addr(metrics_addr)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--metrics-addr")
        # built once the first lines are out (deferred.py); no *_created series: they double
        # the output for nothing here
        metrics = DeferredMetrics(mode, degraded, no_created=True)
    follower = Follower(inputs, packs, sys.stdout, metrics=metrics, state_file=state_file, labels=labels,
                        poll=poll, idle_flush=idle_flush)
    if metrics is not None:
        try:
            server = serve(metrics, metrics_addr, lambda: follower.ready)
        except OSError as exc:
            raise click.ClickException(f"cannot listen on {metrics_addr}: {exc.strerror or exc} (another "
                                       f"follow? give it --metrics-addr HOST:PORT, or --metrics-addr off)")
        bound_host, bound_port = server.server_address[:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        note = "" if is_loopback(host) else " (beyond loopback, as asked)"
        click.echo(f"logscan follow: metrics on http://{shown}:{bound_port}/metrics{note}", err=True)
    signal.signal(signal.SIGTERM, follower.request_stop)
    signal.signal(signal.SIGINT, follower.request_stop)
    try:
        follower.run()
    except BrokenPipeError:
        follower.save_state()
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()
    if state_file and follower.state_unsaved:
        click.echo(f"logscan follow: stopped, state NOT saved ({follower.state_unsaved}); a restart "
                   "re-reads from the last state written", err=True)
        return 1
    click.echo("logscan follow: stopped, state saved" if state_file else "logscan follow: stopped", err=True)
    if any(getattr(s.tail, "compressed", False) for s in follower.streams.values()):
        return 2  # gzip piped in: nothing was read, and silence must not pass
    return 0
