"""The real line shapes of TGI, LMDeploy and MLC-LLM, for ``tools/other_coverage.py``.

Each function turns one template record (its ``level``, ``file``, ``versions``) and its filled
message into the text the engine prints: one line, or several when the message arrives inside a
Python traceback (a ``raise``). Every shape is taken from a real fixture, named beside it, and
from the engines' logging code (``../shared/reference/other-engines/<engine>.md`` section 1).

- TGI (``launcher/src/main.rs`` ``main`` / ``log_lines``; ``server/text_generation_server/cli.py``):
  ``compact`` ``2024-08-09T12:44:39.213012Z  INFO text_generation_launcher: <msg>`` (tgi-101),
  a ``launcher/src/gpu.rs`` line under its module target ``text_generation_launcher::gpu``
  (tgi-180); ``ansi``, the same line coloured as on a TTY (tgi-1xx: ``ESC[2m<ts>ESC[0m ESC[32m
  INFO ESC[0m ..``); ``json`` (``--json-output``, tgi-106/130/169): ``{"timestamp":..,"level":..,
  "fields":{"message":..},"target":..}``. A Python ``raise`` reaches the launcher as the shard's
  ``Error when initializing model`` record holding the traceback (tgi-101 compact, tgi-169 json,
  where the whole traceback is the one record's message).
- LMDeploy (``lmdeploy/utils.py`` ``get_logger``; ``src/turbomind/core/logger.cc``): ``python``
  ``2024-11-21 17:46:13,978 - lmdeploy - ERROR - model_agent.py:493 - <msg>``; ``python-pid``
  (``LMDEPLOY_LOG_PID=1``: ``[pid=.. ppid=..] - `` before the file); ``python-nofile`` (lmdeploy
  <= 0.5, lmdeploy-106). TurboMind C++ lines: ``[TM][WARN][0914.14:00:25.876730][turbomind.cc:123]
  <msg>`` for a template of v0.13+ (lmdeploy-1xx, issue #4962), ``[TM][WARNING] <msg>`` for an
  older one (the ``python-nofile`` era); a ``fatal`` as ``[TM][FATAL][..][file:line] <msg>``
  (TM_LOG_FATAL, cast.cu in lmdeploy-1xx), ``[TM][FATAL] <file>(34): Check failed: <msg>``
  (lmdeploy-112) or ``Check failed: <cond> <msg>`` (lmdeploy-107); ``print`` bare.
- MLC-LLM (``python/mlc_llm/support/logging.py``): ``[2025-02-08 12:57:08] INFO auto_config.py:70:
  <msg>``; ``print`` bare; a ``raise`` as a traceback (mlc-llm fixtures).
"""
from __future__ import annotations

import json
from pathlib import Path

SITE = {"tgi": "/opt/conda/lib/python3.10/site-packages/text_generation_server",
        "lmdeploy": "/opt/py3/lib/python3.10/site-packages/lmdeploy",
        "mlc-llm": "/usr/local/lib/python3.10/dist-packages/mlc_llm"}


def exc_class(msg: str) -> str:
    """The exception class a ``raise`` template most plausibly carries (the templates do not
    record it): an install hint is an ``ImportError`` (TGI eetq / awq / marlin, MLC triton), a
    "not supported" a ``NotImplementedError`` (TGI's sharding refusals), else ``ValueError``."""
    low = msg.lower()
    if "install" in low:
        return "ImportError"
    if "not supported" in low and "sharding" in low:
        return "NotImplementedError"
    return "ValueError"


def traceback(t: dict, msg: str, engine: str) -> list[str]:
    """A Python traceback ending in the raised message (str lines)."""
    file = t.get("file", "x.py")
    rel = file.split("text_generation_server/")[-1].split("lmdeploy/", 1)[-1].split("mlc_llm/")[-1]
    fn = str(t.get("function", "<module>")).split(".")[-1]
    exc = exc_class(msg)
    return ["Traceback (most recent call last):",
            f'  File "{SITE[engine]}/{rel}", line 212, in {fn}',
            f"    raise {exc}(",
            f"{exc}: {msg}"]


def _tgi_level(level: str) -> str:
    return {"warning": "WARN", "error": "ERROR", "debug": "DEBUG", "raise": "ERROR"}.get(level, "INFO")


def tgi(t: dict, msg: str, i: int, fmt: str) -> str:
    """TGI: ``compact`` / ``ansi`` / ``json`` (see the module docstring)."""
    ts = f"2024-08-09T12:44:{i % 60:02d}.{179449 + i:06d}Z"
    lvl = _tgi_level(t["level"])
    target = "text_generation_launcher::gpu" if t["file"].endswith("gpu.rs") else "text_generation_launcher"
    if msg.startswith("Shard complete standard error output:"):  # shard_manager, under its span
        return _shard_stderr(t, msg, ts, fmt)
    if t["level"] == "raise":
        if t["file"].endswith(".rs"):  # a LauncherError, printed by main's `Error: {err:?}`
            return f'Error: ArgumentValidation("{msg}")'
        body = ["Error when initializing model"] + traceback(t, msg, "tgi")
        if fmt == "json":
            return json.dumps({"timestamp": ts, "level": "ERROR", "fields": {"message": "\n".join(body)},
                               "target": target}, separators=(",", ":"))
        head = tgi(dict(t, level="error"), body[0], i, fmt)
        return "\n".join([head] + body[1:])
    if fmt == "json":
        return json.dumps({"timestamp": ts, "level": lvl.strip(), "fields": {"message": msg},
                           "target": target}, separators=(",", ":"))
    if fmt == "ansi":
        colour = {"WARN": "33", "ERROR": "31", "DEBUG": "34"}.get(lvl, "32")
        return (f"\x1b[2m{ts}\x1b[0m \x1b[{colour}m{lvl:>5}\x1b[0m \x1b[2m{target}\x1b[0m"
                f"\x1b[2m:\x1b[0m {msg}")
    return f"{ts} {lvl:>5} {target}: {msg}"


