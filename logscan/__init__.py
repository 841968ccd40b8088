"""logscan: tell which quantization kernel an LLM serving engine actually runs, from its logs.

Public API (stable; see ``__all__``)::

    import logscan
    report = logscan.scan("server.log")            # or scan(["a.log", "b.log.gz"]), scan(open(...)), scan(lines)
    result = logscan.gate(report, "gate.toml")     # result.verdict: pass | warn | fail

Names are imported lazily, so ``import logscan`` (and the CLI) stays cheap.
"""

__version__ = "0.1.0"

__all__ = [
    "__version__", "scan", "gate",
    "Report", "Run", "Selection", "Finding", "LadderPosition", "CostClass", "Severity",
    "GateResult", "Check", "Verdict", "PolicyError", "SideError", "PackError",
]

_LAZY = {
    "scan": "logscan.api", "gate": "logscan.gate",
    "Report": "logscan.models", "Run": "logscan.models", "Selection": "logscan.models",
    "Finding": "logscan.models", "LadderPosition": "logscan.models", "CostClass": "logscan.models",
    "Severity": "logscan.models",
    "GateResult": "logscan.gate.evaluate", "Check": "logscan.gate.evaluate", "Verdict": "logscan.gate.evaluate",
    "PolicyError": "logscan.gate.policy", "SideError": "logscan.gate.baseline", "PackError": "logscan.packs.loader",
}


def __getattr__(name: str):
    """PEP 562: import a public name on first use."""
    if name in _LAZY:
        import importlib

        mod = importlib.import_module(_LAZY[name])
        value = mod if name == "gate" else getattr(mod, name)  # the gate package is callable: api.gate
        globals()[name] = value
        return value
    raise AttributeError(f"module 'logscan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
