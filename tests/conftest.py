"""Shared fixtures: the shipped packs, and paths to the bundled real logs."""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.packs.loader import default_packs

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def packs():
    return default_packs()


def real_logs(engine: str) -> list[Path]:
    """Bundled real logs (copied from the labelled corpus, lines as they were) of an engine."""
    return sorted((FIXTURES / engine).glob("*.log"))
