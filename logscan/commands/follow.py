"""``logscan follow``: tail logs as they grow, JSON lines and Prometheus metrics (``logscan.follow``)."""
from __future__ import annotations

import sys

import click

from .common import packs_for


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="PATH|GLOB|-...")
@click.option("--state-file", type=click.Path(dir_okay=False), default=None,
              help="Where to keep positions and what was reported, to resume after a restart "
                   "without losing or repeating a line (written atomically).")
@click.option("--metrics-addr", default="127.0.0.1:9464", show_default=True, metavar="HOST:PORT",
              help="Prometheus /metrics, /livez, /readyz; port 0 picks a free one, 'off' disables. "
                   "Binding beyond loopback (0.0.0.0:9464, for Prometheus to scrape a pod) is your choice.")
@click.option("--mode", type=click.Choice(["sidecar", "daemonset"]), default="sidecar", show_default=True,
              help="sidecar: the scrape target is the pod (no pod labels on metrics); daemonset: "
                   "namespace/pod/container labels from /var/log/pods paths.")
@click.option("--namespace", envvar="LOGSCAN_NAMESPACE", default=None, help="Pod namespace for JSON lines [env LOGSCAN_NAMESPACE].")
@click.option("--pod", envvar="LOGSCAN_POD", default=None, help="Pod name for JSON lines [env LOGSCAN_POD].")
@click.option("--container", envvar="LOGSCAN_CONTAINER", default=None, help="Container for JSON lines [env LOGSCAN_CONTAINER].")
@click.option("--poll-interval", type=click.FloatRange(0.01, 60), default=0.25, show_default=True,
              help="Seconds between polls of the followed files.")
@click.option("--idle-flush", type=click.FloatRange(0.05, 3600), default=2.0, show_default=True,
              help="Seconds without new lines after which a multi-line message still gathering "
                   "lines is taken as complete.")
@click.option("--patterns", "patterns_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Use pattern packs from this folder instead of the shipped ones.")
def follow(inputs: tuple[str, ...], state_file: str | None, metrics_addr: str, mode: str, namespace: str | None,
           pod: str | None, container: str | None, poll_interval: float, idle_flush: float,
           patterns_dir: str | None) -> None:
    """Follow logs as they grow (rotations, new files, stdin): JSON lines and Prometheus metrics.

    Each new kernel selection, finding or failed start ("type": "start_failure") is printed as
    one JSON line on stdout as soon as it is seen; with --state-file the state is written before
    each line is printed, so a restart (even after kill -9) never prints one twice. A path that
    is not there yet is said on stderr and keeps /readyz at 503. Stops cleanly on SIGTERM/SIGINT,
    saving --state-file (exit 0; 1 when its last write failed: "state NOT saved"). Exit 2 on bad
    usage: a malformed --metrics-addr, a directory or a gzip file as input (or gzip piped into
    'follow -'), or a --state-file whose directory cannot be written at start (exactly-once
    depends on that file).

    \b
    Examples:
      logscan follow /logs/engine.log --state-file /logs/.logscan-state
      logscan follow --mode daemonset --metrics-addr 0.0.0.0:9464 '/var/log/pods/*/*/*.log'
      vllm serve MODEL 2>&1 | logscan follow -
    """
    from ..follow.command import run_follow
    from ..follow.podinfo import PodLabels

    import os

    if "-" in inputs and sys.stdin is None:  # ``<&-``: nothing to follow
        raise click.BadParameter("standard input is closed: give a file, or pipe a log into 'logscan follow -'",
                                 param_hint="PATH")
    for inp in inputs:
        if inp != "-" and os.path.isdir(inp):
            raise click.BadParameter(f"{inp} is a directory: give a file, or a glob such as "
                                     f"'{inp.rstrip('/')}/*.log'", param_hint="PATH")
        if inp != "-" and os.path.isfile(inp):
            from ..follow.pieces import is_gzip

            if is_gzip(inp):  # a finished, compressed log: nothing will grow there (a glob's .gz is noted and skipped)
                raise click.BadParameter(f"{inp} is gzip-compressed, not a growing log: read it with "
                                         f"'logscan scan {inp}'", param_hint="PATH")
    if state_file:
        _check_state_dir(state_file)
    packs = packs_for(patterns_dir)
    sys.exit(run_follow(list(inputs), packs, state_file, metrics_addr, mode,
                        PodLabels(namespace, pod, container), poll_interval, idle_flush))


def _check_state_dir(state_file: str) -> None:
    """Raise ``click.BadParameter`` (exit 2) when no file can be created in ``state_file``'s
    directory (missing, not a directory, read-only, no permission): probed by creating and
    removing a temporary file there, as ``follow.statefile.write_state`` does (``os.access``
    says yes to root on a read-only mount's directory)."""
    import os
    import tempfile

    d = os.path.dirname(os.path.abspath(state_file))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".logscan-state-probe.", dir=d)
    except OSError as exc:
        raise click.BadParameter(f"cannot write in {d} ({exc.strerror or exc}): the state file "
                                 f"{state_file} could not be saved, and exactly-once resumption depends on it",
                                 param_hint="--state-file") from None
    os.close(fd)
    os.unlink(tmp)
