"""What a run says of its engine: release (logged, given or inferred from era hints), platform.

Era hints come from the packs (rule and line-format ``versions``, the template history) and
from the ladders (a kernel class only some releases' registries hold); platforms have their
own ladders, so a name only one platform's ladders (or the pack's ``platform_hint``) hold
names the platform of a run that logs none.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from packaging.version import InvalidVersion, Version

from .. import rxcache
from ..models import EngineInfo, Event
from ..packs.loader import CompiledRule, Pack
from .era import EraHint, infer_release
from .ladders import norm, parse_version
from .runstate import RunState, fill

if TYPE_CHECKING:
    from .analyzer import Analyzer

#: Platforms that have their own ladders (registry platform keys other than these are branch labels).
PLATFORMS = ("CUDA", "ROCM", "XPU", "CPU", "TPU")


def candidate_releases(pack: Pack) -> list[str]:
    """Releases version inference may pick for ``pack``: its ``releases`` list and its shipped ladders'."""
    return sorted(set(pack.meta.pack.releases) | set(pack.ladders), key=_release_order)


def _release_order(release: str):
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, Version("0"))


def kernel_of(cr: CompiledRule, ev: Event) -> Optional[str]:
    """The kernel name a line states: the rule's ``kernel`` template filled, else its ``kernel`` group (None: none)."""
    r = cr.rule
    kernel = fill(r.kernel, ev.groups) if r.kernel else ev.groups.get("kernel")
    kernel = kernel.strip() if kernel else None
    return kernel or None


def era_hints(ctx: Analyzer, run: RunState) -> list[EraHint]:
    """Era evidence of a run: rule ``versions``, line-format ``versions``, kernel classes on ladders."""
    hints: list[EraHint] = []
    for rid in run.rules_seen:
        cr, pack = ctx.rules[rid]
        # a rule's ``versions`` are its own engine's releases: a borrowed rule (an SGLang run's
        # line read by a vLLM rule) says nothing about the run's release
        if cr.versions is not None and pack.engine == run.engine:
            hints.append(EraHint.from_spec(f"{rid} ({cr.rule.versions})", cr.versions))
    for pack in ctx.packs.packs.values():
        if pack.engine != run.engine:
            continue
        for pf in pack.prefixes + pack.processes:
            if pf.versions is not None and ctx.prefix_formats.get(pf.spec.id):
                hints.append(EraHint.from_spec(f"line format {pf.spec.id} ({pf.spec.versions})", pf.versions))
    hints += template_hints(ctx, run)
    idx = ctx.ladders.get(run.engine)
    if idx is not None:
        seen: set[str] = set()
        for ev in run.events:
            cr, _ = ctx.rules[ev.rule]
            if not cr.rule.family:
                continue
            kernel = kernel_of(cr, ev)
            if not kernel or norm(kernel) in seen:
                continue
            seen.add(norm(kernel))
            rels = idx.releases_holding_class(kernel)
            if rels and len(rels) < len(idx.releases):
                lo, hi = min(rels, key=Version), max(rels, key=Version)
                span = lo if lo == hi else f"{lo} .. {hi}"
                hints.append(EraHint.from_releases(f"kernel class {kernel} (on the ladders of {span})",
                                                   frozenset(rels)))
        hints += logged_list_hints(ctx, run, idx)
    return hints


