"""Shared fixtures: the shipped packs, and paths to the bundled real logs."""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.packs.loader import default_packs

ROOT = Path(__file__).resolve().parent.parent
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


def real_logs(engine: str) -> list[Path]:
    """Bundled real logs (copied from the labelled corpus, lines as they were) of an engine."""
    return sorted((FIXTURES / engine).glob("*.log"))


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
