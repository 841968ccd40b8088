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
    """The gate package as a function: calling it calls ``logscan.api.gate``.

    ``__signature__`` gives ``inspect.signature`` (and ``help`` / IDEs) the real parameters of
    ``logscan.api.gate`` instead of this wrapper's ``(*args, **kwargs)``; it imports ``logscan.api``
    only when asked, so ``import logscan.gate`` stays cheap.
    """

    def __call__(self, *args, **kwargs):
        """``logscan.gate(report, policy=None, *, baseline=None, today=None, ...)``: see ``logscan.api.gate``."""
        from ..api import gate

        return gate(*args, **kwargs)

    @property
    def __signature__(self):
        """The signature of ``logscan.api.gate`` (an ``inspect.Signature``)."""
        import inspect

        from ..api import gate

        return inspect.signature(gate)


sys.modules[__name__].__class__ = _CallableModule
