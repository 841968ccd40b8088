"""Wrappers that are no engine's (``patterns/common-wrappers/*.toml``, ``loader.COMMON_WRAPPERS``):
every pack loads them after its own, their examples match and their counter-examples do not, and
the line behind them is read as the engine printed it (torch.distributed's ``[rankN]: ``:
tgi-123, vllm-265, sglang-104, trtllm-003)."""
from __future__ import annotations

from pathlib import Path

import pytest

from logscan.packs.loader import COMMON_WRAPPERS, _read_toml, default_packs, load_packs
from logscan.sources.prefix import PrefixParser

_PACKS = default_packs()
_ROOT = _PACKS.root / COMMON_WRAPPERS
_COMMON = [(p.name, w) for p in sorted(_ROOT.glob("*.toml")) for w in _read_toml(p)["wrapper"]]


def test_the_torch_rank_wrapper_is_common_data():
    assert ("torch.toml", "torch-rank") in [(f, w["id"]) for f, w in _COMMON]
    # no pack declares it itself any more (patterns/tgi/pack.toml did)
    for pack in _PACKS.packs.values():
        assert "torch-rank" not in [w.id for w in pack.meta.wrapper], pack.engine


@pytest.mark.parametrize("engine", sorted(_PACKS.packs))
def test_every_pack_loads_the_common_wrappers_after_its_own(engine):
    pack = _PACKS.packs[engine]
    ids = [w.spec.id for w in pack.wrappers]
    common = [w["id"] for _, w in _COMMON]
    assert ids[len(ids) - len(common):] == common
    assert ids[:len(ids) - len(common)] == [w.id for w in pack.meta.wrapper]


@pytest.mark.parametrize("name,wrapper", _COMMON, ids=[w["id"] for _, w in _COMMON])
def test_common_wrapper_examples_match_and_counter_examples_do_not(name, wrapper):
    (w,) = [x for x in _PACKS.packs["vllm"].wrappers if x.spec.id == wrapper["id"]]
    assert w.spec.examples and w.spec.counter_examples, name
    for ex in w.spec.examples:
        m = w.regex.match(ex)
        assert m and m.end() > 0, f"{w.spec.id}: {ex!r}"
    if w.spec.unless_own_prefix:
        return  # its counter-examples are engines' own prefixes the parser keeps (test_pack_rules)
    for ex in w.spec.counter_examples:
        m = w.regex.match(ex)
        assert m is None or m.end() == 0, f"{w.spec.id} matched counter-example {ex!r}"


def test_a_parser_tries_a_common_wrapper_once():
    parser = PrefixParser(_PACKS)
    assert [w.spec.id for w in parser.wrappers].count("torch-rank") == 1


@pytest.mark.parametrize("engine,line,message", [
    ("tgi", '[rank1]:   File "/opt/conda/bin/text-generation-server", line 8, in <module>',
     '  File "/opt/conda/bin/text-generation-server", line 8, in <module>'),
    ("vllm", "[rank0]: RuntimeError: [TensorRT LLM Error][CutlassFp4GemmRunner][GEMM Dispatch] Arch unsupported",
     "RuntimeError: [TensorRT LLM Error][CutlassFp4GemmRunner][GEMM Dispatch] Arch unsupported"),
])
def test_a_pack_loaded_alone_still_unwraps_a_rank_line(engine, line, message):
    # before, only a pack set holding tgi had the wrapper; now each pack carries it
    alone = load_packs(engines=[engine])
    assert PrefixParser(alone).parse("t", 1, line).message == message


def test_a_rank_tag_without_its_colon_stays_in_the_message():
    rec = PrefixParser(_PACKS).parse("t", 1, "[rank0] Using FlashInfer for top-p & top-k sampling.")
    assert rec.message == "[rank0] Using FlashInfer for top-p & top-k sampling."


def test_a_broken_common_wrapper_is_a_pack_error(tmp_path):
    import shutil

    from logscan.packs.loader import PackError

    root = tmp_path / "patterns"
    shutil.copytree(_PACKS.root, root)
    (root / COMMON_WRAPPERS / "torch.toml").write_text('[[wrapper]]\nid = "x"\npattern = "["\nexamples = ["a"]\n'
                                                       'counter_examples = ["b"]\n', encoding="utf-8")
    with pytest.raises(PackError):
        load_packs(root)
