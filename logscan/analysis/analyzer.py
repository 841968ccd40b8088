"""Turn recognised events into runs: selections on their ladders, findings, engine facts.

Fed event by event (``Analyzer.feed``), so the same analysis serves a whole file (``scan``)
and a stream that never ends (``follow``). What is engine knowledge stays in the packs:
a rule says which layer family and registry a line speaks of, which cost class or finding
the line states and which run facts it sets; the ladders give rung and cost class; the
pack's ``name_cost`` table classes names that no shipped ladder holds.
"""
from __future__ import annotations

import copy

from dataclasses import dataclass, field
from typing import Iterator, Optional

import regex
from packaging.version import InvalidVersion, Version

from ..formats.clip import clip
from ..models import (COST_ORDER, AttentionChoice, CostClass, EngineInfo, Event, Finding, KvCache, Run,
                      RunConfig, Selection, Severity, StartFailure)
from ..packs.loader import CompiledRule, Pack, PackSet
from ..sources.safe import bounded_int
from .archs import check_compiled, parse_cc, parse_compiled
from .era import EraHint, infer_release
from .ladders import LadderIndex, norm, parse_version
from .infer import apply_server_args, infer_selections, server_args_config
from .lexicon import classify, normalise
from .trust import judge, unexplained

_KV = regex.compile(r"(?P<k>\w+)=(?P<v>'[^']*'|\"[^\"]*\"|[^,]*)")
_DICT_KV = regex.compile(r"'(?P<k>\w+)':\s*(?P<v>'[^']*'|\"[^\"]*\"|[^,}]*)")
_FIELD = regex.compile(r"\{(\w+)\}")
_LIST_ITEM = regex.compile(r"[\w.\-/]{1,80}")

#: Platforms that have their own ladders (registry platform keys other than these are branch labels).
PLATFORMS = ("CUDA", "ROCM", "XPU", "CPU", "TPU")

def kv_same(asked: str, used: str, aliases: Optional[dict[str, str]] = None) -> bool:
    """Whether two KV-cache dtype spellings can be the same storage (``aliases``: the pack's
    ``kv_dtype_aliases``, spelling -> canonical name).

    A bare ``fp8`` matches any FP8 variant: vLLM 0.5.5 -> 0.18.1 prints the fixed text "Using
    fp8 data type to store kv cache" whichever of e4m3 / e5m2 was asked (config/cache.py).
    """
    a, b = kv_norm(asked, aliases), kv_norm(used, aliases)
    if a == b:
        return True
    bare = {x.strip().strip("'\"").lower() for x in (asked, used)}
    return "fp8" in bare and a.startswith("fp8") and b.startswith("fp8")


def kv_norm(dtype: str, aliases: Optional[dict[str, str]] = None) -> str:
    """Canonical KV-cache dtype name through the pack's aliases (vLLM: ``fp8`` -> ``fp8_e4m3``), ``torch.`` dropped."""
    d = dtype.strip().strip("'\"").lower().replace("torch.", "")
    return (aliases or {}).get(d, d)

def candidate_releases(pack: Pack) -> list[str]:
    """Releases version inference may pick for ``pack``: its ``releases`` list and its shipped ladders'."""
    return sorted(set(pack.meta.pack.releases) | set(pack.ladders), key=_release_order)


def _release_order(release: str):
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, Version("0"))


def fill(template: str, groups: dict[str, str]) -> str:
    """Replace ``{name}`` by the named group's text (empty when the group did not match)."""
    return _FIELD.sub(lambda m: groups.get(m.group(1), ""), template)


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


@dataclass
class _Sel:
    selection: Selection
    ranks: set[str] = field(default_factory=set)
    #: the explicit ranks that printed it, or ``main`` for a line without one
    printers: set[str] = field(default_factory=set)
    events: list[Event] = field(default_factory=list)


@dataclass
class _RunState:
    index: int
    source: str
    first_line: int
    last_line: int
    engine: str
    version: Optional[str] = None
    version_line: Optional[int] = None
    config: RunConfig = field(default_factory=RunConfig)
    platform: Optional[str] = None
    platform_line: Optional[int] = None
    era: list[str] = field(default_factory=list)  #: releases an inferred version ranges over
    kv_requested_line: Optional[int] = None
    kv_used: Optional[tuple[str, Event]] = None
    attention: list[tuple[str, Event]] = field(default_factory=list)
    rules_seen: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    started: bool = False
    engine_sure: bool = False  #: a line of the run named its engine (prefix, start marker, identity rule)
    identified_by: Optional[str] = None  #: the first line that named the engine, in prose


