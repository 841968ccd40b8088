"""tools/log_helpers.py: templates logged through helpers (SGLang ``log_info_on_rank0(logger, msg)``...).

The template reader once read only ``logger.<level>(...)`` calls, while SGLang >= 0.4.6.post4
logs many sentences through ``log_info_on_rank0(logger, msg)`` and friends: a template history
built from it credited only the old forms of those sentences. The bundled tree
``tests/data/log-helpers`` holds the helper shapes of SGLang 0.5.23's sources.
"""
from __future__ import annotations

import ast

from tests.conftest import ROOT, load_tool

dt = load_tool("derive_templates")
lh = load_tool("log_helpers")

TREE = ROOT / "tests" / "data" / "log-helpers"


def _helpers(source: str) -> dict:
    return lh.find_helpers([lh.index(ast.parse(source))], dt._text)


def test_helpers_are_detected_from_their_bodies_with_the_message_position():
    got = _helpers((TREE / "sglang" / "srt" / "utils.py").read_text(encoding="utf-8"))
    assert {(h.index, h.keyword, h.level) for h in got["log_info_on_rank0"]} == {(1, "msg", "info")}
    assert [(h.index, h.level) for h in got["log_debug_on_rank0"]] == [(1, "debug")]
    assert [(h.index, h.level) for h in got["print_warning_once"]] == [(0, "warning")]
    assert [(h.index, h.level) for h in got["rank0_log"]] == [(0, "info")]
    # a method's self is not a positional argument of the call; chains resolve (info_once -> _print_info_once)
    assert "info_once" not in got  # SGLDiffusionLogger.info_once: a logger method (see below)
    assert [(h.index, h.level) for h in got["_print_info_once"]] == [(1, "info")]
    assert [(h.index, h.prefix) for h in got["log_info"]] == [(0, "[{self.__class__.__name__}] ")]
    # decoration only: ANSI colours around the message
    (dep,) = got["print_deprecated_warning"]
    assert (dep.prefix, dep.suffix) == ("\x1b[1;33m", "\x1b[0m")
    # a function that logs its argument inside a sentence is not a logging helper
    assert "fetch" not in got


def test_a_logger_method_name_is_never_a_helper():
    """``def info_once(self, msg)`` forwards to a helper, but calls named ``info_once`` on a
    log-named receiver are logging calls already and on any other receiver are not logging."""
    got = _helpers("def info_once(self, msg):\n    _print(self, msg)\n"
                   "def _print(logger, msg):\n    logger.info(msg)\n")
    assert "info_once" not in got and [h.index for h in got["_print"]] == [1]
    assert set(dt.templates_of("console.info_once('Not a log line at all')\n")) == set()


def test_release_templates_read_every_helper_call_of_the_tree():
    got = dt.release_templates(TREE, "sglang")
    want = {
        "Using {self.backend} for FP8 block-scaled GEMM on sm{self.sm}": "info",  # log_info_on_rank0(logger, f"...")
        "Detected fp8 checkpoint.": "info",  # by keyword: msg=
        "Using default MoE kernel config. Performance might be sub-optimal!": "info",  # rank0_log
        "Only support per-tensor FP8 weight scale on ROCm for now.": "warning",  # print_warning_once
        "DeepGEMM JIT is enabled.": "info",  # utils.print_info_once(...): an attribute call
        "--enable-flashinfer-mla is deprecated.": "warning",  # ANSI colours removed, as logscan reads the line
        "[{self.__class__.__name__}] Capture cuda graph begin.": "info",  # the helper's prefix kept
        "Using Triton MoE with %s experts": "info",  # logger.info_once
        "Unsupported quantization {quant_config}": "raise",
    }
    assert {t: got.get(t) for t in want} == want
    # not a message: the argument of a non-helper, and a helper called with *args
    assert "layer.0.weight" not in got
    assert not any(t.startswith("Failed to fetch") and "layer" in t for t in got)


def test_a_helper_defined_in_another_package_comes_from_the_data_file():
    """SGLang 0.3.x calls vLLM's ``print_warning_once`` (``from vllm.utils import ...``): its
    definition is not in the tree, so ``tools/log_helpers.toml`` names it."""
    src = ("from vllm.utils import print_warning_once\n"
           "print_warning_once('Only support per-tensor FP8 weight scale on ROCm for now.')\n")
    assert set(dt.templates_of(src)) == {("warning", "Only support per-tensor FP8 weight scale on ROCm for now.")}
    known = lh.known_helpers()
    assert [(h.index, h.keyword, h.level) for h in known["print_warning_once"]] == [(0, "msg", "warning")]
    # without the data file the same source logs nothing the reader sees
    assert set(dt.module_templates(lh.index(ast.parse(src)), {})) == set()


def test_the_cached_read_is_reused_only_by_the_same_reader(tmp_path):
    import shutil

    tree = tmp_path / "0.5.23"
    shutil.copytree(TREE, tree)
    first = dt.release_templates(tree, "sglang", cache=True)
    cached = tree / ".templates-sglang.json"
    assert cached.is_file()
    doc = cached.read_text(encoding="utf-8").replace("Detected fp8 checkpoint.", "Cached, not read.")
    cached.write_text(doc, encoding="utf-8")
    assert "Cached, not read." in dt.release_templates(tree, "sglang", cache=True)
    assert dt.release_templates(tree, "sglang") == first  # no cache asked: read again
    cached.write_text(doc.replace(dt.reader_key(), "0" * 16), encoding="utf-8")
    assert dt.release_templates(tree, "sglang", cache=True) == first  # another reader's cache: ignored
    assert not (TREE / ".templates-sglang.json").exists()  # the bundled tree is never written
