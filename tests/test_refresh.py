"""tools/refresh.py end to end on the bundled synthetic vLLM 0.34.0 tree (tests/data/vllm-0.34.0).

The tree was generated from the shipped 0.33.0 history and edited: a new NVFP4 rung 1, the
emulation rung removed, the first two CUDA FP8 rungs swapped. Its ``vllm/__init__.py`` raises,
so the tool passes only if it never imports vLLM. tools/release_source.py is tested on a
synthetic sdist served from a file:// URL (no network).
"""
from __future__ import annotations

import hashlib
import io
import shutil
import tarfile

import pytest

from tests.conftest import load_tool, ROOT

TREE = ROOT / "tests" / "data" / "vllm-0.34.0"
SHIPPED = ROOT / "patterns" / "vllm" / "ladder-history.toml"



refresh = load_tool("refresh")
lh = load_tool("ladder_history")
rs = load_tool("release_source")


def _refresh(*args):
    out = io.StringIO()
    return refresh.run(list(args), out=out), out.getvalue()


def test_new_release_is_derived_diffed_and_written(tmp_path):
    hist = tmp_path / "h.toml"
    shutil.copy(SHIPPED, hist)
    shutil.copy(SHIPPED.with_name("template-history.toml"), tmp_path / "template-history.toml")
    rc, out = _refresh("vllm", "0.34.0", "--source", str(TREE), "--history", str(hist))
    assert rc == 0, out
    assert "vllm 0.34.0 (added) vs 0.33.0: " in out
    assert "new kernel      NewShinyNvFp4LinearKernel" in out
    assert "added rung      _POSSIBLE_NVFP4_KERNELS [CUDA] NewShinyNvFp4LinearKernel (rung 1/14)" in out
    assert "removed rung    _POSSIBLE_NVFP4_KERNELS [CUDA] EmulationNvFp4LinearKernel (was rung 13/14)" in out
    assert "reordered       _POSSIBLE_FP8_KERNELS [CUDA]" in out
    # the tree prints one of 0.33.0's rule templates and none of the others
    assert "gone template   'Using MarlinExperts (weight-only FP4) for AutoRound MXFP4 MoE'" not in out
    assert "gone template   'Using FlashAttention version %s'" in out
    tmpl = lh.load(tmp_path / "template-history.toml")
    assert tmpl["releases"][-1] == "0.34.0"
    kept = next(t for t in tmpl["template"] if t["text"].startswith("Using MarlinExperts (weight-only FP4) for AutoRound"))
    assert kept["releases"][-1][1] == "0.34.0"
    new = lh.expand(lh.load(hist))
    old = lh.expand(lh.load(SHIPPED))
    assert list(new)[-1] == "0.34.0" and len(new) == len(old) + 1
    assert all(new[r] == old[r] for r in old)  # nothing earlier changed
    assert new["0.34.0"]["_POSSIBLE_NVFP4_KERNELS"][2]["CUDA"][0] == "NewShinyNvFp4LinearKernel"
    # unchanged lists extend their range instead of being copied
    assert len(hist.read_text()) - len(SHIPPED.read_text()) < 2000
    rc, out = _refresh("vllm", "0.34.0", "--check", "--source", str(TREE), "--history", str(hist))
    assert (rc, out.splitlines()[0]) == (0, "vllm 0.34.0: shipped == source")


def test_check_exits_1_when_the_shipped_data_differs_from_the_source():
    rc, out = _refresh("vllm", "0.34.0", "--check", "--source", str(TREE), "--history", str(SHIPPED))
    assert rc == 1 and "not in the shipped history" in out
    rc, out = _refresh("vllm", "0.33.0", "--check", "--source", str(TREE), "--history", str(SHIPPED))
    assert rc == 1 and "0.33.0: shipped != source" in out and "NewShinyNvFp4LinearKernel" in out


def test_bad_usage_exits_2(tmp_path):
    assert _refresh("vllm", "--source", str(TREE))[0] == 2  # no version
    assert _refresh("vllm", "0.34.0", "--source", str(tmp_path), "--history", str(tmp_path / "h.toml"))[0] == 2
    assert _refresh("sglang", "0.5.23", "--source", str(TREE))[0] == 2  # no SGLang deriver yet


def test_compress_expand_round_trip_and_dumps_parses():
    doc = lh.load(SHIPPED)
    again = lh.compress(doc["engine"], doc["source"], lh.expand(doc))
    assert again == doc
    assert lh.tomllib.loads(lh.dumps(again)) == doc


def _sdist(tmp_path, top="vllm-9.9.9", inner=("vllm",)):
    path = tmp_path / f"{top}.tar.gz"
    with tarfile.open(path, "w:gz") as t:
        for rel, data in [("/".join(inner) + "/__init__.py", b"x = 1\n"), ("/".join(inner) + "/a/b.py", b"y = 2\n"),
                          ("setup.py", b"raise SystemExit\n"), ("/".join(inner) + "/data.bin", b"\0")]:
            ti = tarfile.TarInfo(f"{top}/{rel}")
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    return path


@pytest.mark.parametrize("engine,inner", [("vllm", ("vllm",)), ("sglang", ("python", "sglang"))])
def test_release_source_fetches_checks_and_extracts_only_package_py(tmp_path, engine, inner):
    arc = _sdist(tmp_path, f"{engine}-9.9.9", inner)
    digest = hashlib.sha256(arc.read_bytes()).hexdigest()
    files = [{"filename": arc.name, "url": arc.as_uri(), "hashes": {"sha256": digest}},
             {"filename": f"{engine}-9.9.9-py3-none-any.whl", "url": "file:///nonexistent", "size": 1},
             {"filename": f"{engine}-10.0.0rc1.tar.gz", "url": "file:///nonexistent"}]
    assert rs.releases(engine, files) == ["9.9.9"]
    out = rs.fetch_source(engine, "9.9.9", tmp_path / "src", files)
    got = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != ".fetched")
    assert got == [f"{engine}/__init__.py", f"{engine}/a/b.py"]
    bad = [dict(files[0], hashes={"sha256": "0" * 64})]
    with pytest.raises(rs.SourceError, match="sha256 mismatch"):
        rs.fetch_source(engine, "9.9.9", tmp_path / "other", bad)
    with pytest.raises(rs.SourceError, match="no file of release 1.0"):
        rs.pick_file(files, "1.0")
