"""``--gpu`` names resolve as the full alias table says (``analysis/gpus.resolve_gpu``), though an
alias's regex is compiled only when the text holds the alias's words in order (start-up, issue 18:
``matrix`` / ``ladder`` compiled ~110 regexes to read ``H100``)."""
from __future__ import annotations

import regex

from logscan.analysis import gpus


def _brute(text: str):
    """The first alias (longest first) whose regex, compiled as before, finds ``text``."""
    t = text.strip()
    for _, _, alias, entry in gpus.gpu_table():
        words = [regex.escape(w) for w in alias.split()]
        rx = regex.compile(r"(?<![A-Za-z0-9])" + r"[\s_-]{0,2}".join(words) + r"(?![A-Za-z0-9])", regex.I)
        if rx.search(t):
            return alias, entry.cc, entry.platform
    return None


def _variants():
    out = ["H100", "h100", "NVIDIA H100 80GB HBM3", "rtx_4090", "RTX-4090", "a100-sxm4-80gb", "L40S", "l4",
           "Tesla T4", "mi300x", "AMD Instinct MI300X", "B200", "gb200", "jetson", "nothing known", "H100x",
           "GH200 480GB", "A10G", "A10", "\u0131nstinct m\u0131300x", "RTX 6000 Ada", "rtx6000ada"]
    for _, _, alias, _ in gpus.gpu_table():
        out += [alias, alias.lower(), alias.upper(), alias.replace(" ", "_"), alias.replace(" ", ""),
                alias.replace(" ", "  -"), f"NVIDIA {alias} PCIe", f"x{alias}"]
    return out


def test_every_alias_and_its_spellings_resolve_as_the_full_table_says():
    texts = _variants()
    assert len(texts) > 500
    hits = 0
    for text in texts:
        got = gpus.resolve_gpu(text)
        want = _brute(text)
        if not text.strip() or gpus._SM.match(text.strip()) or gpus._DOT.match(text.strip()) or \
                regex.fullmatch(r"(?i)gfx[0-9a-f]{3,4}", text.strip()):
            continue  # answered before the alias table
        assert (None if got is None else (got.name, got.cc, got.platform)) == want, text
        hits += want is not None
    assert hits > 400


def test_reading_one_name_compiles_only_the_aliases_it_could_be():
    gpus.alias_regex.cache_clear()
    assert gpus.resolve_gpu("H100").cc == 90
    assert 0 < gpus.alias_regex.cache_info().currsize < 10
