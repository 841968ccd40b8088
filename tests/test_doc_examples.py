"""Every example in README.md and docs/*.md is run (or, for the few that cannot run here, named
with the reason), so the documentation cannot drift from the program.

- ``bash`` blocks: each ``logscan`` command line is run in a scratch folder, with the docs'
  placeholder files (``server.log``, ``gate.toml``, ``good.json``, ``/logs/engine.log``, the
  ``vllm serve`` pipe) stood in by real fixtures, the docs' own policy example and a baseline made
  from a fixture. It must exit 0 or 1 (1: a gate or ``--fail-on`` doing its job), never 2 and never
  a traceback. ``follow`` commands run until SIGINT, which must stop them cleanly (exit 0).
  Any other command must be in ``NOT_RUN_HERE`` with the reason, or the README's install and test
  commands that ``.ci/run`` runs verbatim.
- Sample outputs (unlabelled blocks) must match what the command before them prints.
- ``python`` blocks are executed; a ``print(...)  # value`` comment must be what it prints.
- ``toml`` policy blocks parse; an ``[[allow]]`` entry passes the day before it expires and fails,
  saying so, the day after (judged with ``--today`` on the example's own date, never today's).
- ``yaml`` and ``json`` blocks parse (the workflows are linted in tests/test_action.py).
- No document says ``pip install logscan``: that name on the index is an unrelated 2014 tool.
"""
from __future__ import annotations

import datetime as dt
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path

import pytest
import regex
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
import yaml

from tests.conftest import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
FIXTURE = "fixtures/vllm/vllm-005.log"
#: commands shown in the docs that this test does not run, and why
NOT_RUN_HERE = {
    "python3 -m venv .venv && .venv/bin/pip install .": ".ci/run runs the README's install command verbatim",
    ".venv/bin/pip install '.[test]'": ".ci/run runs the README's test command verbatim",
    "kubectl apply": "needs a cluster: the files are schema-checked in tests/test_deploy.py",
    "pip download --no-deps vllm": "downloads a vLLM wheel: tools/derive_ladders.py is tested in tests/test_derive_ladders.py",
    "python tools/derive_ladders.py": "needs that vLLM wheel: tested in tests/test_derive_ladders.py",
    "python bench/throughput.py": "a benchmark over 100 MB - 1 GB: its script is checked in tests/test_bench.py",
    "pip install '.[maintainer]'": "a maintainer extra (tomli-w), not needed by the tests",
    "python tools/refresh.py": "downloads a vLLM or SGLang release: tests/test_refresh.py and "
                               "tests/test_sglang_ladder_history.py run it on bundled source trees",
    "python tools/derive_sglang.py": "reads an SGLang release tree: tested in tests/test_sglang_ladder_history.py",
    "python tools/template_history.py": "reads release trees: tested in tests/test_template_history.py",
    "python tools/corpus_score.py": "scores the bundled corpus: run by tests/test_corpus_score.py",
    "python tools/presentation_coverage.py": "scans the bundled corpus under 14 presentations: run by "
                                             "tests/test_presentation_coverage.py",
    "python tools/other_coverage.py": "scans synthetic TGI/LMDeploy/MLC-LLM logs: run by tests/test_other_coverage.py",
    "python bench/compare.py": "a benchmark over 100 MB - 1 GB beside rg and grep: smoke-run in tests/test_bench.py",
    "python bench/follow_cost.py": "two minutes of a growing log: smoke-run in tests/test_bench.py",
    "python bench/startup.py": "times start-up against a peer checkout (and callgrind): smoke-run in tests/test_bench.py",
    "git archive": "makes the peer checkout of a benchmark (a before/after figure), not a logscan example",
}


def _blocks(doc: Path) -> list[tuple[str, str, int]]:
    text = doc.read_text()
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
            for m in regex.finditer(r"^ *```(\w*)\n(.*?)^ *```", text, flags=regex.S | regex.M)]


def _commands(body: str) -> list[str]:
    lines, cur = [], ""
    for raw in body.splitlines():
        line = raw.strip()
        if cur:
            line = cur + " " + line
        if line.endswith("\\"):
            cur = line[:-1].rstrip()
            continue
        cur = ""
        line = regex.sub(r"\s+#\s.*$", "", line).strip()
        if line:
            lines.append(line)
    return lines