class Analyzer:
    """Builds ``Run`` objects from a stream of events of one or more inputs.

    ``feed(event)`` returns the runs that closed because a new engine start began;
    ``finish()`` returns the rest. Per-run memory is bounded by the number of recognised
    lines of that run, which is small (kernel lines are printed once per layer family).
    """

    def __init__(self, packs: PackSet, prefix_formats: Optional[dict[str, int]] = None,
                 gpu: Optional[str] = None, cuda: Optional[str] = None,
                 engine_version: Optional[dict[str, str]] = None):
        self.packs = packs
        #: ``--gpu`` / ``--cuda``: used only to infer what a log does not say (never shown as observed)
        self.gpu, self.cuda = gpu, cuda
        #: ``--engine-version``: engine -> shipped release, for runs that log no release number
        self.engine_version = dict(engine_version or {})
        self.rules: dict[str, tuple[CompiledRule, Pack]] = {}
        for pack in packs.packs.values():
            for cr in pack.rules:
                self.rules[cr.rule.id] = (cr, pack)
        self.ladders = {name: LadderIndex(p) for name, p in packs.packs.items()}
        self.prefix_formats = prefix_formats if prefix_formats is not None else {}
        self._run: Optional[_RunState] = None
        self._count = 0
        self.max_events_per_run = 10_000

    # -- feeding -------------------------------------------------------------------------
    def feed(self, ev: Event, prefix_engine: Optional[str] = None,
             context_engine: Optional[str] = None) -> Iterator[Run]:
        """Add one event; yields a finished run when this event starts a new one.

        ``prefix_engine`` / ``context_engine``: ``Matcher.engine_hint`` of the event (which
        engine's line prefix it carried, or followed); None when unknown.
        """
        cr, pack = self.rules[ev.rule]
        r = cr.rule
        run = self._run
        if r.kind == "identity":
            yield from self._identify(ev, pack, run)
            return
        engine, sure = self._engine_of(prefix_engine, context_engine, pack.engine, r.starts_run, run, ev.source)
        if run is not None and run.source == ev.source and run.engine != engine and sure and not run.engine_sure:
            run.engine = engine  # the run began on lines that named no engine: now one does
        if run is not None and (run.source != ev.source or run.engine != engine or
                                (r.starts_run and run.started and self._has_substance(run))):
            yield self._close(run)
            run = None
        if run is None:
            run = self._run = _RunState(index=self._count, source=ev.source, first_line=ev.line,
                                        last_line=ev.line, engine=engine)
            self._count += 1
        if sure and not run.engine_sure:
            run.engine_sure = True
            run.identified_by = self._why_engine(ev, prefix_engine, context_engine, r)
        run.last_line = max(run.last_line, ev.line)
        if r.starts_run:
            run.started = True
        if r.id not in run.rules_seen:
            run.rules_seen.append(r.id)
        if len(run.events) < self.max_events_per_run:
            run.events.append(ev)
        for key, tmpl in r.sets.items():
            self._set(run, key, fill(tmpl, ev.groups), ev)

    def _identify(self, ev: Event, pack: Pack, run: Optional[_RunState]) -> Iterator[Run]:
        """An ``identity`` rule's event: evidence that the lines are ``pack``'s engine.

        It names the engine of an open run that no line named yet (a paste of traceback
        lines), or opens a run of that engine; a run whose engine is already named keeps it
        (SGLang imports vLLM modules, so a vLLM path in an SGLang traceback is no new run).
        """
        why = f"line {ev.line}: {self.rules[ev.rule][0].rule.description or ev.rule}"
        if run is not None and run.source != ev.source:
            yield self._close(run)
            run = self._run = None
        if run is None:
            run = self._run = _RunState(index=self._count, source=ev.source, first_line=ev.line,
                                        last_line=ev.line, engine=pack.engine)
            self._count += 1
        if not run.engine_sure:
            run.engine, run.engine_sure, run.identified_by = pack.engine, True, why
        run.last_line = max(run.last_line, ev.line)

    def _why_engine(self, ev: Event, prefix_engine: Optional[str], context_engine: Optional[str], r) -> str:
        """In prose, why an event names its run's engine (``EngineInfo.identified_by``)."""
        if prefix_engine:
            title = self.packs.packs[prefix_engine].meta.pack.title or prefix_engine
            return f"line {ev.line} carries the {title} line prefix"
        if r.starts_run:
            return f"line {ev.line}: {r.description or r.id}"
        return f"line {ev.line} follows a line with the {context_engine} line prefix"

    @staticmethod
    def _engine_of(prefix_engine: Optional[str], context_engine: Optional[str], rule_engine: str,
                   starts_run: bool, run: Optional[_RunState], source: str) -> tuple[str, bool]:
        """Which engine an event belongs to, and whether the line itself says so.

        A line carrying an engine's prefix, or a start marker, names its engine. An
        unprefixed line (a traceback tail, a generic Triton/ptxas error) recognised by
        another pack's rule belongs to the open run, else to the engine of the last
        prefixed line, else (unsure) to the rule's engine.
        """
        if prefix_engine:
            return prefix_engine, True
        if starts_run:
            return rule_engine, True
        if run is not None and run.source == source:
            return run.engine, False
        return context_engine or rule_engine, context_engine is not None

    @staticmethod
    def _has_substance(run: _RunState) -> bool:
        return any(e.kind not in ("version", "config", "platform") for e in run.events)

    def finish(self) -> Iterator[Run]:
        """Close the open run at the end of the input(s)."""
        if self._run is not None:
            yield self._close(self._run)
            self._run = None

    def peek(self) -> Optional[Run]:
        """The open run as it would close now, without closing it (None when no run is open).

        Lets a stream that never ends (``logscan follow``) report selections and findings as
        they appear; the run goes on receiving events afterwards. ``_close`` may settle facts
        on the run state (e.g. an inferred platform), so it works on a deep copy: looking must
        not change what the run becomes.
        """
        return self._close(copy.deepcopy(self._run)) if self._run is not None else None

    # -- run facts -----------------------------------------------------------------------
    def _set(self, run: _RunState, key: str, value: str, ev: Event) -> None:
        if not value:
            return
        c = run.config
        if key == "version":
            if run.version is None:
                run.version, run.version_line = value, ev.line
        elif key == "platform":
            run.platform = value.upper()
            run.platform_line = ev.line
        elif key == "kv_cache_dtype_used":
            run.kv_used = (value, ev)
        elif key == "attention_backend":
            if len(run.attention) < 256:
                run.attention.append((value, ev))
        elif key == "model":
            c.model = c.model or value
        elif key == "quantization":
            c.quantization = c.quantization or value
        elif key == "kv_cache_dtype":
            if not c.kv_cache_dtype:
                c.kv_cache_dtype, run.kv_requested_line = value, ev.line
        elif key == "compute_capability":
            c.compute_capability = c.compute_capability or value
        elif key == "gpu":
            c.gpu = c.gpu or value
        elif key == "server_args":
            if c.server_args is None:
                c.server_args = server_args_config(value, ev.line)
                apply_server_args(c, run, c.server_args)
        elif key in ("config", "args"):
            pat = _KV if key == "config" else _DICT_KV
            for m in pat.finditer(value):
                k, v = m.group("k"), _unquote(m.group("v"))
                if k == "model" and v:
                    c.model = c.model or v
                elif k == "quantization" and v and v != "None":
                    c.quantization = c.quantization or v
                elif k == "dtype":
                    c.dtype = c.dtype or v.replace("torch.", "")
                elif k == "kv_cache_dtype":
                    if not c.kv_cache_dtype and v:
                        c.kv_cache_dtype, run.kv_requested_line = v, ev.line
                elif k == "tensor_parallel_size" and bounded_int(v, 6):
                    c.tensor_parallel_size = c.tensor_parallel_size or bounded_int(v, 6)
                elif k in ("device", "device_config") and regex.fullmatch(r"[A-Za-z]{2,10}", v or "") and v != "auto":
                    if not run.platform:
                        run.platform, run.platform_line = v.upper(), ev.line
                elif k in ("moe_backend", "linear_backend", "attention_backend", "enforce_eager", "max_model_len"):
                    c.extra.setdefault(k, v)
        else:
            c.extra.setdefault(key, value)

    # -- version ---------------------------------------------------------------------------
    def _kernel_of(self, cr: CompiledRule, ev: Event) -> Optional[str]:
        r = cr.rule
        kernel = fill(r.kernel, ev.groups) if r.kernel else ev.groups.get("kernel")
        kernel = kernel.strip() if kernel else None
        return kernel or None

    def _era_hints(self, run: _RunState) -> list[EraHint]:
        """Era evidence of a run: rule ``versions``, line-format ``versions``, kernel classes on ladders."""
        hints: list[EraHint] = []
        for rid in run.rules_seen:
            cr, _ = self.rules[rid]
            if cr.versions is not None:
                hints.append(EraHint.from_spec(f"{rid} ({cr.rule.versions})", cr.versions))
        for pack in self.packs.packs.values():
            if pack.engine != run.engine:
                continue
            for pf in pack.prefixes + pack.processes:
                if pf.versions is not None and self.prefix_formats.get(pf.spec.id):
                    hints.append(EraHint.from_spec(f"line format {pf.spec.id} ({pf.spec.versions})", pf.versions))
        hints += self._template_hints(run)
        idx = self.ladders.get(run.engine)
        if idx is not None:
            seen: set[str] = set()
            for ev in run.events:
                cr, _ = self.rules[ev.rule]
                if not cr.rule.family:
                    continue
                kernel = self._kernel_of(cr, ev)
                if not kernel or norm(kernel) in seen:
                    continue
                seen.add(norm(kernel))
                rels = idx.releases_holding_class(kernel)
                if rels and len(rels) < len(idx.releases):
                    lo, hi = min(rels, key=Version), max(rels, key=Version)
                    span = lo if lo == hi else f"{lo} .. {hi}"
                    hints.append(EraHint.from_releases(f"kernel class {kernel} (on the ladders of {span})",
                                                       frozenset(rels)))
        return hints

    def _template_hints(self, run: _RunState) -> list[EraHint]:
        """Era hints from the template history (see ``template_era.template_hints``)."""
        from .template_era import template_hints

        pack = self.packs.packs[run.engine]
        return template_hints(self.packs, pack, [ev.message for ev in run.events], candidate_releases(pack))

    def _engine_info(self, run: _RunState) -> EngineInfo:
        idx = self.ladders.get(run.engine)
        title = self.packs.packs[run.engine].meta.pack.title or run.engine
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
        elif run.engine in self.engine_version:
            info.version, info.version_source = self.engine_version[run.engine], "given"
            info.version_evidence = "--engine-version" + (f" (the log says {run.version!r})" if run.version else "")
            v = parse_version(info.version)
        else:
            guess = infer_release(self._era_hints(run), candidate_releases(self.packs.packs[run.engine]))
            if run.version:
                info.version = run.version
            if guess is not None:
                info.version_source = "inferred"
                prefix = f"logged as {run.version!r} (a source build); " if run.version else ""
                info.version_evidence = prefix + guess.describe()
                info.release_range = [guess.releases[0], guess.releases[-1]]
                v = Version(guess.newest)
                run.era = list(guess.releases)
            elif run.version:
                info.version_source = "logged"
                info.version_evidence = f"line {run.version_line}" + (
                    "; not a release number, so the newest shipped ladder is used"
                    if idx is not None and idx.releases else "")
        if idx is not None:
            info.ladder_version = idx.pick_release(v)
            if (info.version_source == "logged" and v is not None and info.ladder_version
                    and idx.exact(str(v)) is None):  # never round a release silently
                info.version_evidence = (f"{info.version_evidence}; {info.version} has no shipped ladder, so its "
                                         f"rungs are those of {info.ladder_version}, the newest older release")
        return info

    # -- compiled architectures ----------------------------------------------------------
    def _fact(self, run: _RunState, name: str) -> Optional[str]:
        c = run.config
        return getattr(c, name, None) if name in RunConfig.model_fields and name != "extra" else c.extra.get(name)

    def _arch_check(self, run: _RunState, pack: Pack, add_finding, present: frozenset[str] = frozenset()) -> None:
        """Pack ``[arch_check]``: flag a build whose compiled archs lack the device's family.

        Not raised when a line already states a parent of its code (``present``): the fatal
        ``UNSUPPORTED_ON_ARCH`` line says more than the inference from the arch list.
        """
        ac = pack.meta.arch_check
        if ac is None or present.intersection(self.packs.findings.lineage(ac.finding)[1:]):
            return
        device = parse_cc(self._fact(run, ac.device_fact))
        compiled = parse_compiled(self._fact(run, ac.compiled_fact) or "", ac.compiled_scale)
        if device is None or not compiled:
            return
        verdict = check_compiled(device, compiled)
        if verdict.family_compiled:
            return
        ev = next((e for e in reversed(run.events)
                   if ac.compiled_fact in self.rules[e.rule][0].rule.sets), run.events[-1])
        add_finding(ac.finding, ev, ev.rule, reasons=[verdict.reason], inferred=True, basis="compiled_archs")

    def _infer_platform(self, run: _RunState, info: EngineInfo, pack: Pack) -> None:
        """No platform line: infer it from names only one platform has (ladders, pack hints)."""
        if run.platform:
            return
        idx = self.ladders.get(run.engine)
        votes: dict[str, list[str]] = {}
        names: dict[str, bool] = {}  # name -> is it a selection (placed on a ladder)
        for ev in run.events:
            cr, _ = self.rules[ev.rule]
            if cr.rule.family or cr.rule.finding:
                k = self._kernel_of(cr, ev)
                if k:
                    names[k] = names.get(k, False) or bool(cr.rule.family)
        for name, _ in run.attention:
            names.setdefault(name, False)
        for name, selected in names.items():
            plats: set[str] = set()
            why = ""
            if selected and idx is not None and info.ladder_version:  # a selected class: its ladders
                plats = {p for p in idx.platforms_holding(info.ladder_version, name) if p in PLATFORMS}
                why = f"{name} is only on the {next(iter(plats), '')} ladders of {self.packs.packs[run.engine].meta.pack.title or run.engine} {info.ladder_version}"
            if len(plats) != 1:  # else the pack's platform-only names (attention, finding kernels)
                plats, why = set(), ""
                for h in pack.meta.platform_hint:
                    if regex.search(h.pattern, name):
                        plats, why = {h.platform}, f"{name}: {h.why or 'a ' + h.platform + '-only name'}"
                        break
            if len(plats) == 1:
                votes.setdefault(next(iter(plats)), []).append(why)
        if not votes:
            return
        plat = max(sorted(votes), key=lambda p: len(votes[p]))
        run.platform = info.platform = plat
        info.platform_source = "inferred"
        info.platform_evidence = "; ".join(votes[plat][:4])
        if len(votes) > 1:
            info.platform_evidence += " (outvoted: " + ", ".join(p for p in sorted(votes) if p != plat) + ")"

    # -- expected versus observed rung ------------------------------------------------------
    def _machine(self, run: _RunState):
        """The machine the run is judged against: ``--gpu``, else the GPU / capability the log names."""
        from .gates import Machine
        from .gpus import resolve_gpu

        for text, origin in ((self.gpu, "given"), (run.config.gpu, "log"), (run.config.compute_capability, "log")):
            g = resolve_gpu(text) if text else None
            if g is not None and g.cc is not None:
                return Machine(platform=run.platform or "CUDA", cc=g.cc, gpu=g.name, cuda=self.cuda), origin
        return None, None

    def _walk_selections(self, run: _RunState, pack: Pack, have: list[Selection]) -> list[Selection]:
        """Pack ``[[walk]]``: the kernel of an unlogged layer family, from a certain ladder walk (inferred)."""
        if not pack.meta.walk or not run.config.quantization:
            return []
        machine, origin = self._machine(run)
        if machine is None:
            return []
        machine.env.update(run.config.extra)  # switches the log states (e.g. GGML_CUDA_FORCE_CUBLAS)
        ac = pack.meta.arch_check
        if ac is not None and ac.build_flags:
            compiled = parse_compiled(self._fact(run, ac.compiled_fact) or "", ac.compiled_scale)
            if compiled:  # the build's list is printed: its flags are known, closed world
                machine.builds = frozenset(f for f, (lo, hi) in ac.build_flags.items()
                                           if any(lo <= c < hi for c in compiled))
        from .predict import SchemeError, walk

        out = []
        families = {s.family for s in have}
        for w in pack.meta.walk:
            if w.family in families or not regex.search(w.quantization, run.config.quantization):
                continue
            try:
                res = walk(self.packs, pack.engine, w.scheme, machine)
            except SchemeError:
                continue
            if not res.predicted or not res.certain:
                continue
            src = "--gpu" if origin == "given" else "the log"
            builds = ("compiled archs from the log" if machine.builds is not None else "build flags not in the log")
            idx = self.ladders.get(pack.engine)
            placement = idx.place(res.ladder_version, res.predicted, "^" + regex.escape(res.role or "") + "$",
                                  run.platform) if idx else None
            out.append(Selection(
                ladder=placement.position if placement else None,
                family=w.family, kernel=res.predicted, cost_class=CostClass(res.predicted_cost_class or "unknown"),
                scheme=res.scheme_title, observed=False, line=run.first_line, rule=f"{pack.engine}.walk.{w.scheme.lower()}",
                evidence=f"quantization {run.config.quantization}; {machine.gpu} (sm{machine.cc}, from {src})",
                reasoning=(f"inferred: {pack.engine} does not log its matmul path; walking {res.registry} "
                           f"({res.ladder_version}) for sm{machine.cc} ({builds}) the first rung that passes is "
                           f"{res.predicted}, and every rung above it fails"),
            ))
        return out

    def _expected_rungs(self, run: _RunState, pack: Pack, sels: dict, add_finding) -> None:
        """UNEXPECTED_FALLBACK when a better rung above the observed one suits the GPU (inferred)."""
        from .expect import skipped_rungs

        machine, origin = self._machine(run)
        if machine is None:
            return
        for s in sels.values():
            sel = s.selection
            pos = sel.ladder
            if pos is None or pos.rung <= 1 or pos.ladder_version not in pack.ladders:
                continue
            skipped = skipped_rungs(pack.ladders[pos.ladder_version], pos.registry, pos.platform, pos.rung,
                                    sel.cost_class.value, machine)
            if not skipped:
                continue
            ev = next((e for e in run.events if e.line == sel.line), run.events[0])
            src = "--gpu" if origin == "given" else "the log"
            reasons = [f"{machine.gpu} (sm{machine.cc}, from {src}) can take rung {k.rung} {k.kernel} ({k.cost_class}); "
                       f"the log shows rung {pos.rung} {sel.kernel} ({sel.cost_class.value}). Candidates: "
                       + ("; ".join(k.candidates) or "no software gate recorded") for k in skipped]
            add_finding("UNEXPECTED_FALLBACK", ev, sel.rule, kernel=sel.kernel, reasons=reasons, inferred=True,
                        basis="ladder", family=sel.family,
                        title=f"{sel.kernel} ({sel.family}) is below what sm{machine.cc} should reach: "
                              f"{skipped[0].kernel} ({skipped[0].cost_class})")

    # -- closing a run ----------------------------------------------------------------------
    def _close(self, run: _RunState) -> Run:
        info = self._engine_info(run)
        idx = self.ladders.get(run.engine)
        pack = self.packs.packs[run.engine]
        self._infer_platform(run, info, pack)
        sels: dict[tuple[str, str], _Sel] = {}
        findings: dict[tuple[Optional[str], str], Finding] = {}  #: (family, code) -> the finding
        codes = self.packs.findings

        def finding_key(code: str, family: Optional[str]) -> tuple[Optional[str], str]:
            """One finding per (family, code): a finding about no family joins the code's only
            finding, and a family's finding takes over the code's family-less one."""
            same = [k for k in findings if k[1] == code]
            if family is None and len(same) == 1:
                return same[0]
            if family is not None and (None, code) in findings and (family, code) not in findings:
                findings[(family, code)] = findings.pop((None, code)).model_copy(update={"family": family})
            return (family, code)

        def add_finding(code: str, ev: Event, rule_id: Optional[str], kernel: Optional[str] = None,
                        reasons: Optional[list[str]] = None, remedy: Optional[str] = None,
                        severity: Optional[Severity] = None, cost_class: Optional[CostClass] = None,
                        inferred: bool = False, title: Optional[str] = None,
                        basis: Optional[str] = None, family: Optional[str] = None) -> None:
            """``basis``: what an inferred finding was inferred from (``Finding.inferred_from``);
            ``family``: the layer family it is about (None: the run as a whole)."""
            key = finding_key(code, family)
            if key in findings:
                f = findings[key]
                for rs in reasons or []:
                    if rs not in f.reasons and len(f.reasons) < 64:
                        f.reasons.append(rs)
                if f.inferred and not inferred:  # a line stating it beats an inference
                    findings[key] = f.model_copy(update={"inferred": False, "inferred_from": None, "line": ev.line,
                                                         "evidence": clip(ev.message, 2000), "rule": rule_id,
                                                         "kernel": kernel or f.kernel,
                                                         "cost_class": cost_class or f.cost_class})
                return
            info = codes.code[code]
            findings[key] = Finding(
                code=code, severity=severity or Severity(info.severity), title=title or info.title, line=ev.line,
                evidence=clip(ev.message, 2000), rule=rule_id, kernel=kernel, cost_class=cost_class, family=key[0],
                reasons=list(reasons or []),
                remedy=remedy, inferred=inferred, inferred_from=basis if inferred else None,
            )

        logged_v = parse_version(info.version) if info.version_source == "logged" else None
        between_ladders = bool(logged_v and info.ladder_version and Version(info.ladder_version) < logged_v)
        #: (line, rule) of events that gave something; (line, rule) -> why a stated finding was not trusted
        used: set[tuple[int, str]] = set()
        dropped: dict[tuple[int, str], str] = {}
        release = info.version if info.version_source == "logged" else info.ladder_version
        for ev in run.events:
            cr, rule_pack = self.rules[ev.rule]
            r = cr.rule
            g = dict(ev.groups)
            kernel = self._kernel_of(cr, ev)
            reasons = list(ev.items)
            if g.get("reason") and g["reason"].strip():
                reasons.insert(0, g["reason"].strip())
            sel_family: Optional[str] = None  # the family of the selection this line names, if any
            cost: Optional[CostClass] = None
            if r.family and kernel:
                used.add((ev.line, ev.rule))
                family = fill(r.family, g)
                hint = fill(r.registry, g) if r.registry else None
                known = self._machine(run)[0]  # the skipped rungs that count are the ones possible here
                kname = normalise(kernel) or kernel  # an enum member or a quoted name, as the ladders hold it
                placement = (idx.place(info.ladder_version, kname, hint, run.platform, run.config.quantization, known)
                             if idx else None)
                nearer = None
                if (placement is None and idx is not None and info.ladder_version
                        and (between_ladders or idx.is_composed(info.ladder_version))):
                    # a release between two shipped ladders (0.10.1 between 0.9.2 and 0.10.2) may
                    # already hold the next ladder's registry: the next shipped release is nearest
                    nearer = idx.next_release(info.ladder_version)
                    placement = (idx.place(nearer, kname, hint, run.platform, run.config.quantization, known)
                                 if nearer else None)
                cost = CostClass(r.cost_class) if r.cost_class else None
                if r.shape and placement is None and classify(self.packs.lexicon, kernel, "") is None:
                    used.discard((ev.line, ev.rule))  # a grammar shape naming no known kernel: its parts stay an event
                    continue
                basis = "ladder" if placement is not None and not r.cost_class else "engine_message"
                reasoning = (f"cost class stated by the engine's own message (rule {r.id})"
                             if r.cost_class and placement is None else None)
                if placement is not None and nearer:
                    reasoning = (f"placed on the next shipped ladder, {pack.meta.pack.title or pack.engine} {nearer}: the {info.ladder_version} "
                                 f"registries do not hold {kernel}")
                if cost is None and placement is not None:
                    cost = placement.cost_class
                if placement is not None and len(run.era) > 1 and idx is not None and not nearer:
                    placement.position.elsewhere = idx.elsewhere(run.era, placement, kernel, hint, run.platform,
                                                                 run.config.quantization)
                if cost is None:
                    for nc in pack.meta.name_cost:
                        if (regex.search(nc.pattern, kernel) and (not nc.family or regex.search(nc.family, family))
                                and (not nc.quantization or regex.search(nc.quantization, run.config.quantization or ""))):
                            cost = CostClass(nc.cost_class)
                            reasoning = f"classified by name ({pack.meta.pack.title or pack.engine} name table): {nc.why}"
                            basis = "kernel_name"
                            break
                if cost is None:  # the engine-neutral lexicon, last: never silently
                    bn = classify(self.packs.lexicon, kernel, f"{run.config.quantization or ''} {family}")
                    if bn is not None and bn.cost_class != "unknown":
                        cost, reasoning, basis = CostClass(bn.cost_class), bn.reasoning, "kernel_name"
                    elif bn is not None:
                        reasoning = bn.reasoning
                # one rung of one registry is one selection, whichever lines name it (a "Selected X"
                # line and the engine's own warning about X are the same choice)
                key = ((placement.registry.name, placement.position.kernel_class) if placement
                       else (family, kernel))
                rank = ev.rank  # a process name without a rank (VllmWorkerProcess) tells no ranks apart
                if key not in sels:
                    sel = Selection(
                        family=family, kernel=kernel, cost_class=cost or CostClass.unknown,
                        scheme=(placement.registry.scheme or None) if placement else None,
                        ladder=placement.position if placement else None,
                        observed=True, reasoning=reasoning, line=ev.line, evidence=clip(ev.message, 2000),
                        rule=r.id,
                    )
                    sels[key] = _Sel(sel)
                sel_family = sels[key].selection.family  # another line may have named this choice first
                if rank:
                    sels[key].ranks.add(rank)
                sels[key].printers.add(ev.rank or "main")
                if len(sels[key].events) < 8:
                    sels[key].events.append(ev)
                lk = (pack.ladders[placement.position.ladder_version].kernel.get(placement.position.kernel_class)
                      if placement is not None else None)
                if cost is not None and cost.value in codes.cost_class_finding and not r.finding:
                    code = codes.cost_class_finding[cost.value]
                    add_finding(code, ev, r.id, kernel=kernel, inferred=True, basis=basis, family=sel_family,
                                title=f"{codes.code[code].title}: {kernel} ({family})",
                                reasons=self._why_cost(placement, lk, cost, reasoning,
                                                           pack.meta.pack.title or pack.engine))
                if (lk is not None and lk.activation_scaling == "per-tensor"
                        and (run.config.quantization or "").lower() in pack.meta.pack.per_token_fp8_methods):
                    add_finding("FP8_PER_TENSOR_FALLBACK", ev, r.id, kernel=kernel, inferred=True, basis="ladder",
                                family=sel_family, reasons=[
                        f"quantization={run.config.quantization} asks for dynamic per-token FP8 activation "
                        f"scales where the GPU allows it; {placement.position.kernel_class} applies one scale "
                        f"per tensor (rung {placement.position.rung}/{placement.position.rungs} of "
                        f"{placement.position.registry}, {pack.meta.pack.title or pack.engine} {placement.position.ladder_version})"])
            if r.finding:
                verdict = judge(r.finding, Severity(codes.code[r.finding].severity), cr, rule_pack, run.engine,
                                run.engine_sure, ev, self.packs, release)
                if not verdict.keep:
                    dropped[(ev.line, ev.rule)] = verdict.why or "not trusted"
                else:
                    used.add((ev.line, ev.rule))
                    add_finding(r.finding, ev, r.id, kernel=kernel, reasons=reasons + (
                                    [verdict.why] if verdict.why else []),
                                remedy=(fill(r.remedy, g).strip() or None) if r.remedy else None,
                                severity=verdict.severity, cost_class=cost, family=sel_family)
            elif r.sets or ev.groups:
                used.add((ev.line, ev.rule))

        self._arch_check(run, pack, add_finding, frozenset(code for _, code in findings))
        self._expected_rungs(run, pack, sels, add_finding)
        selections = []
        for s in sels.values():
            s.selection.ranks = sorted(s.ranks)
            selections.append(s.selection)
        start_failure = self._start_failure(run, pack, findings)
        # a start that a line says failed (an error finding) ran no kernel: nothing to infer
        failed = start_failure is not None or any(
            f.severity == Severity.error and not f.inferred for f in findings.values())
        for sel, hint in ([] if failed else infer_selections(
                pack, run.config, info.version, selections,
                {e.kind for e in run.events}, self.gpu, self.cuda)):
            placement = idx.place(info.ladder_version, sel.kernel, hint, run.platform) if idx else None
            if placement is not None:
                sel.ladder, sel.scheme = placement.position, placement.registry.scheme or None
            selections.append(sel)
            code = codes.cost_class_finding.get(sel.cost_class.value)
            if code:
                ev0 = Event(line=sel.line, rule=sel.rule, kind="inferred", source=run.source,
                            message=sel.reasoning or sel.evidence)
                add_finding(code, ev0, sel.rule, kernel=sel.kernel, inferred=True, basis="config", family=sel.family,
                            title=f"{codes.code[code].title}: {sel.kernel} ({sel.family})")
        selections += self._walk_selections(run, pack, selections)
        self._rank_divergence(sels, add_finding)
        attention = self._attention(run)
        kv = self._kv_cache(run, add_finding, pack.meta.pack.kv_dtype_aliases)
        self._quantization_source(run, pack)
        order = {c: i for i, c in enumerate(COST_ORDER)}
        sev = {"error": 0, "warning": 1, "info": 2}
        fl = sorted(findings.values(), key=lambda f: (sev[f.severity.value], f.line, f.code))
        worst = min((s.cost_class for s in selections), key=lambda c: order[c], default=None)
        return Run(index=run.index, source=run.source, first_line=run.first_line, last_line=run.last_line,
                   engine=info, config=run.config, selections=selections, findings=fl,
                   worst_cost_class=worst, attention=attention, kv_cache=kv, start_failure=start_failure,
                   unexplained=unexplained(run.events, self.rules, used, dropped))

    @staticmethod
    def _quantization_source(run: _RunState, pack: Pack) -> None:
        """Pack ``quantization_unlogged``: say (``config.extra["quantization_source"]``) that the
        engine never logs its effective quantization, unless a line logged it (``logged ...``)."""
        note = pack.meta.pack.quantization_unlogged
        src = run.config.extra.get("quantization_source", "")
        if note and not src.startswith("logged"):
            run.config.extra["quantization_source"] = (f"{src}; " if src else "not logged; ") + note

    @staticmethod
    def _start_failure(run: _RunState, pack: Pack, findings: dict) -> Optional[StartFailure]:
        """The first ``start_failure`` line of the run, and the raised exception that caused it.

        The cause is a finding whose line matches the pack's ``exception_line`` (the last line
        of a traceback, ``RuntimeError: ...``): the last one at or before the failure line (vLLM
        workers print their exception before ``EngineCore failed to start.``), else the first
        after it (the traceback that follows the failure line). That finding gets ``fatal``.
        """
        ev = next((e for e in run.events if e.kind == "start_failure"), None)
        if ev is None:
            return None
        sf = StartFailure(line=ev.line, evidence=clip(ev.message, 2000), rule=ev.rule, process=ev.process)
        pat = pack.meta.pack.exception_line
        if not pat:
            return sf
        exc = regex.compile(pat)
        cands = [f for f in findings.values() if not f.inferred and exc.search(f.evidence)]
        before = [f for f in cands if f.line <= ev.line]
        after = [f for f in cands if f.line > ev.line]
        cause = max(before, key=lambda f: f.line) if before else min(after, key=lambda f: f.line, default=None)
        if cause is not None:
            key = next(k for k, f in findings.items() if f is cause)
            findings[key] = cause.model_copy(update={"fatal": True})
            sf.cause_line, sf.cause = cause.line, clip(cause.evidence, 2000)
        return sf

    @staticmethod
    def _why_cost(placement, lk, cost: CostClass, reasoning: Optional[str], title: str = "vLLM") -> list[str]:
        """The reasoning behind an inferred cost-class finding: the rung and the env that decides it.

        ``title``: how the report names the engine whose ladder holds the rung."""
        if placement is None:
            return [reasoning] if reasoning else []
        p = placement.position
        out = [f"inferred: {p.kernel_class} is rung {p.rung}/{p.rungs} of {p.registry} ({p.platform}, "
               f"{title} {p.ladder_version}), whose cost class for this scheme is {cost.value}"]
        cls = p.kernel_class.lower()
        for name, default in sorted((lk.env if lk is not None else {}).items()):
            # only a variable named after this kernel (VLLM_MXFP8_EMULATION_... for EmulationMxfp8...)
            if sum(1 for w in name.lower().split("_") if len(w) >= 3 and w not in ("vllm", "use") and w in cls) >= 2:
                out.append(f"{name} (default {default}) is read by this kernel's module and decides it")
        return out

    # -- ranks, attention, KV cache -------------------------------------------------------
    @staticmethod
    def _rank_divergence(sels: dict, add_finding) -> None:
        """RANK_DIVERGENCE: one layer family, different kernels, printed by disjoint sets of ranks.

        Ranks of one engine build the same layers on the same GPU model, so they should walk
        the ladder to the same rung; when they do not (mixed GPUs, a rank missing a package),
        the slowest rank sets the pace of every collective.
        """
        by_family: dict[str, list[_Sel]] = {}
        for s in sels.values():
            by_family.setdefault(s.selection.family, []).append(s)
        for family, group in sorted(by_family.items()):
            if len(group) < 2 or len({x.selection.kernel for x in group}) < 2:
                continue
            ranked = sorted(group, key=lambda x: x.selection.line)
            # only lines that carry an explicit rank (TP1, DP0, rank=1) can show a divergence: an
            # untagged or process-only line ("main", EngineCore) may be any rank, or a paste
            if any("main" in x.printers for x in ranked):
                continue
            disjoint = all(a.printers.isdisjoint(b.printers) for i, a in enumerate(ranked) for b in ranked[i + 1:])
            if not disjoint:
                continue
            reasons = [f"{', '.join(sorted(x.printers))}: {x.selection.kernel} (line {x.selection.line})"
                       for x in ranked]
            add_finding("RANK_DIVERGENCE", ranked[-1].events[0], ranked[-1].selection.rule, reasons=reasons,
                        family=family,
                        title=f"ranks chose different kernels for {family}: "
                              + " vs ".join(x.selection.kernel for x in ranked))

    def _attention(self, run: _RunState) -> list[AttentionChoice]:
        """Attention backends chosen (rules ``sets = { attention_backend = ... }``), one per name, ranks merged."""
        out: dict[str, AttentionChoice] = {}
        for name, ev in run.attention:
            key = norm(name)
            if not key:
                continue
            who = ev.rank  # a process name without a rank tells no ranks apart
            if key not in out:
                cands = ev.groups.get("candidates") or ""
                out[key] = AttentionChoice(backend=name.strip(), candidates=_LIST_ITEM.findall(cands)[:32],
                                           line=ev.line, evidence=clip(ev.message, 2000), rule=ev.rule)
            if who and who not in out[key].ranks:
                out[key].ranks = sorted([*out[key].ranks, who])
        return list(out.values())

    @staticmethod
    def _kv_cache(run: _RunState, add_finding, aliases: dict[str, str]) -> Optional[KvCache]:
        """KV-cache dtype asked for versus in effect; a quantized request that did not hold is
        KV_CACHE_DTYPE_FALLBACK (unless a rule already raised it from the line itself)."""
        req = run.config.kv_cache_dtype
        if not req and run.kv_used is None:
            return None
        kv = KvCache(requested=req, requested_line=run.kv_requested_line)
        if run.kv_used is not None:
            used, ev = run.kv_used
            kv.in_effect, kv.in_effect_line, kv.evidence = used, ev.line, clip(ev.message, 2000)
            if req and kv_norm(req, aliases) != "auto" and not kv_same(req, used, aliases):
                add_finding("KV_CACHE_DTYPE_FALLBACK", ev, ev.rule,
                            reasons=[f"requested kv_cache_dtype={req} (line {run.kv_requested_line}), "
                                     f"in effect {used} (line {ev.line})"])
        return kv