def logged_list_hints(ctx: Analyzer, run: RunState, idx) -> list[EraHint]:
    """Era hints from the candidate lists selection lines log (``logged_ladder``): the shipped
    releases whose list for that registry holds the logged items in the logged order. A list every
    shipped release holds gives none; one none holds allows no release (so it is named among the
    disagreeing hints, never silently dropped)."""
    from .logged_ladder import fitting_releases, logged_candidates

    hints: list[EraHint] = []
    seen: set[tuple] = set()
    for ev in run.events:
        cr, _ = ctx.rules[ev.rule]
        cands = logged_candidates(ev) if cr.rule.family else []
        hint = fill(cr.rule.registry, ev.groups) if cr.rule.registry else None
        if not cands or (hint, tuple(cands)) in seen:
            continue
        seen.add((hint, tuple(cands)))
        rels = fitting_releases(idx, cands, hint, run.platform)
        if not rels:  # named among the disagreeing hints: the run's release has no shipped ladder like it
            hints.append(EraHint.from_releases(
                f"line {ev.line}'s candidate list ({len(cands)} backends; no shipped release's list holds "
                f"them in this order: a release or build logscan has no ladder for)", frozenset()))
        elif len(rels) < len(idx.releases):
            lo, hi = min(rels, key=Version), max(rels, key=Version)
            span = lo if lo == hi else f"{lo} .. {hi}"
            hints.append(EraHint.from_releases(
                f"line {ev.line}'s candidate list ({len(cands)} backends; in this order on the ladders of {span})",
                frozenset(rels)))
    return hints


def template_hints(ctx: Analyzer, run: RunState) -> list[EraHint]:
    """Era hints from the template history (see ``template_era.template_hints``)."""
    from .template_era import template_hints

    pack = ctx.packs.packs[run.engine]
    return template_hints(ctx.packs, pack, [ev.message for ev in run.events], candidate_releases(pack))


def engine_info(ctx: Analyzer, run: RunState) -> EngineInfo:
    """The run's ``EngineInfo``: engine (or ``unknown``), platform, release and the ladder its rungs come from.

    The release is the logged one, else ``--engine-version``'s, else inferred from the era
    hints (``run.era`` then holds the releases it ranges over). A logged release with no
    shipped ladder takes the newest older one's, and says so (never rounded silently).
    """
    idx = ctx.ladders.get(run.engine)
    title = ctx.packs.packs[run.engine].meta.pack.title or run.engine
    if not run.engine_sure:
        from .kernel_identity import class_identity

        why = class_identity(ctx, run)
        if why:
            run.engine_sure, run.identified_by = True, why
    info = EngineInfo(name=run.engine if run.engine_sure else "unknown", platform=run.platform,
                      read_with=run.engine, identified_by=run.identified_by or (
                          "no line names the engine (no engine line prefix, start line or engine-specific "
                          f"text such as a package path): only generic lines, read with the {title} rules"))
    if run.platform:
        info.platform_source = "logged"
        info.platform_evidence = f"line {run.platform_line}" if run.platform_line else None
    v = parse_version(run.version)
    if run.version and v is not None:
        info.version, info.version_source = run.version, "logged"
        info.version_evidence = f"line {run.version_line}"
    elif run.engine in ctx.engine_version:
        info.version, info.version_source = ctx.engine_version[run.engine], "given"
        info.version_evidence = "--engine-version" + (f" (the log says {run.version!r})" if run.version else "")
        v = parse_version(info.version)
    elif (rep := reported_release(ctx, run, title)) is not None:
        v = rep
        info.version, info.version_source = run.version_reported, "reported"
        info.version_evidence = (f"logged as {run.version!r} (a source build); " if run.version else "") \
            + (run.reported_evidence or "")
    else:
        guess = infer_release(era_hints(ctx, run), candidate_releases(ctx.packs.packs[run.engine]))
        if run.version:
            info.version = run.version
        if guess is not None and not run.engine_sure:
            # no line names the engine: a release is an engine's, so none is claimed (no
            # release_range, no per-release rungs); the rules that read the lines still fit
            # only some of read_with's releases, whose newest ladder places the rungs
            info.version_evidence = (f"engine unknown, so no release is claimed; ladders of {title} "
                                     f"{guess.newest}, the newest {title} release whose rules fit these lines "
                                     f"(were they {title}'s: {guess.describe()})")
            v = Version(guess.newest)
        elif guess is not None:
            info.version_source = "inferred"
            prefix = f"logged as {run.version!r} (a source build); " if run.version else ""
            info.version_evidence = prefix + guess.describe() + (
                f"; {run.reported_evidence}" if run.reported_evidence else "")
            info.release_range = [guess.releases[0], guess.releases[-1]]
            v = Version(guess.newest)
            run.era = list(guess.releases)
        elif run.version:
            info.version_source = "logged"
            info.version_evidence = f"line {run.version_line}" + (
                # a build tag (llama.cpp's b7442) is the engine's own release name, but not one
                # logscan's ladders are numbered by: say so, and that the newest may not fit the build
                f"; not a release logscan's {title} ladders are numbered by ({_span(idx.releases)}), so the "
                f"newest shipped ladder is used, which may not match this build"
                if idx is not None and idx.releases else "")
    if idx is not None:
        info.ladder_version = idx.pick_release(v)
        note = ctx.packs.packs[run.engine].meta.pack.release_unlogged
        if note and v is None and info.version_source == "unknown" and info.ladder_version and run.engine_sure:
            # fail closed: a ladder read for want of a release is named, never silently the newest
            info.version_evidence = (f"release not logged, so read against the {title} {info.ladder_version} "
                                     f"ladders, the newest shipped: {note}")
            # any shipped release may have run: a rung that sits elsewhere in another era is
            # named with its releases (``LadderIndex.elsewhere``), not left to the newest's
            run.era = list(idx.releases)
        if (info.version_source in ("logged", "reported") and v is not None and info.ladder_version
                and idx.exact(str(v)) is None):  # never round a release silently
            info.version_evidence = (f"{info.version_evidence}; {info.version} has no shipped ladder, so its "
                                     f"rungs are those of {info.ladder_version}, the newest older release")
    return info