def _cases():
    out = []
    for doc in DOCS:
        for lang, body, lineno in _blocks(doc):
            out.append(pytest.param(doc, lang, body, id=f"{doc.relative_to(ROOT)}:{lineno}:{lang or 'output'}"))
    return out


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("doc-examples")
    for name in ("fixtures", "patterns", "tools", "bench"):
        (d / name).symlink_to(ROOT / name)
    shutil.copy(ROOT / FIXTURE, d / "server.log")
    shutil.copy(ROOT / FIXTURE, d / "good-start.log")
    shutil.copy(ROOT / FIXTURE, d / "other.log")
    subprocess.run(["gzip", "-kf", str(d / "other.log")], check=True)
    (d / "logs").mkdir()
    shutil.copy(ROOT / FIXTURE, d / "logs" / "engine.log")
    pod = d / "pods" / "llm_vllm-0_0f1e" / "vllm"
    pod.mkdir(parents=True)
    shutil.copy(ROOT / FIXTURE, pod / "0.log")
    (d / "gate.toml").write_text(_policy_example())
    (d / ".ci").mkdir()
    shutil.copy(d / "gate.toml", d / ".ci" / "gate.toml")
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    with open(d / "good.json", "w") as fh:
        subprocess.run(["logscan", "scan", "--format", "json", "good-start.log"], cwd=d, stdout=fh, env=env, check=True)
    return d


def _policy_example() -> str:
    gate = (ROOT / "docs" / "ci-gate.md").read_text()
    return regex.search(r"```toml\n(.*?)```", gate.split("**Policy file**", 1)[1], flags=regex.S).group(1)


def _localise(cmd: str) -> str:
    """The docs' placeholders -> files in the scratch folder."""
    cmd = cmd.replace("vllm serve MODEL 2>&1", f"cat {FIXTURE}")
    cmd = cmd.replace("/var/log/pods/", "pods/").replace("/logs/", "logs/")
    if " follow " in f" {cmd} " and "--metrics-addr" not in cmd:
        cmd += " --metrics-addr 127.0.0.1:0"  # loopback, a free port
    return cmd


