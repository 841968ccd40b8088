"""Era hints from log templates: which releases' source prints the exact sentence a line holds.

``patterns/<engine>/template-history.toml`` (``tools/template_history.py``, ``ast`` over every
release's source) lists the templates that pack rules' examples come from, with the releases
holding each. A recognised line whose message is produced, whole, by one of them (the most
specific one, with at least half of the message as literal text, a one-token field value
counting for 16 characters at most: ``specific_enough``) narrows the era to those
releases. Releases outside the history (older, or newer than its newest) stay allowed: the
history says nothing of them. Loaded on first use only (a run without a version line).
"""
from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Optional

from packaging.version import Version

from ..lazydc import dataclass  # processed on first use (start-up, issue 18)
from .era import EraHint

#: fields of a template: ``%%``, %-formats, ``{}`` fields (f-strings, str.format)
FIELD = re.compile(r"%%|%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.\d+)?[sdrfiegxXc]|\{[^{}]*\}")


def template_regex(template: str) -> re.Pattern:
    """``Using %s for %s`` -> ``^Using (.+?) for (.+?)$`` (literal text escaped; ``{{`` is ``{``)."""
    out, pos = [], 0
    for m in FIELD.finditer(template):
        out.append(re.escape(template[pos:m.start()].replace("{{", "{").replace("}}", "}")))
        out.append("%" if m.group(0) == "%%" else "(.+?)")
        pos = m.end()
    out.append(re.escape(template[pos:].replace("{{", "{").replace("}}", "}")))
    return re.compile("^" + "".join(out).strip() + "$", re.S)


def literal_head(template: str) -> str:
    """The literal text before ``template``'s first field, right-stripped: a text its regex
    (``template_regex``) matches starts with it, so ``startswith`` rules a template out without
    compiling its regex."""
    m = FIELD.search(template)
    head = template[: m.start()] if m else template
    return head.replace("{{", "{").replace("}}", "}").rstrip()


def literal_parts(template: str) -> tuple[str, ...]:
    """The literal texts of ``template`` between its fields (as ``template_regex`` cuts and
    unescapes them), stripped, empty ones left out: a text its regex matches holds them in this
    order, so ``in_order`` rules a template out without compiling its regex."""
    parts, pos = [], 0
    for m in FIELD.finditer(template):
        parts.append(template[pos:m.start()])
        pos = m.end()
    parts.append(template[pos:])
    return tuple(p for p in (x.replace("{{", "{").replace("}}", "}").strip() for x in parts) if p)


def in_order(text: str, parts: tuple[str, ...]) -> bool:
    """Whether ``text`` holds each of ``parts`` after the one before it."""
    pos = 0
    for part in parts:
        i = text.find(part, pos)
        if i < 0:
            return False
        pos = i + len(part)
    return True


def literal_chars(template: str) -> int:
    """How many characters of ``template`` are literal text (not fields)."""
    return len(FIELD.sub("", template).strip())


#: the most characters a one-token field value counts for in ``specific_enough``
TOKEN_FIELD = 16


def specific_enough(literal: int, match: "re.Match", min_ratio: float = 0.5) -> bool:
    """Whether a template with ``literal`` literal characters, matched whole by ``match`` (its
    ``template_regex`` on a message), says which releases printed the message: its literal text
    is at least ``min_ratio`` of the message, where a field that caught one token (a path, a
    number, a name: no whitespace) counts as at most ``TOKEN_FIELD`` characters (a long path
    or config name is one value, not text the template lacks). A field that caught several words
    counts in full: those may be the sentence's own words, swallowed by a vaguer template (vLLM
    0.14's 'Using VLLM_CUTLASS Fp8 MoE backend out of potential backends: [...]' is not 0.19's
    ROCm 'Using %s backend out of potential backends: %s.'), while vLLM's 'Using default W8A8
    Block FP8 kernel config. Performance might be sub-optimal! Config file not found at %s'
    (102 characters) stays its template when the config path makes the line 270 long."""
    size = len(match.string.strip())
    for g in match.groups():
        if g and not any(c.isspace() for c in g):
            size -= max(0, len(g) - TOKEN_FIELD)
    return literal >= min_ratio * size


