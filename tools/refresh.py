#!/usr/bin/env python3
"""Maintainers' command: bring an engine's ladder history up to date with its releases.

For each release asked for it gets the release's source (``--source DIR`` / ``--from-dir``, or
downloads the sdist from the package index with ``tools/release_source.py``: nothing is built
or imported), derives its registries with ``tools/derive_ladders.py`` and the log templates
its rules' examples come from with ``tools/derive_templates.py`` (``ast``), diffs them against
the previous release in the history and prints a reviewer's summary (new kernels, removed
rungs, reordered lists, new and gone registries, new and gone rule templates), then writes
``patterns/<engine>/ladder-history.toml`` and ``template-history.toml``.

Usage::

    python tools/refresh.py vllm 0.34.0                 # download, derive, diff, write
    python tools/refresh.py vllm --missing              # every index release the history lacks
    python tools/refresh.py vllm 0.31.0 --check         # exit 1 if shipped data != the source
    python tools/refresh.py vllm 0.34.0 --source /path/holding/vllm   # a local tree, no download
    python tools/refresh.py vllm --from-dir /tmp/src/vllm 0.6.6 0.7.0  # <dir>/<version>/vllm/...
    python tools/refresh.py sglang 0.5.24               # the same for SGLang (if/elif recipes)
    python tools/refresh.py sglang 0.5.9 --check

Exit status: 0 done (``--check``: the shipped data equals the source), 1 ``--check`` found a
difference, 2 bad usage, no source, or a download failure. Engines: vLLM (registry lists,
``tools/derive_ladders.py``) and SGLang (if/elif selection chains read by the recipes of
``tools/derive_sglang_recipes.toml``, ``tools/derive_sglang.py``; each rung keeps its branch's
test expression as its gate; the recipes' ``[[handmade]]`` ladders are listed as not derived).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional

from packaging.version import Version

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))  # tools/ is not a package: its shared helpers import by name
from _common import tool as _tool  # noqa: E402


lh = _tool("ladder_history")
dl = _tool("derive_ladders")
rs = _tool("release_source")
dt = _tool("derive_templates")
th = _tool("template_history")
ds = _tool("derive_sglang")

SOURCES = {"vllm": "tools/refresh.py: ast over each release's sdist (tools/derive_ladders.py)",
           "sglang": "tools/refresh.py: ast over each release's sdist or wheel (tools/derive_sglang.py, "
                     "recipes in tools/derive_sglang_recipes.toml)"}
SOURCE = SOURCES["vllm"]
#: the first release of each engine to derive (vLLM: its first kernel registry; SGLang: the
#: oldest the issue covers, 0.3.x has no selection chain of its own and ships empty)
FIRST = {"vllm": "0.6.6", "sglang": "0.3.0"}


class RefreshError(Exception):
    """Usage or source problem; the CLI exits 2."""


def derive_release(engine: str, tree: Path) -> "lh.Release":
    """Registries of one release tree (a folder holding ``vllm/`` or ``sglang/``). Raises ``RefreshError``.

    An SGLang release may derive no ladder at all (0.3.x quantizes through vLLM's code): it is
    kept in the history with no registry, so its rungs are not borrowed from a later release."""
    if engine == "sglang":
        try:
            return lh.from_derived(ds.derive(ds.find_sglang_root(tree)))
        except ds.DeriveError as exc:
            raise RefreshError(str(exc)) from None
    try:
        root = dl.find_vllm_root(tree)
    except dl.DeriveError as exc:
        raise RefreshError(str(exc)) from None
    got = lh.from_derived(dl.derive(root))
    if not got:
        raise RefreshError(f"{tree}: no registry found (is this a vLLM >= {FIRST[engine]} tree?)")
    return got


class Templates:
    """The template history (``template-history.toml``), expanded: template -> level, releases."""

    def __init__(self, path: Path):
        self.path = path
        doc = lh.load(path) or {"releases": [], "template": []}
        rels = list(doc["releases"])
        idx = {r: i for i, r in enumerate(rels)}
        self.releases = rels
        self.held = {t["text"]: {"level": t["level"],
                                 "releases": [r for a, b in t["releases"] for r in rels[idx[a]: idx[b] + 1]]}
                     for t in doc.get("template", [])}

    def at(self, release: Optional[str]) -> set[str]:
        return {t for t, v in self.held.items() if release in v["releases"]}

    def set_release(self, release: str, matched: dict[str, dict]) -> None:
        """Record that ``release``'s source holds exactly the ``matched`` rule templates."""
        for v in self.held.values():
            if release in v["releases"]:
                v["releases"].remove(release)
        for t, v in matched.items():
            self.held.setdefault(t, {"level": v["level"], "releases": []})["releases"].append(release)
        self.held = {t: v for t, v in self.held.items() if v["releases"]}
        if release not in self.releases:
            self.releases = sorted(self.releases + [release], key=Version)

    def dumps(self, engine: str) -> str:
        order = {r: i for i, r in enumerate(self.releases)}
        for v in self.held.values():
            v["releases"].sort(key=order.__getitem__)
        return th.dumps(engine, self.releases, self.held)


def rule_templates_of(engine: str, tree: Path, known: dict[str, dict], cache: bool = False) -> dict[str, dict]:
    """The templates of one release tree that some pack rule's example comes from.

    The most specific template of an example is chosen among this release's templates and
    the ``known`` ones (the history's), as when the history was built over every release, so
    that a release lacking an example's own template does not credit a vaguer one
    (``derive_templates.release_rule_templates``). ``cache``: reuse / keep the release's read in
    the tree (``derive_templates.release_templates``; for ``--from-dir`` trees)."""
    sys.path.insert(0, str(ROOT))
    from logscan.packs.loader import load_packs

    rules = [cr.rule for cr in load_packs(ROOT / "patterns").packs[engine].rules]
    root = ds.find_sglang_root(tree) if engine == "sglang" else dl.find_vllm_root(tree)
    return dt.release_rule_templates(rules, dt.release_templates(root, engine, cache=cache), known)


def template_lines(old: set[str], new: set[str]) -> list[str]:
    """Summary lines of rule templates that appear or disappear between two releases."""
    return ([f"new template    {t!r}" for t in sorted(new - old)]
            + [f"gone template   {t!r}" for t in sorted(old - new)])


def previous(releases: dict, version: str) -> Optional[str]:
    """The newest release in ``releases`` older than ``version``."""
    older = [r for r in releases if Version(r) < Version(version)]
    return max(older, key=Version) if older else None


class Sources:
    """Where release trees come from: one ``--source`` tree, a ``--from-dir`` folder, or downloads."""

    def __init__(self, engine: str, source: Optional[Path], from_dir: Optional[Path]):
        self.engine, self.source, self.from_dir = engine, source, from_dir
        self.tmp: Optional[Path] = None
        self.files = None

    def tree(self, version: str) -> Path:
        if self.source is not None:
            return self.source
        if self.from_dir is not None:
            return self.from_dir / version
        if self.tmp is None:
            self.tmp = Path(tempfile.mkdtemp(prefix="logscan-refresh-"))
        try:
            if self.files is None:
                self.files = rs.project_files(self.engine)
            out = rs.fetch_source(self.engine, version, self.tmp, self.files)
        except rs.SourceError as exc:
            raise RefreshError(str(exc)) from None
        return out

    def done(self, version: str) -> None:
        """Delete a downloaded tree once derived (disk is shared)."""
        if self.tmp is not None:
            shutil.rmtree(self.tmp / self.engine / version, ignore_errors=True)

    def close(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def index_releases(self) -> list[str]:
        try:
            self.files = self.files or rs.project_files(self.engine)
        except rs.SourceError as exc:
            raise RefreshError(str(exc)) from None
        return rs.releases(self.engine, self.files)


def run(argv: Optional[list[str]] = None, out=sys.stdout) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("engine", choices=["vllm", "sglang"])
    ap.add_argument("versions", nargs="*", help="releases to derive (default with --check: the newest shipped)")
    ap.add_argument("--missing", action="store_true", help="every release on the index the history lacks")
    ap.add_argument("--check", action="store_true", help="compare the shipped history with the source; write nothing")
    ap.add_argument("--source", type=Path, help="a local tree holding the engine package (one version)")
    ap.add_argument("--from-dir", type=Path, help="a folder of <version>/ trees (each release's "
                    "template read is cached in its tree: .templates-<engine>.json)")
    ap.add_argument("--history", type=Path, help="history file (default patterns/<engine>/ladder-history.toml)")
    ap.add_argument("--templates", type=Path, help="template history file "
                    "(default patterns/<engine>/template-history.toml)")
    ap.add_argument("--dry-run", action="store_true", help="print the summary, write nothing")
    args = ap.parse_intermixed_args(argv)
    path = args.history or ROOT / "patterns" / args.engine / "ladder-history.toml"
    src = Sources(args.engine, args.source, args.from_dir)
    try:
        doc = lh.load(path)
        releases = lh.expand(doc) if doc else {}
        tpath = args.templates or path.with_name("template-history.toml")
        tmpl = Templates(tpath)
        versions = list(args.versions)
        if args.source is not None and len(versions) != 1:
            raise RefreshError("--source holds one release: give exactly one version")
        if args.missing:
            first = Version(FIRST[args.engine])
            versions += [v for v in src.index_releases() if Version(v) >= first and v not in releases]
        if args.check and not versions:
            if not releases:
                raise RefreshError(f"{path}: no history to check")
            versions = [max(releases, key=Version)]
        if not versions:
            raise RefreshError("no release given (name one, or --missing)")
        for v in versions:
            try:
                Version(v)
            except ValueError:
                raise RefreshError(f"{v!r} is not a release number") from None
        differ = 0
        for v in sorted(set(versions), key=Version):
            tree = src.tree(v)
            got = derive_release(args.engine, tree)
            matched = rule_templates_of(args.engine, tree, tmpl.held, cache=args.from_dir is not None)
            src.done(v)
            if args.check:
                lines = (lh.summarize(releases[v], got, v, f"{v} source") if v in releases
                         else [f"{v}: not in the shipped history"])
                if v in releases and v in tmpl.releases:
                    lines += template_lines(tmpl.at(v), set(matched))
                print(f"{args.engine} {v}: shipped {'==' if not lines else '!='} source", file=out)
                for line in lines:
                    print(f"  {line}", file=out)
                differ += bool(lines)
                continue
            prev = previous(releases, v)
            lines = lh.summarize(releases.get(prev) if prev else None, got, prev or "-", v)
            if prev:
                lines += template_lines(tmpl.at(prev), set(matched))
            tmpl.set_release(v, matched)
            verb = "replaced" if v in releases else "added"
            print(f"{args.engine} {v} ({verb}) vs {prev or 'nothing'}: {len(lines) if prev else 0} changes", file=out)
            for line in lines if prev else []:
                print(f"  {line}", file=out)
            releases[v] = got
        if args.check:
            return 1 if differ else 0
        handmade = ds.load_recipes().get("handmade", []) if args.engine == "sglang" else None
        text = lh.dumps(lh.compress(args.engine, SOURCES[args.engine], releases, handmade))
        if args.dry_run:
            print(f"(dry run: {path} not written)", file=out)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(releases)} releases, {len(text)} bytes)", file=out)
            tpath.write_text(tmpl.dumps(args.engine), encoding="utf-8")
            print(f"wrote {tpath} ({len(tmpl.held)} rule templates)", file=out)
        return 0
    except RefreshError as exc:
        print(f"refresh: {exc}", file=sys.stderr)
        return 2
    finally:
        src.close()


if __name__ == "__main__":
    sys.exit(run())