def reported_release(ctx: Analyzer, run: RunState, title: str) -> Optional[Version]:
    """The release the reporter's environment states (``run.version_reported``: vLLM's
    ``collect_env`` 'vLLM Version:', SGLang's / LMDeploy's ``check_env``, a pip pin, a docker image
    tag, an issue template's bullet), used when no banner logs one and no ``--engine-version`` is
    given; it beats the era inference, and where the era hints disagree the evidence says so.

    A development build ``0.10.2.dev123+g...`` (setuptools-scm: commits after 0.10.1, before
    0.10.2) is kept as reported and read against the newest release before 0.10.2; a name with no
    release number (``nightly``, ``latest``, ``0.1.devN``) sets none: the release stays unknown or
    inferred, and the evidence names what was reported (``run.reported_evidence``)."""
    run.reported_evidence = None
    if not run.version_reported or not run.engine_sure:
        return None
    where = (f"line {run.version_reported_line}, the reporter's environment (an env dump, pip pin or image tag), "
             "not the engine's banner")
    v = parse_version(run.version_reported)
    if v is None:
        run.reported_evidence = (f"the reporter's environment names {run.version_reported!r} (line "
                                 f"{run.version_reported_line}), no release number: not used")
        return None
    ev = where
    if v.is_devrelease:
        ev += (f"; {run.version_reported} is a development build before {v.base_version}, read against "
               f"the newest {title} release before it")
    # the era hints that the reported release (the newest candidate at or before it) does not fit
    older = [c for c in candidate_releases(ctx.packs.packs[run.engine]) if _le(c, v)]
    if older:
        fits = max(older, key=_release_order)
        against = [h.why for h in era_hints(ctx, run) if not h.allows(fits)]
        if against:
            ev += f"; the log's era hints disagree ({fits} does not fit): " + "; ".join(against[:4])
    run.reported_evidence = ev
    return v


def _le(release: str, base: Version) -> bool:
    try:
        return Version(release) <= base
    except InvalidVersion:
        return False


def file_votes(run: RunState, pack: Pack) -> dict[str, list[str]]:
    """Platform -> reasons, from the logger file names of the run's lines (``[cuda.py:378]``)
    that the pack's ``platform_files`` ties to one platform; the first line of each file named.

    vLLM's platform classes log under their module's name (vllm/platforms/cuda.py, rocm.py,
    xpu.py, cpu.py, tpu.py, 0.6.4 ->), so a line tagged ``[rocm.py:N]`` was printed by the ROCm
    platform's code: evidence of the platform, weaker than a line that states it or a name only
    one platform's ladders hold (``infer_platform`` uses it when those are silent)."""
    files = pack.meta.pack.platform_files
    votes: dict[str, list[str]] = {}
    seen: set[str] = set()
    if not files:
        return votes
    for ev in run.events:
        if not ev.fileinfo:
            continue
        name = ev.fileinfo.rsplit(":", 1)[0].rsplit("/", 1)[-1]
        plat = files.get(name)
        if plat is not None and name not in seen:
            seen.add(name)
            votes.setdefault(plat, []).append(f"line {ev.line} is logged by {name}, {plat} platform code")
    return votes


