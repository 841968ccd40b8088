"""Judging one gate check with the policy: the first policy rule that matches it decides its
level (fail, warn or pass), and an allow-list entry turns a fail or warn into a pass until its
expiry date (a fail saying it expired after that). A check of a run whose engine release is known
only as a range is judged at every release of the range the policy's ``versions`` rules tell
apart, and the worst outcome is kept (fail closed).

Split from ``gate/evaluate.py`` (which re-exports these names) so that ``gate/incomplete.py``
can judge its START_INCOMPLETE check without importing ``evaluate``.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Optional

from .policy import AllowEntry, Policy, PolicyRule, Subject, matches
from .releases import Release, probe_versions
from .result import VERDICT_ORDER, Allowance, Check, Verdict

KERNEL_POLICY = "KERNEL_POLICY"  #: ``Check.code`` of a selection a rule judged that has no finding code
NO_RULE = "default: no policy rule matched"  #: ``Check.decided_by`` of a check no rule matched (it passes)


def _decide(policy: Policy, s: Subject, cmap: dict[str, str]) -> tuple[Verdict, str, str]:
    for loc in policy.rules:
        rule: PolicyRule = loc.item  # type: ignore[assignment]
        if matches(rule, s, cmap):
            why = f" ({rule.reason})" if rule.reason else ""
            return Verdict(rule.level), loc.where, why
    return Verdict.passed, NO_RULE, ""


def _allow(policy: Policy, s: Subject, cmap: dict[str, str], today: date) -> Optional[Allowance]:
    for loc in policy.allow:
        entry: AllowEntry = loc.item  # type: ignore[assignment]
        if matches(entry, s, cmap):
            return Allowance(reason=entry.reason, expires=entry.expires, expired=today > entry.expires,
                             where=loc.where)
    return None


def _outcome(s: Subject, policy: Policy, cmap: dict[str, str], today: date):
    """(verdict, decided by, reason, allowance) of one subject whose release is as ``s.version`` says."""
    verdict, where, why = _decide(policy, s, cmap)
    allowed = _allow(policy, s, cmap, today) if verdict != Verdict.passed else None
    final = verdict
    if allowed is not None:
        final = Verdict.fail if allowed.expired else Verdict.passed
    return final, verdict, where, why, allowed


def _versioned(policy: Policy) -> list[str]:
    return [loc.item.versions for loc in policy.rules + policy.allow if loc.item.versions is not None]


def _judge(check: Check, s: Subject, policy: Policy, cmap: dict[str, str], today: date,
           release: Optional[Release] = None) -> Check:
    """Set ``check``'s verdict, ``decided_by`` and message from ``policy`` (and its allow-list on
    ``today``) for subject ``s``; returns ``check``. ``release``: the run's engine release; when it
    is known only as a range and the policy has ``versions`` rules, every release of the range
    they tell apart is judged and the worst outcome kept (the message says so). A verdict other
    than pass with no finding code gets ``KERNEL_POLICY``."""
    specs = _versioned(policy)
    note = ""
    if release is None or release.known or not specs:
        final, verdict, where, why, allowed = _outcome(replace(s, version=release.exact if release else s.version),
                                                       policy, cmap, today)
    else:  # fail closed: judge every release the range allows, keep the worst (the stricter reading)
        outcomes = [_outcome(replace(s, version=v), policy, cmap, today) for v in probe_versions(release, specs)]
        worst = min(outcomes, key=lambda o: VERDICT_ORDER[o[0]])
        final, verdict, where, why, allowed = worst
        scoped = {loc.where for loc in policy.rules + policy.allow if loc.item.versions is not None}
        if len({(o[0], o[2]) for o in outcomes}) > 1:
            note = f"; {release.describe()}: the stricter reading over that range decides"
        elif where in scoped or (allowed is not None and allowed.where in scoped):
            note = f"; {release.describe()}"
    check.verdict, check.decided_by = verdict, where
    if verdict != Verdict.passed:
        check.message += why
        if allowed is not None:
            check.allowance = allowed
            check.verdict = final
            if allowed.expired:
                check.message += (f"; allow-list entry {allowed.where} EXPIRED on {allowed.expires.isoformat()} "
                                  f"(reason was: {allowed.reason})")
            else:
                check.message += (f"; allowed by {allowed.where} until {allowed.expires.isoformat()}: "
                                  f"{allowed.reason}")
        if check.code is None:
            check.code = KERNEL_POLICY
    check.message += note
    return check
