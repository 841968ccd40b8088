"""Shared fixtures: the shipped packs, and paths to the bundled real logs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from logscan.packs.loader import default_packs

ROOT = Path(__file__).resolve().parent.parent

# A programming error on a line (KeyError, TypeError, IndexError) is a counted skip for users;
# under tests it raises, here and in every logscan a test runs as a subprocess (the environment
# is inherited), so that a bug is a failing test, not a quietly skipped line (docs/hostile-input.md).
os.environ.setdefault("LOGSCAN_STRICT", "1")

FIXTURES = ROOT / "fixtures"


def _find_shared() -> Path:
    """The read-only ``shared/`` folder (reference data, corpus): beside the checkout, or
    ``LOGSCAN_SHARED``, or ``/work/shared`` for work trees nested deeper."""
    import os

    for cand in (os.environ.get("LOGSCAN_SHARED"), ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return ROOT.parent / "shared"


SHARED = _find_shared()


@pytest.fixture(scope="session")
def packs():
    return default_packs()


def load_tool(name: str):
    """A maintainers' script ``tools/<name>.py`` as a module, by ``tools/_common.tool`` (tools/ is
    not a package; its folder is appended to ``sys.path`` so it never shadows an installed module)."""
    import sys

    tools = str(Path(__file__).resolve().parent.parent / "tools")
    if tools not in sys.path:
        sys.path.append(tools)
    from _common import tool

    return tool(name)


def load_bench(name: str = "throughput"):
    """A benchmark script ``bench/<name>.py`` as a module (bench/ is not a package), loaded once
    per session under the name ``bench_<name>``; ``throughput`` gives the synthetic log generator
    (``runtime_lines``: request, metrics and access lines of vLLM)."""
    import importlib.util
    import sys

    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "bench" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        sys.modules[key] = mod
    return sys.modules[key]


def scan_json(path: Path) -> dict:
    """``logscan scan --format json PATH`` through the CLI, parsed: the report a user pipes."""
    import json

    from click.testing import CliRunner

    from logscan.cli import cli

    r = CliRunner().invoke(cli, ["scan", "--format", "json", str(path)], catch_exceptions=False)
    return json.loads(r.stdout)


def runs_of(path: Path) -> list[dict]:
    """The runs of ``scan --format json`` on ``path``."""
    return scan_json(path)["runs"]


def finding_codes(run: dict) -> set[str]:
    """The finding codes of one run of ``scan --format json``."""
    return {f["code"] for f in run["findings"]}


def one_run(name: str) -> dict:
    """The one run of bundled fixture ``name`` (``tgi-153`` -> fixtures/tgi/tgi-153.log) in
    ``scan --format json``; fails the test when the log makes no run or several."""
    engine = name.rsplit("-", 1)[0]
    runs = scan_json(FIXTURES / engine / f"{name}.log")["runs"]
    assert len(runs) == 1, [r["first_line"] for r in runs]
    return runs[0]


def write_log(tmp_path: Path, text: str, name: str = "x.log") -> Path:
    """``text`` written as ``tmp_path/name`` (UTF-8): a log made of quoted engine lines."""
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def real_logs(engine: str) -> list[Path]:
    """Bundled real logs (copied from the labelled corpus, lines as they were) of an engine."""
    return sorted((FIXTURES / engine).glob("*.log"))



def end_on_a_selection(logs: list[Path]) -> list[Path]:
    """``logs`` reordered so the last is the last one whose run selects a kernel: what a
    ``/metrics`` test reads is the latest run's selections, whichever fixtures are bundled
    (a precision-only fixture has none)."""
    from logscan.pipeline import scan_inputs

    last = next(p for p in reversed(logs) if any(r.selections for r in scan_inputs([str(p)]).runs))
    return [p for p in logs if p != last] + [last]

KNOWN_MISSES_FILE = FIXTURES / "corpus-known-misses.toml"


def known_misses() -> dict[str, str]:
    """Labelled corpus logs logscan misses today: ``{"vllm/vllm-023": reason}`` (fixtures/corpus-known-misses.toml)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the tomli backport (a dependency there)
        import tomli as tomllib

    doc = tomllib.loads(KNOWN_MISSES_FILE.read_text(encoding="utf-8"))
    return {m["log"]: m["reason"] for m in doc.get("miss", [])}