def _group_members(pgid: int, word: str) -> list[int]:
    """Processes of process group ``pgid`` whose command line holds ``word`` (Linux /proc)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if int(stat[stat.rindex(")") + 2:].split()[2]) == pgid and word in (d / "cmdline").read_text():
                found.append(int(d.name))
        except (OSError, ValueError):
            continue
    return found


def _run(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "LOGSCAN_CACHE_DIR": str(cwd / ".cache")}
    if regex.search(r"\blogscan follow\b", cmd):
        for state in regex.findall(r"--state-file\s+(\S+)", cmd):  # each example starts afresh
            (cwd / state).unlink(missing_ok=True)
        out_path, err_path = cwd / "follow.out", cwd / "follow.err"
        with open(out_path, "w") as out, open(err_path, "w") as err:
            proc = subprocess.Popen(["bash", "-o", "pipefail", "-c", f"exec {cmd}" if "|" not in cmd else cmd],
                                    cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True)
            deadline = time.monotonic() + 60  # until the first selection is out (bounded), then SIGINT
            while proc.poll() is None and time.monotonic() < deadline and '"selection"' not in out_path.read_text():
                time.sleep(0.2)
            if "|" in cmd:  # a finite pipe: follow ends by itself at its end; give it the time
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            if proc.poll() is None:  # Ctrl-C reaches logscan; the shell of a pipeline is not the subject
                for pid in [p for p in _group_members(proc.pid, "logscan") if p != proc.pid] or [proc.pid]:
                    try:
                        os.kill(pid, signal.SIGINT)
                    except ProcessLookupError:  # it ended on its own (its stdin closed) meanwhile
                        pass
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return subprocess.CompletedProcess(cmd, proc.returncode, out_path.read_text(), err_path.read_text())
    return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180)


def _check_bash(body: str, scratch: Path) -> list[str]:
    ran = []
    for cmd in _commands(body):
        if not regex.search(r"(^|\|\s*)logscan\s", cmd) or any(cmd.startswith(k) for k in NOT_RUN_HERE):
            assert any(cmd.startswith(k) for k in NOT_RUN_HERE), f"a documented command this test neither runs nor excuses: {cmd}"
            continue
        proc = _run(_localise(cmd), scratch)
        follow = "logscan follow" in cmd
        allowed = {0} if follow else {0, 1}
        assert proc.returncode in allowed, f"{cmd}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
        if follow:
            assert '"type": "selection"' in proc.stdout or '"type":"selection"' in proc.stdout, cmd
        ran.append(proc.stdout)
    return ran


def _last_command(doc: Path, before_line: int) -> str:
    text = doc.read_text().splitlines()[:before_line]
    cmds = [c for lang, body, ln in _blocks(doc) if lang == "bash" and ln < before_line for c in _commands(body)
            if c.startswith("logscan") or "| logscan" in c]
    assert cmds and text, "a sample output with no command before it"
    return cmds[-1]


@pytest.mark.parametrize("doc,lang,body", _cases())
def test_doc_example(doc, lang, body, scratch):
    if lang == "bash":
        _check_bash(body, scratch)
    elif lang == "python":
        _check_python(body, scratch)
    elif lang == "toml":
        _check_policy(body, scratch)
    elif lang == "yaml":
        assert list(yaml.safe_load_all(body))
    elif lang == "json":
        json.loads(body)
    elif lang == "":
        _check_output(doc, body, scratch)
    else:
        pytest.fail(f"a {lang!r} block: teach this test to check it")


def _check_output(doc: Path, body: str, scratch: Path) -> None:
    m = regex.match(r"Run 1: (\S+) lines", body)
    if m:
        cmd = f"logscan scan {m.group(1)}"
    else:
        text = doc.read_text()
        cmd = _last_command(doc, text[: text.index(body)].count("\n"))
    proc = _run(_localise(cmd), scratch)
    assert proc.returncode in (0, 1), proc.stderr
    printed = " ".join(proc.stdout.split())
    for line in body.splitlines():
        want = " ".join(line.split())
        if not want:
            continue
        for part in want.split("..."):  # an elided sample: each shown piece must be printed
            assert part.strip(" ,") in printed, f"{cmd}: sample line not printed: {part!r}"


def _check_python(body: str, scratch: Path) -> None:
    expected = regex.findall(r"print\(.*\)\s+#\s*(.+)$", body, flags=regex.M)
    buf = io.StringIO()
    cwd = os.getcwd()
    os.chdir(scratch)
    try:
        with redirect_stdout(buf):
            exec(compile(body, "<doc example>", "exec"), {"__name__": "__doc_example__"})  # noqa: S102
    finally:
        os.chdir(cwd)
    assert buf.getvalue().splitlines() == [e.strip() for e in expected]


def _check_policy(body: str, scratch: Path) -> None:
    data = tomllib.loads(body)
    (scratch / "example.toml").write_text(body)
    if not data.get("allow"):
        return
    expires = data["allow"][0]["expires"]
    assert isinstance(expires, dt.date)
    for day, want in ((expires - dt.timedelta(days=1), 0), (expires + dt.timedelta(days=1), 1)):
        # FIXTURE is an excerpt cut before its ready line: --partial-log leaves START_INCOMPLETE unjudged
        proc = _run(f"logscan gate --partial-log --policy example.toml --today {day.isoformat()} {FIXTURE}", scratch)
        assert proc.returncode == want, (day, proc.stdout[-3000:], proc.stderr)
        if want:
            assert f"EXPIRED on {expires.isoformat()}" in proc.stdout


INSTALL_FROM_INDEX = regex.compile(r"pip3?[^\S\n]+install(?:[^\S\n]+\S+)*?[^\S\n]+[\"'`]?logscan(?![\w-])", flags=regex.M)


def _shipped_texts():
    files = DOCS + [ROOT / "action.yml", *sorted((ROOT / "ci").rglob("*")), *sorted((ROOT / "deploy").glob("*")),
                    ROOT / "pyproject.toml"]
    return [f for f in files if f.is_file()]


@pytest.mark.parametrize("path", _shipped_texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_installs_the_index_package_named_logscan(path):
    hits = INSTALL_FROM_INDEX.findall(path.read_text())
    assert not hits, f"{path.name}: {hits} installs the unrelated 'logscan' from the index; this project is logscan-llm"


@pytest.mark.parametrize("line,bad", [("pip install logscan vllm", True), ("pip install -q logscan", True),
                                      ("pip install 'logscan==0.1'", True), ("pip install vllm logscan", True),
                                      ("pip install logscan-llm", False), ("pip install .", False),
                                      ('pip install "logscan-llm @ git+https://x/logscan@v1"', False)])
def test_the_install_check_can_fail(line, bad):
    assert bool(INSTALL_FROM_INDEX.search(line)) is bad


def test_ci_run_runs_the_readme_commands_verbatim():
    readme = (ROOT / "README.md").read_text()
    first, second = regex.findall(r"```bash\n(.*?)```", readme, flags=regex.S)[:2]
    run = (ROOT / ".ci" / "run").read_text()
    assert first.strip() in run and second.strip() in run