@dataclass
class TemplateHistory:
    """Templates with their releases; ``releases_of(message)`` answers for one logged message."""

    releases: list[str]
    #: (template, its literal head, literal characters, releases holding it)
    templates: list[tuple[str, str, int, frozenset[str]]] = field(default_factory=list)
    #: template -> compiled regex, made on the first message that starts with its literal head
    #: (a start-up compiled ~250 regexes for every run: ~60 ms)
    _rx: dict[str, re.Pattern] = field(default_factory=dict, repr=False)
    #: template -> ``literal_parts``, made on the first message that starts with its literal head
    #: (a message that does not hold them in order is not the template's: no regex compiled)
    _parts: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    #: message -> ``best(message)`` (default ratio): a crash loop closes the same run's messages
    #: hundreds of times (760 runs of a catted corpus: 1.3 s of template matching); bounded
    _best: dict[str, Optional[tuple[str, frozenset[str]]]] = field(default_factory=dict, repr=False)

    def regex(self, template: str) -> re.Pattern:
        """``template_regex(template)``, compiled once."""
        rx = self._rx.get(template)
        if rx is None:
            rx = self._rx[template] = template_regex(template)
        return rx

    def could_produce(self, template: str, text: str) -> bool:
        """False when ``text`` lacks ``template``'s literal parts in order (then its regex cannot match)."""
        parts = self._parts.get(template)
        if parts is None:
            parts = self._parts[template] = literal_parts(template)
        return in_order(text, parts)

    @classmethod
    def from_doc(cls, doc: dict) -> "TemplateHistory":
        """From a parsed ``template-history.toml``. Raises ``KeyError`` / ``ValueError`` on a bad file."""
        rels = list(doc["releases"])
        idx = {r: i for i, r in enumerate(rels)}
        out = cls(rels)
        for t in doc.get("template", []):
            held = frozenset(r for a, b in t["releases"] for r in rels[idx[a]: idx[b] + 1])
            out.templates.append((t["text"], literal_head(t["text"]), literal_chars(t["text"]), held))
        return out

    def best(self, message: str, min_ratio: float = 0.5) -> Optional[tuple[str, frozenset[str]]]:
        """The most specific template producing ``message`` whole, with its releases; None if
        none does or the best is not ``specific_enough`` (``min_ratio`` of the message). When
        several tie, their releases are united."""
        text = message.strip()
        if min_ratio == 0.5:
            memo = getattr(self, "_best", None)  # a history pickled before the field existed has none
            if memo is None:
                memo = self._best = {}
            if text in memo:
                return memo[text]
            if len(memo) > 20000:
                memo.clear()
            got = memo[text] = self._best_uncached(text, min_ratio)
            return got
        return self._best_uncached(text, min_ratio)

    def _best_uncached(self, text: str, min_ratio: float) -> Optional[tuple[str, frozenset[str]]]:
        hits = [(lc, t, held, m) for t, head, lc, held in self.templates
                if text.startswith(head) and self.could_produce(t, text) and (m := self.regex(t).match(text))]
        if not hits:
            return None
        top = max(lc for lc, _, _, _ in hits)
        best = [(t, held) for lc, t, held, m in hits if lc == top and specific_enough(lc, m, min_ratio)]
        if not best:
            return None
        return best[0][0], frozenset().union(*(h for _, h in best))

    def allowed(self, held: frozenset[str], candidates: list[str]) -> frozenset[str]:
        """``held`` plus every candidate release outside the history's range (unknown there)."""
        from .era import release_version

        lo, hi = release_version(self.releases[0]), release_version(self.releases[-1])
        return held | frozenset(c for c in candidates if not lo <= release_version(c) <= hi)


def load(folder: Path, read_toml) -> Optional[TemplateHistory]:
    """The template history of a pack folder, or None when it ships none. ``read_toml``: the
    pack loader's cached TOML reader."""
    path = folder / "template-history.toml"
    if not path.is_file():
        return None
    return TemplateHistory.from_doc(read_toml(path))