def corpus_params(logs: list[Path]) -> list:
    """``pytest.param`` per log, id ``engine/name``; a known miss is marked xfail with its reason."""
    misses = known_misses()
    out = []
    for log in logs:
        key = f"{log.parent.name}/{log.stem}"
        marks = [pytest.mark.xfail(reason=f"known miss: {misses[key]}", strict=False)] if key in misses else []
        out.append(pytest.param(log, id=key, marks=marks))
    return out
def pending_fixtures() -> tuple[set[str], set[str]]:
    """``(pending, unmet)`` log stems of ``fixtures/PENDING``.

    Logs are committed labelled before logscan reads them (corpus rules); until the work that
    meets them lands they have no pinned snapshot (pending) and, marked ``unmet``, a label test
    that must fail (strict xfail). One stem a line, optional ``unmet``; ``#`` starts a comment.
    """
    path = FIXTURES / "PENDING"
    rows = [ln.split("#")[0].split() for ln in path.read_text().splitlines()] if path.exists() else []
    return {r[0] for r in rows if r}, {r[0] for r in rows if r[1:] == ["unmet"]}


# -- shared setups -------------------------------------------------------------------------------
@pytest.fixture
def http_server():
    """``start(server)``: a started HTTP server of ``logscan follow`` (``metrics.serve`` or a
    ``BoundedHTTPServer``) and its port; every server started is shut down and closed, and every
    socket passed to ``start.keep`` closed, after the test."""
    servers, sockets = [], []

    def start(server):
        servers.append(server)
        return server, server.server_address[1]

    start.keep = sockets.extend  # client sockets the test opened (idle connections)
    yield start
    for s in sockets:
        s.close()
    for server in servers:
        server.shutdown()
        server.server_close()


def http_get(port: int, path: str) -> tuple[int, bytes]:
    """``(status, body)`` of a GET on 127.0.0.1; an HTTP error status is returned, not raised."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


class NumberedLog:
    """A log ``engine.log`` in a folder that gets numbered lines (``line 0``, ``line 1``, ...), and
    what tails of it read: ``check()`` asserts every line written was read once, in order."""

    def __init__(self, folder: Path):
        self.log, self.n, self.got = folder / "engine.log", 0, []

    def write(self, k: int) -> None:
        with open(self.log, "a") as fh:
            for _ in range(k):
                fh.write(f"line {self.n}\n")
                self.n += 1

    def tail(self):
        """A ``FileTail`` of the log, as ``logscan follow`` starts one (rotated pieces first)."""
        from logscan.follow.tail import FileTail

        t = FileTail(str(self.log))
        t.read_rotated_first()
        return t

    def poll(self, t) -> None:
        self.got += [r.decode() for r, _ in t.poll()]

    def check(self) -> None:
        assert self.got == [f"line {i}" for i in range(self.n)]


@pytest.fixture
def numbered_log(tmp_path) -> NumberedLog:
    """A ``NumberedLog`` in the test's temporary folder."""
    return NumberedLog(tmp_path)


GITLAB_TEMPLATE = ROOT / "ci" / "gitlab" / "logscan.gitlab-ci.yml"


@pytest.fixture
def gitlab_job():
    """``run(cwd, variables, timeout=900)``: the ``.logscan-gate`` template's script, run in bash
    (``-eo pipefail``) in ``cwd`` as GitLab would, with the template's variables, then
    ``LOGSCAN_SOURCE`` (this checkout), then ``variables`` laid over them. Returns
    ``(CompletedProcess, the variables used)``."""
    import os
    import subprocess

    import yaml

    template = yaml.safe_load(GITLAB_TEMPLATE.read_text())[".logscan-gate"]

    def run(cwd: Path, variables: dict, timeout: float = 900):
        used = {**template["variables"], "LOGSCAN_SOURCE": str(ROOT), **variables}
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), **used}
        proc = subprocess.run(["bash", "-eo", "pipefail", "-c", "\n".join(template["script"])], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
        return proc, used

    run.template = template
    return run
