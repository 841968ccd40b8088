"""Findings and selections inferred from the machine a run is judged against.

The machine is ``--gpu`` (with ``--cuda``), else the GPU / compute capability the log names.
Against it: the pack's ``[arch_check]`` (a build whose compiled archs lack the device's
family), ``[[walk]]`` (the kernel of a layer family the engine does not log, from a certain
ladder walk) and UNEXPECTED_FALLBACK (a better rung above the observed one suits the GPU).
``ctx`` is the ``Analyzer`` (its packs, rules, ladders, ``gpu`` and ``cuda``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import regex

from .. import rxcache
from ..models import CostClass, RunConfig, Selection
from ..packs.loader import Pack
from .archs import check_compiled, parse_cc, parse_compiled
from .runstate import RunState

if TYPE_CHECKING:
    from .analyzer import Analyzer


#: rule kinds every pack holds in the same generic shape (``patterns/<engine>/rules/99-uncaught.toml``:
#: a traceback line, the server came up, start-up progress): which pack's rule read such a line
#: says nothing of the line, only which engine the matcher knew of then
_GENERIC_KINDS = frozenset({"uncaught", "ready", "progress", "stop"})


def settle_engine(ctx: Analyzer, run: RunState) -> None:
    """Give the run's generic lines (``_GENERIC_KINDS``) read by another engine's rule, before the
    matcher knew the run's engine, the run's own engine's rule: the first rule of that kind in
    the run's pack (pack order, its ``levels`` respected) that reads the line's message. A line
    no such rule reads keeps its rule. Mutates ``run.events`` (copies of the events replace
    them); raises nothing (a regex timeout keeps the rule).

    vllm-029: ``Traceback (most recent call last):`` comes before the first ``.../vllm/...``
    frame that names vLLM, so every pack's traceback rule could read it and llama.cpp's (first by
    pack order) did; the run is vLLM's and so is its failed start's rule."""
    own = None
    for i, ev in enumerate(run.events):
        cr, pack = ctx.rules[ev.rule]
        if pack.engine == run.engine or cr.rule.kind not in _GENERIC_KINDS:
            continue
        if own is None:
            home = ctx.packs.packs.get(run.engine)
            own = [c for c in home.rules if c.rule.kind in _GENERIC_KINDS] if home is not None else []
        for c in own:
            r = c.rule
            if r.kind != cr.rule.kind or (r.levels and ev.level and ev.level.lower() not in r.levels):
                continue
            try:
                m = c.regex.search(ev.message, timeout=0.05)
            except TimeoutError:
                continue
            if m:
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                run.events[i] = ev.model_copy(update={"rule": r.id, "groups": groups})
                break


def fact(run: RunState, name: str) -> Optional[str]:
    """Run fact ``name``: a ``RunConfig`` field, else ``config.extra[name]`` (None when not logged)."""
    c = run.config
    return getattr(c, name, None) if name in RunConfig.model_fields and name != "extra" else c.extra.get(name)


def arch_check(ctx: Analyzer, run: RunState, pack: Pack, add_finding, present: frozenset[str] = frozenset()) -> None:
    """Pack ``[arch_check]``: flag a build whose compiled archs lack the device's family.

    Not raised when a line already states a parent of its code (``present``): the fatal
    ``UNSUPPORTED_ON_ARCH`` line says more than the inference from the arch list.
    """
    ac = pack.meta.arch_check
    if ac is None or present.intersection(ctx.packs.findings.lineage(ac.finding)[1:]):
        return
    device = parse_cc(fact(run, ac.device_fact))
    compiled = parse_compiled(fact(run, ac.compiled_fact) or "", ac.compiled_scale)
    if device is None or not compiled:
        return
    verdict = check_compiled(device, compiled)
    if verdict.family_compiled:
        return
    ev = next((e for e in reversed(run.events)
               if ac.compiled_fact in ctx.rules[e.rule][0].rule.sets), run.events[-1])
    # nothing at or below the device: no device code at all (a refusal); an older family only: its
    # PTX may run, JIT-compiled (pack ``older_family_finding``, no refusal of its own)
    code = ac.older_family_finding if verdict.runs is not None and ac.older_family_finding else ac.finding
    add_finding(code, ev, ev.rule, reasons=[verdict.reason], inferred=True, basis="compiled_archs")


#: the GPU platforms whose devices have a compute capability (patterns/gpus.toml): a GPU of one judged
#: on the other's ladder is a contradiction, not a machine
_GPU_VENDORS = frozenset({"CUDA", "ROCM"})


def judged_machine(ctx: Analyzer, run: RunState):
    """The machine the run is judged against: ``--gpu``, else the GPU / capability the log names,
    else a platform without compute capability the log names (``patterns/gpus.toml``
    ``[platform.*]``: HPU). A GPU of the other vendor than the log's platform (or the log's own
    GPU) is not the run's machine: it is skipped and said (run fact ``gpu_contradicted``).
    Returns ``(Machine, "given" | "log")`` or ``(None, None)``."""
    from .gates import Machine
    from .gpus import platform_without_cc, resolve_gpu, resolve_logged_gpu

    logged = resolve_logged_gpu(run.config.gpu)
    log_platform = run.platform or (logged.platform if logged is not None else None)
    for text, origin in _machine_texts(ctx, run):
        # the log's own spelling may carry ``_`` for spaces (``device_name=NVIDIA_A100-SXM4-80GB``)
        g = (resolve_gpu(text) if origin == "given" else resolve_logged_gpu(text)) if text else None
        if g is not None and g.cc is not None:
            if log_platform in _GPU_VENDORS and g.platform in _GPU_VENDORS and g.platform != log_platform:
                # an AMD GPU for a CUDA run (or the reverse): the log is the evidence, so this GPU
                # is not the run's machine (--gpu MI300X on a CUDA log was judged as "sm94" on the
                # CUDA ladder); the log's own GPU, if any, is tried next
                run.config.extra.setdefault("gpu_contradicted", (
                    f"{g.name} is a {g.platform} GPU and the log is a {log_platform} run: "
                    f"the run is not judged on {g.name}"))
                continue
            # the GPU's own platform when the log names none (an MI300X is ROCm, judged by its gfx)
            plat = run.platform or g.platform
            return Machine(platform=plat, cc=g.cc, gpu=g.name, cuda=ctx.cuda,
                           gfx=g.gfx if plat == "ROCM" else None), origin
        if g is not None and platform_without_cc(g.platform):  # gpus.toml [platform.*]: its branch is the platform's
            return Machine(platform=g.platform, gpu=g.name), origin
    plat = platform_without_cc(run.platform)  # the log's own lines name such a platform (TGI Gaudi)
    if plat is not None:
        return Machine(platform=run.platform, gpu=plat.device or run.platform), "log"
    return None, None


def _machine_texts(ctx: Analyzer, run: RunState) -> tuple[tuple[Optional[str], str], ...]:
    """What ``judged_machine`` tries, in order: ``--gpu``, then the engine's own statements (its
    GPU name, its compute capability, the one capability of every device it names), then a GPU only
    a tool's or wrapper's line named (``gpu_source``), left out when the lines name GPUs of
    different kinds (``gpu_source.weak_blocked``)."""
    from .gpu_source import ONE_OF_CC, SOURCE, weak_blocked

    c = run.config
    one_of = c.extra.get(ONE_OF_CC)
    if not c.extra.get(SOURCE) or run.platform == "ROCM":
        # (on ROCm a logged "compute capability" is HIP's major.minor, gfx942 = 9.4, no CUDA sm:
        # the GPU's name, even a tool's, says more)
        return (ctx.gpu, "given"), (c.gpu, "log"), (c.compute_capability, "log"), (one_of, "log")
    weak = None if weak_blocked(c.extra) else c.gpu
    return (ctx.gpu, "given"), (c.compute_capability, "log"), (one_of, "log"), (weak, "log")


def note_unknown_gpu(ctx: Analyzer, run: RunState, origin: Optional[str]) -> None:
    """Run fact ``gpu_unknown`` when the log names a GPU ``patterns/gpus.toml`` does not know and
    nothing else gives the run a machine (no ``--gpu``, no logged compute capability, no platform
    without one): the report then says the name was not understood, instead of a capability being
    guessed from a near name (fail closed; ``NVIDIA_RTX_6000D`` is neither an RTX 6000 Ada nor an RTX
    PRO 6000)."""
    from .gpus import resolve_logged_gpu

    name = run.config.gpu
    if not name or origin is not None or run.config.compute_capability or run.platform not in (None, "CUDA", "ROCM"):
        return  # a TPU / Gaudi / Metal run: no compute capability to judge it by
    if resolve_logged_gpu(name) is None:
        run.config.extra["gpu_unknown"] = (f"{name} is not in logscan's GPU table: no compute capability is "
                                           f"guessed from its name (scan --gpu tells it)")


def note_given_gpu(run: RunState, machine, origin: Optional[str]) -> None:
    """Run fact ``gpu_given`` when ``--gpu`` decided the machine the run is judged on
    (``machine`` from ``judged_machine``, origin ``given``): the report then names it, e.g.
    "H100 (sm90), given by --gpu", and says when the log names another GPU, so a finding or a
    PASS judged on the operator's word is never read as the log's."""
    if origin != "given" or machine is None:
        return
    text = f"{machine.gpu} ({where(machine)}), given by --gpu: the run is judged on it"
    logged = run.config.gpu or (f"sm{run.config.compute_capability}".replace(".", "")
                                if run.config.compute_capability else None)
    if logged:
        from .gpus import resolve_logged_gpu
        g = resolve_logged_gpu(logged)
        if g is None or not same_gpu(g, machine):
            text += f"; the log names {logged}"
    run.config.extra["gpu_given"] = text


def same_gpu(g, machine) -> bool:
    """Whether a logged GPU (``resolve_logged_gpu``) is the ``--gpu`` machine: the same table entry,
    or on ROCm the same gfx target (patterns/gpus.toml names one part by its marketing name and its
    arch: ``Radeon 8060S Graphics`` in a llama.cpp ROCm device line is ``gfx1151``, Strix Halo;
    rocm36 trial, fixtures/llamacpp/llamacpp-246)."""
    if g.name == machine.gpu:
        return True
    return bool(machine.gfx and g.gfx and g.platform == "ROCM" and g.gfx == machine.gfx)


def disabled_kernels(run: RunState) -> dict[str, str]:
    """Kernel classes the log's own environment disabled: run fact ``disabled_kernels`` (a
    comma-separated list as the engine reads it) -> the switch that holds it (fact
    ``disabled_kernels_switch``, the rule's words, e.g. ``VLLM_DISABLED_KERNELS``). Empty when
    the log sets none."""
    from .switches import listed_kernels

    extra = run.config.extra
    return listed_kernels(extra.get("disabled_kernels") or "", extra.get("disabled_kernels_switch") or "an environment switch")


def where(machine) -> str:
    """``sm90`` for a CUDA GPU, ``gfx942`` for a ROCm one whose arch is known, else its platform
    (``HPU``): how reasons name the machine."""
    if machine.platform == "ROCM" and getattr(machine, "gfx", None):
        return machine.gfx
    return f"sm{machine.cc}" if machine.cc is not None else (machine.platform or "platform unknown")


def set_compiled_builds(machine, run: RunState, pack: Pack) -> None:
    """Set ``machine.builds`` (a ``Machine``) from the build's compiled arch list when the run
    logs it (pack ``[arch_check] build_flags``: flag -> its compute-capability range): then the
    build's flags are known, a closed world. Leaves ``builds`` as it is when nothing is logged."""
    ac = pack.meta.arch_check
    if ac is not None and ac.build_flags:
        compiled = parse_compiled(fact(run, ac.compiled_fact) or "", ac.compiled_scale)
        if compiled:
            machine.builds = frozenset(f for f, (lo, hi) in ac.build_flags.items()
                                       if any(lo <= c < hi for c in compiled))


def walk_doubt(run: RunState, w) -> Optional[str]:
    """Why the ``[[walk]]`` ``w`` is not certain for this run, None when nothing says so: devices of
    different archs (``devices_mixed``: the walk is for one machine, and each device takes its own
    path), or a fact of the walk's ``unless_facts`` the log states."""
    extra = run.config.extra
    if extra.get("devices_mixed"):
        return (f"the log names devices of different archs ({extra['devices_mixed']}); the engine picks "
                f"the path per device, so the first device's GPU does not stand for every layer")
    for key, why in w.unless_facts.items():
        if extra.get(key):
            return f"the log states {key}: {extra[key]}; {why}"
    return None


def walk_selections(ctx: Analyzer, run: RunState, pack: Pack, have: list[Selection]) -> list[Selection]:
    """Pack ``[[walk]]``: the kernel of an unlogged layer family, from a certain ladder walk (inferred)."""
    if not pack.meta.walk or not run.config.quantization:
        return []
    machine, origin = judged_machine(ctx, run)
    if machine is None:
        return []
    machine.env.update(run.config.extra)  # switches the log states (e.g. GGML_CUDA_FORCE_CUBLAS)
    set_compiled_builds(machine, run, pack)
    from .predict import SchemeError, walk

    out = []
    families = {s.family for s in have}
    for w in pack.meta.walk:
        if w.family in families or not rxcache.search(w.quantization, run.config.quantization):
            continue
        if w.needs_logged_platform and not run.platform:
            run.config.extra.setdefault("walk_skipped", (
                f"{pack.engine} does not log its matmul path, and the log names no platform (no device or "
                f"offload line): no kernel is inferred for {w.family} from the GPU alone"))
            continue
        why = walk_doubt(run, w)
        if why:
            run.config.extra.setdefault("walk_skipped", f"no kernel is inferred for {w.family}: {why}")
            continue
        try:
            res = walk(ctx.packs, pack.engine, w.scheme, machine)
        except SchemeError:
            continue
        if not res.predicted or not res.certain:
            continue
        src = "--gpu" if origin == "given" else "the log"
        builds = ("compiled archs from the log" if machine.builds is not None else "build flags not in the log")
        idx = ctx.ladders.get(pack.engine)
        placement = idx.place(res.ladder_version, res.predicted, "^" + regex.escape(res.role or "") + "$",
                              run.platform) if idx else None
        out.append(Selection(
            ladder=placement.position if placement else None,
            family=w.family, kernel=res.predicted, cost_class=CostClass(res.predicted_cost_class or "unknown"),
            scheme=res.scheme_title, observed=False, line=run.first_line, rule=f"{pack.engine}.walk.{w.scheme.lower()}",
            evidence=f"quantization {run.config.quantization}; {machine.gpu} ({where(machine)}, from {src})",
            reasoning=(f"inferred: {pack.engine} does not log its matmul path; walking {res.registry} "
                       f"({res.ladder_version}) for {where(machine)} ({builds}) the first rung that passes is "
                       f"{res.predicted}, and every rung above it fails"),
        ))
    return out


def expected_rungs(ctx: Analyzer, run: RunState, pack: Pack, sels: dict, add_finding, machine, origin,
                   info) -> None:
    """Judge each better rung an observed selection fell below (``fallback.judge_above``) on the
    run's known facts (``machine``, ``origin``: ``fallback.run_machine``; ``info``: the run's
    ``EngineInfo``, whose release may leave a rung undecided): UNEXPECTED_FALLBACK when every
    need of one is met; the undecided ones go to ``LadderPosition.undecided`` (UNEXPLAINED).
    GPU_CONTRADICTS_LOG for a logged kernel the ``--gpu`` one cannot run; BELOW_HARDWARE_FLOOR
    (``floors.below_floor``) for one below its hardware floor that a known gate miss selects."""
    from .fallback import judge_above, release_need
    from .floors import below_floor

    off = disabled_kernels(run)
    for s in sels.values():
        sel = s.selection
        pos = sel.ladder
        if pos is None or pos.ladder_version not in pack.ladders:
            continue
        if sel.observed and origin == "given":
            contradicted(ctx, run, pack, sel, machine, add_finding)
        if sel.observed:  # a GPU known to lack the native compute the logged rung needs
            below_floor(run, pack, info, sel, machine, origin, add_finding)
        if pos.rung <= 1 or not pos.above:
            continue
        ladder = pack.ladders[pos.ladder_version]
        reg = next((r for r in ladder.registry if r.name == pos.registry), None)
        if reg is None:
            continue
        met, pos.undecided = judge_above(ladder, reg, pos, machine, origin, off, release_need(info, pos),
                                         (run.config.dtype or "").replace("torch.", "").lower() or None)
        if not met:
            continue
        ev = next((e for e in run.events if e.line == sel.line), run.events[0])
        src = "--gpu" if origin == "given" else "the log"
        reasons = [f"{machine.gpu} ({where(machine)}, from {src}) can take rung {k.rung} {k.kernel} ({k.cost_class}); "
                   f"the log shows rung {pos.rung} {sel.kernel} ({sel.cost_class.value}). Every need of it is met "
                   f"by what the run states: {k.needs}" for k in met]
        add_finding("UNEXPECTED_FALLBACK", ev, sel.rule, kernel=sel.kernel, reasons=reasons, inferred=True,
                    basis="ladder", family=sel.family,
                    title=f"{sel.kernel} ({sel.family}) is below what {where(machine)} should reach: "
                          f"{met[0].kernel} ({met[0].cost_class})")


def contradicted(ctx: Analyzer, run: RunState, pack: Pack, sel: Selection, machine, add_finding) -> None:
    """GPU_CONTRADICTS_LOG when the log shows a kernel whose own rung needs a newer GPU than the
    ``--gpu`` one: a capability term of the rung's gate (as ``ladder`` walks it: the planning
    overlay's terms, ``overlay.rung_terms``) whose floor is above the given compute capability,
    e.g. SGLang's DeepGEMM (``dispatch_w8a8_block_fp8_linear`` rung 1, "sm90 or newer",
    patterns/planning/sglang.toml) seen with ``--gpu T4`` (sm75).

    Only a floor counts: an exact-arch term failing on a NEWER GPU is no proof, because one
    logged name can stand for per-arch variants the ladder's aliases do not tell apart (vLLM
    0.10.2 prints "FlashInfer MXFP4 BF16" for both SM90_FI_MXFP4_BF16 and SM100_FI_MXFP4_BF16);
    alternatives (``any_of``) and non-CUDA machines are not judged. Only for ``--gpu``: a GPU
    the log names is the log's own word. The log is the evidence, so ``--gpu`` is probably not
    the GPU the log came from, and what was inferred from it (UNEXPECTED_FALLBACK, walked kernels)
    rests on the wrong machine."""
    from .gates import lowest_capability
    from .overlay import rung_terms
    from .words import term_words

    pos = sel.ladder
    if machine.cc is None or pos is None or machine.platform != "CUDA" or pos.platform not in ("CUDA", "ANY"):
        return
    ladder = pack.ladders[pos.ladder_version]
    reg = next((r for r in ladder.registry if r.name == pos.registry), None)
    from .logged_ladder import rung_names

    names = rung_names(reg, pos) if reg is not None else []
    if not 1 <= pos.rung <= len(names):
        return
    terms, _, _ = rung_terms(ladder, reg, names[pos.rung - 1])
    # a hardware floor (analysis/floors.py) is no engine gate: an engine whose own gate misses it
    # selects and logs the kernel on an older GPU (vLLM 0.29.0-0.32.0 logs "Selected
    # CutlassFP8ScaledMMLinearKernel" on an A100, then fails: vllm-project/vllm#55008)
    above = [t for t in terms if not t.floor and (not t.only_on or "CUDA" in t.only_on)
             and (f := lowest_capability(t)) is not None and machine.cc < f]
    if not above:
        return
    why = "; ".join(term_words(t) for t in above)
    ev = next((e for e in run.events if e.line == sel.line), run.events[0])
    add_finding("GPU_CONTRADICTS_LOG", ev, sel.rule, kernel=sel.kernel, inferred=True, basis="ladder",
                family=sel.family,
                reasons=[f"the log shows {sel.kernel} (rung {pos.rung}/{pos.rungs} of {pos.registry}, {pos.platform}, "
                         f"{sel.ladder.ladder_version}), whose gate needs {why}: {machine.gpu} ({where(machine)}, "
                         f"from --gpu) is older",
                         "the log is the evidence: --gpu is probably not the GPU this log came from, and what "
                         "was inferred from --gpu for this run rests on a machine the log contradicts"],
                title=f"--gpu {machine.gpu} ({where(machine)}) cannot run {sel.kernel}, which the log shows")


def why_cost(placement, lk, cost: CostClass, reasoning: Optional[str], title: str = "vLLM") -> list[str]:
    """The reasoning behind an inferred cost-class finding: the rung and the env that decides it.

    ``title``: how the report names the engine whose ladder holds the rung."""
    if placement is None:
        return [reasoning] if reasoning else []
    from .logged_ladder import logged_list_words

    p = placement.position
    on = (f"{logged_list_words(p.logged_line)} (its rungs' classes: {p.registry}" if p.logged_list
          else f"{p.registry} ({p.platform}")
    out = [f"inferred: {p.kernel_class} is rung {p.rung}/{p.rungs} of {on}, "
           f"{title} {p.ladder_version}), whose cost class for this scheme is {cost.value}"]
    cls = p.kernel_class.lower()
    for name, default in sorted((lk.env if lk is not None else {}).items()):
        # only a variable named after this kernel (VLLM_MXFP8_EMULATION_... for EmulationMxfp8...)
        if sum(1 for w in name.lower().split("_") if len(w) >= 3 and w not in ("vllm", "use") and w in cls) >= 2:
            out.append(f"{name} (default {default}) is read by this kernel's module and decides it")
    return out
