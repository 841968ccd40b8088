"""Environment switches of a planning question (``logscan ladder`` / ``matrix`` / ``explain --env``).

A switch that disables listed kernels before their gates (vLLM's ``VLLM_DISABLED_KERNELS``,
vllm/envs.py, read in vllm/model_executor/kernels/linear/__init__.py: ``if kernel.__name__ in
envs.VLLM_DISABLED_KERNELS`` skips the class) is read exactly as ``scan`` reads the log's own
assignment (``run_checks.disabled_kernels``): the pack rule that reads it names the switch. A
``--env`` name that no rung's gate, no kernel's module and no disabling switch reads is said
(``unread``), never silently echoed: it does not change the answer.
"""
from __future__ import annotations

from typing import Iterable

from ..packs.loader import Pack
def listed_kernels(value: str, switch: str) -> dict[str, str]:
    """Kernel classes a disabling switch's value lists: a comma-separated list of class names,
    as vLLM's kernels/linear/__init__.py reads ``envs.VLLM_DISABLED_KERNELS`` (vllm/envs.py) ->
    ``switch``. One reading for a log's own switch (``disabled_kernels``) and a planning
    ``--env`` (``disabling_switches``)."""
    names = [n.strip() for n in value.split(",") if n.strip() and n.strip().lower() != "none"]
    return {n: switch for n in names}


def disabling_switches(pack: Pack) -> frozenset[str]:
    """Names of the environment switches that disable listed kernels before their gates, as the
    pack's rules declare them (``sets.disabled_kernels_switch``, vLLM's 60-run.toml:
    ``VLLM_DISABLED_KERNELS``)."""
    out = set()
    for cr in pack.rules:
        sw = (cr.rule.sets or {}).get("disabled_kernels_switch")
        if sw and "{" not in sw:
            out.add(sw)
    return frozenset(out)


def env_disabled(engine: str, env: dict) -> dict[str, str]:
    """Kernel classes a planning machine's ``--env`` disables for ``engine``: each switch of
    ``disabling_switches`` the env sets, read by ``listed_kernels`` (kernel class -> switch)."""
    from ..packs.loader import default_packs

    packs = default_packs().packs
    if engine not in packs or not env:
        return {}
    out: dict[str, str] = {}
    for sw in sorted(disabling_switches(packs[engine])):
        if sw in env:
            out.update(listed_kernels(str(env[sw]), sw))
    return out


def _names(terms: Iterable) -> set[str]:
    out: set[str] = set()
    for t in terms:
        if t.kind in ("env", "option") and t.name:
            out.add(t.name)
        for opt in t.options or ():
            out |= _names(opt)
    return out


def unread(env: dict, engine: str, terms: Iterable, kernel_env: Iterable[str]) -> list[str]:
    """The ``--env`` names nothing of this walk reads: no gate term (``env`` / ``option``, inside
    alternatives too) of ``terms``, no ``kernel_env`` variable (the ladder's per-kernel ``env``,
    reference data) and no disabling switch of ``engine``'s pack (``disabling_switches``)."""
    from ..packs.loader import default_packs

    packs = default_packs().packs
    read = _names(terms) | set(kernel_env)
    if engine in packs:
        read |= disabling_switches(packs[engine])
    return [n for n in env if n not in read]


def disabled_term(kernel: str, switch: str, value: str):
    """The gate term a disabling switch adds to a listed rung: ``switch`` must not list
    ``kernel`` (a negated ``option`` on the given value, so every walk, scenario and word
    reads it as the given setting); it fails where the switch lists the kernel."""
    from ..packs.model import GateTerm

    return GateTerm(kind="option", name=switch, values=[value], negate=True,
                    source=f"{switch} not to list {kernel}",
                    why=f"{switch} lists {kernel}: the engine skips it before its gate "
                        f"(vllm/model_executor/kernels/linear/__init__.py)")