def infer_platform(ctx: Analyzer, run: RunState, info: EngineInfo, pack: Pack) -> None:
    """No platform line: infer it from names only one platform has (ladders, pack hints), else
    from the logger file names of its lines (``file_votes``)."""
    if run.platform:
        return
    idx = ctx.ladders.get(run.engine)
    votes: dict[str, list[str]] = {}
    names: dict[str, bool] = {}  # name -> is it a selection (placed on a ladder)
    for ev in run.events:
        cr, _ = ctx.rules[ev.rule]
        if cr.rule.family or cr.rule.finding:
            k = kernel_of(cr, ev)
            if k:
                names[k] = names.get(k, False) or bool(cr.rule.family)
    for name, _ in run.attention:
        names.setdefault(name, False)
    for name, selected in names.items():
        plats: set[str] = set()
        why = ""
        if selected and idx is not None and info.ladder_version:  # a selected class: its ladders
            plats = {p for p in idx.platforms_holding(info.ladder_version, name) if p in PLATFORMS}
            title = ctx.packs.packs[run.engine].meta.pack.title or run.engine
            # a platform inference, not a release claim: the class may sit on other releases' ladders too
            why = f"of the {title} {info.ladder_version} ladders, only the {next(iter(plats), '')} ones hold {name}"
        if len(plats) != 1:  # else the pack's platform-only names (attention, finding kernels)
            plats, why = set(), ""
            for h in pack.meta.platform_hint:
                if rxcache.search(h.pattern, name):
                    plats, why = {h.platform}, f"{name}: {h.why or 'a ' + h.platform + '-only name'}"
                    break
        if len(plats) == 1:
            votes.setdefault(next(iter(plats)), []).append(why)
    if not votes:
        votes = file_votes(run, pack)
    if not votes:
        return
    plat = max(sorted(votes), key=lambda p: len(votes[p]))
    run.platform = info.platform = plat
    info.platform_source = "inferred"
    info.platform_evidence = "; ".join(votes[plat][:4])
    if len(votes) > 1:
        info.platform_evidence += " (outvoted: " + ", ".join(p for p in sorted(votes) if p != plat) + ")"


def platform_from_failure(run: RunState, info: EngineInfo, pack: Pack, failing_kernel: Optional[str],
                          line: Optional[int]) -> None:
    """No platform known after ``infer_platform``: a failed start whose failing kernel only one
    platform has (the pack's ``platform_hint``, e.g. vLLM's AITER: ROCm only) ran on that platform.

    The failing kernel is read from the traceback (``failhead``) after the platform was inferred,
    so this is a second, later look: a run whose innermost frames run ``aiter/jit/core.py`` ran
    AITER's code, which vLLM imports only on ROCm (vllm-152, vllm-298: vllm-project/vllm#19904).
    """
    if run.platform or not failing_kernel:
        return
    for h in pack.meta.platform_hint:
        if rxcache.search(h.pattern, failing_kernel):
            run.platform = info.platform = h.platform
            info.platform_source = "inferred"
            where = f" (line {line})" if line else ""
            info.platform_evidence = (f"the failing kernel {failing_kernel}{where}: "
                                      f"{h.why or 'a ' + h.platform + '-only name'}")
            return


def _span(releases) -> str:
    """``a`` or ``a .. b``: the first and last of the shipped ladder releases (sorted as shipped)."""
    rs = [str(r) for r in releases]
    return rs[0] if len(rs) == 1 else f"{rs[0]} .. {rs[-1]}"
