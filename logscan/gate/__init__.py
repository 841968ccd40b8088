"""CI gate: a policy (``policy.py``), the judgement of a report (``evaluate.py``), baselines (``baseline.py``).

``logscan gate`` = ``pipeline.scan_inputs`` -> ``evaluate`` -> one of ``logscan.formats``.

This package is also the public function ``logscan.gate(report, policy)``: calling the module
calls ``logscan.api.gate`` (so ``logscan.gate.policy`` and ``logscan.gate(...)`` both work).
"""
from __future__ import annotations

import sys
import types
from pathlib import Path

from ..packs.loader import patterns_root


def default_policy_path() -> Path:
    """The shipped default policy, ``patterns/gate-policy.toml`` (inside the wheel or the tree)."""
    return patterns_root() / "gate-policy.toml"


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        """``logscan.gate(report, policy=None, *, baseline=None, today=None)``: see ``logscan.api.gate``."""
        from ..api import gate

        return gate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