def _shard_stderr(t: dict, msg: str, ts: str, fmt: str) -> str:
    """``Shard complete standard error output:`` with the shard's traceback, under the
    ``shard-manager`` span (fields at the record's end: ``rank=0``; tgi-1xx compact, the json
    records with ``"span":{"rank":..,"name":"shard-manager"}``)."""
    head, _, err = msg.partition("\n")
    body = [head, "", "Traceback (most recent call last):",
            f'  File "{SITE["tgi"]}/utils/awq/quantize/qmodule.py", line 46, in forward',
            "    out = awq_inference_engine.gemm_forward_cuda(", err.strip()]
    if fmt == "json":
        span = {"rank": 0, "name": "shard-manager"}
        return json.dumps({"timestamp": ts, "level": "ERROR", "fields": {"message": "\n".join(body)},
                           "target": "text_generation_launcher", "span": span, "spans": [span]},
                          separators=(",", ":"))
    if fmt == "ansi":
        first = (f"\x1b[2m{ts}\x1b[0m \x1b[31mERROR\x1b[0m \x1b[1mshard-manager\x1b[0m: "
                 f"\x1b[2mtext_generation_launcher\x1b[0m\x1b[2m:\x1b[0m {head}")
    else:
        first = f"{ts} ERROR shard-manager: text_generation_launcher: {head}"
    return "\n".join([first] + body[1:-1] + [f"{body[-1]} \x1b[3mrank\x1b[0m\x1b[2m=\x1b[0m0"
                                              if fmt == "ansi" else f"{body[-1]} rank=0"])


def compose(make):
    """The same engine shape under ``docker compose up``'s service prefix (``qwen3vl  | ``,
    ``text-generation-inference-1  | `` in lmdeploy / tgi fixtures): every line of a record."""
    def wrapped(t: dict, msg: str, i: int, fmt: str) -> str:
        return "\n".join(f"llm-1  | {line}" for line in make(t, msg, i, "compact" if make is tgi else
                                                                "python").split("\n"))
    return wrapped


def _cpp(file: str) -> bool:
    return file.endswith((".cc", ".cu", ".cpp", ".h"))


def _new_tm(t: dict) -> bool:
    """A TurboMind line of a template printed by v0.13+ (the ``[TM][WARN][ts][file:line]`` logger)."""
    old = ("v0.9", "v0.10", "v0.11", "v0.12")
    return any(not v.startswith(old) for v in t.get("versions") or ["main"])


def _py_level(level: str) -> str:
    return {"warning": "WARNING", "error": "ERROR", "exception": "ERROR", "debug": "DEBUG",
            "fatal": "ERROR"}.get(level, "INFO")


def lmdeploy(t: dict, msg: str, i: int, fmt: str) -> str:
    """LMDeploy: ``python`` / ``python-pid`` / ``python-nofile`` (see the module docstring)."""
    level, file = t["level"], Path(t["file"]).name
    if level == "raise":
        return "\n".join(traceback(t, msg, "lmdeploy"))
    if level == "print" or msg.startswith("[TM]"):
        return msg
    if _cpp(file):
        new = _new_tm(t) and not (fmt == "python-nofile" and not all(_new_tm({"versions": [v]}) for v in t["versions"]))
        if level == "fatal":
            if fmt == "python":
                return f"[TM][FATAL][0914.14:00:{i % 60:02d}.807188][{file}:264] {msg}"
            if fmt == "python-pid":
                return f"Check failed: cond {msg}"
            return f"[TM][FATAL] {t['file'].split('turbomind/')[-1]}(34): Check failed: {msg}"
        if new:
            lvl = {"warning": "WARN", "error": "ERROR", "debug": "DEBUG"}.get(level, "INFO")
            return f"[TM][{lvl}][0914.14:00:{i % 60:02d}.876730][{file}:123] {msg}"
        return f"[TM][{ {'warning': 'WARNING', 'error': 'ERROR'}.get(level, 'INFO') }] {msg}"
    where = {"python-nofile": "", "python-pid": f"[pid=4242 ppid=4200] - {file}:{40 + i % 60} - "}.get(
        fmt, f"{file}:{40 + i % 60} - ")
    return f"2024-11-21 17:46:{i % 60:02d},971 - lmdeploy - {_py_level(level)} - {where}{msg}"


def mlc(t: dict, msg: str, i: int, fmt: str) -> str:
    """MLC-LLM: ``python`` (see the module docstring)."""
    if t["level"] == "raise":
        return "\n".join(traceback(t, msg, "mlc-llm"))
    if t["level"] == "print":
        return msg
    return f"[2025-02-08 12:57:{i % 60:02d}] {_py_level(t['level'])} {Path(t['file']).name}:{70 + i % 90}: {msg}"


def _with_compose(make):
    def by_fmt(t: dict, msg: str, i: int, fmt: str) -> str:
        return compose(make)(t, msg, i, fmt) if fmt == "compose" else make(t, msg, i, fmt)
    return by_fmt


FORMATS = {"tgi": (_with_compose(tgi), ("compact", "ansi", "json", "compose")),
           "lmdeploy": (_with_compose(lmdeploy), ("python", "python-pid", "python-nofile", "compose")),
           "mlc-llm": (_with_compose(mlc), ("python", "compose"))}
