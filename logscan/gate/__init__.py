"""CI gate: a policy (``policy.py``), the judgement of a report (``evaluate.py``), baselines (``baseline.py``).

``logscan gate`` = ``pipeline.scan_inputs`` -> ``evaluate`` -> one of ``logscan.formats``.
"""
from __future__ import annotations

from pathlib import Path

from ..packs.loader import patterns_root


def default_policy_path() -> Path:
    """The shipped default policy, ``patterns/gate-policy.toml`` (inside the wheel or the tree)."""
    return patterns_root() / "gate-policy.toml"