def _memo_key(engine: str) -> tuple[str, str]:
    return ("template-history", engine)


def memo_templates(packs) -> None:
    """Keep every pack's template history, built, in ``packs.memo`` (pickled with the pack set:
    ``packcache._store_packset``), as pickled bytes (unpickled only by a run that infers its era;
    building vLLM's 254 templates from the TOML took ~7 ms of such a run, unpickling takes ~0.4 ms)."""
    import pickle

    from ..packs.loader import _read_toml

    for engine, pack in packs.packs.items():
        packs.memo[_memo_key(engine)] = pickle.dumps(load(pack.path, _read_toml), protocol=pickle.HIGHEST_PROTOCOL)


def template_hints(packs, pack, messages: list[str], candidates: list[str]) -> list[EraHint]:
    """Era hints of a run's recognised ``messages``: one per distinct template that narrows the
    era (``candidates`` are the releases inference may pick). The pack's history is read once per
    process into ``packs.derived``: from ``packs.memo`` when the cached pack set holds it
    (``memo_templates``), else from the pack's ``template-history.toml``."""
    key = f"template-history:{pack.engine}"
    if key not in packs.derived:
        blob = packs.memo.get(_memo_key(pack.engine))
        if blob is not None:
            import pickle

            packs.derived[key] = pickle.loads(blob)
        else:
            from ..packs.loader import _read_toml

            packs.derived[key] = load(pack.path, _read_toml)
    th = packs.derived[key]
    if th is None:
        return []
    found, seen = [], set()
    for msg in messages:
        got = th.best(msg)
        if got is None or got[0] in seen:
            continue
        seen.add(got[0])
        found.append(got)
    hints = []
    for template, held, lifted in _presence_first(th, found, candidates):
        allowed = th.allowed(held | lifted, candidates)
        if set(candidates) <= allowed:  # printed by every candidate release: no era evidence
            continue
        rels = sorted(held, key=Version)
        span = rels[0] if len(rels) == 1 else f"{rels[0]} .. {rels[-1]}"
        from ..formats.clip import clip

        why = f"template {clip(template, 60)!r} (in {span})"
        if lifted:
            why += ("; its absence after " + rels[-1] + " not counted: a later template that prints "
                    "the same sentence may be missing from the history")
        hints.append(EraHint.from_releases(why, allowed))
    return hints


def _presence_first(th: TemplateHistory, found: list[tuple[str, frozenset[str]]],
                    candidates: list[str]) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    """``found`` (template, releases holding it) with the upper bounds that contradict a lower
    bound lifted: ``[(template, releases holding it, releases the lift adds)]`` (empty when its
    end is kept).

    The history keeps, for each rule example, only the most specific template producing it
    (``tools/derive_templates.rule_templates``): when a later release prints the same sentence
    through a vaguer template (SGLang 0.5.2's device-generic 'Capture {...} begin. ...' after
    0.4.3.post3 .. 0.5.1.post3's literal 'Capture cuda graph begin. ...'), the history shows the
    sentence ending where it did not. A template's first release is presence evidence; its last
    is absence evidence, and the weaker one. So when the templates of one run cannot all hold
    (one's last release is older than another's first: sglang-236, Mar 2026, read as
    0.4.6.post1 .. 0.5.1.post3 by three such ends against 'Using KV cache dtype' (0.5.3 ->)),
    each end older than the newest first release is not counted: that template allows every
    candidate release after its first. Without a contradiction nothing changes."""
    none: frozenset[str] = frozenset()
    order = {r: i for i, r in enumerate(th.releases)}
    firsts = [min(order[r] for r in h) for _, h in found if h]
    if len(firsts) < 2:
        return [(t, h, none) for t, h in found]
    newest_first = max(firsts)
    out = []
    for t, h in found:
        if not h or max(order[r] for r in h) >= newest_first:
            out.append((t, h, none))
            continue
        first = min(h, key=lambda r: order[r])
        later = frozenset(r for r in th.releases if order[r] > order[first])
        later |= frozenset(c for c in candidates if Version(c) > Version(first))
        out.append((t, h, later - h))
    return out
