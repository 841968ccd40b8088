#!/usr/bin/env python3
"""Maintainers' command: bring an engine's ladder history up to date with its releases.

For each release asked for it gets the release's source (``--source DIR`` / ``--from-dir``, or
downloads the sdist from the package index with ``tools/release_source.py``: nothing is built
or imported), derives its registries with ``tools/derive_ladders.py`` (``ast``), diffs them
against the previous release in the history and prints a reviewer's summary (new kernels,
removed rungs, reordered lists, new and gone registries), then writes
``patterns/<engine>/ladder-history.toml``.

Usage::

    python tools/refresh.py vllm 0.34.0                 # download, derive, diff, write
    python tools/refresh.py vllm --missing              # every index release the history lacks
    python tools/refresh.py vllm 0.31.0 --check         # exit 1 if shipped data != the source
    python tools/refresh.py vllm 0.34.0 --source /path/holding/vllm   # a local tree, no download
    python tools/refresh.py vllm --from-dir /tmp/src/vllm 0.6.6 0.7.0  # <dir>/<version>/vllm/...

Exit status: 0 done (``--check``: the shipped data equals the source), 1 ``--check`` found a
difference, 2 bad usage, no source, or a download failure. Engines: vLLM only so far (SGLang's
selection is if/elif code over server arguments, which ``derive_ladders`` does not read).
"""
from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Optional

from packaging.version import Version

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _tool(name: str):
    """Import a sibling tool module by file (tools/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


lh = _tool("ladder_history")
dl = _tool("derive_ladders")
rs = _tool("release_source")

SOURCE = "tools/refresh.py: ast over each release's sdist (tools/derive_ladders.py)"
#: the first release of each engine with a kernel registry (older ones have nothing to derive)
FIRST = {"vllm": "0.6.6"}


class RefreshError(Exception):
    """Usage or source problem; the CLI exits 2."""


def derive_release(engine: str, tree: Path) -> "lh.Release":
    """Registries of one release tree (a folder holding ``vllm/``). Raises ``RefreshError``."""
    if engine != "vllm":
        raise RefreshError(f"{engine}: no ast deriver yet (only vllm)")
    try:
        root = dl.find_vllm_root(tree)
    except dl.DeriveError as exc:
        raise RefreshError(str(exc)) from None
    got = lh.from_derived(dl.derive(root))
    if not got:
        raise RefreshError(f"{tree}: no registry found (is this a vLLM >= {FIRST[engine]} tree?)")
    return got


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
    ap.add_argument("--from-dir", type=Path, help="a folder of <version>/ trees")
    ap.add_argument("--history", type=Path, help="history file (default patterns/<engine>/ladder-history.toml)")
    ap.add_argument("--dry-run", action="store_true", help="print the summary, write nothing")
    args = ap.parse_intermixed_args(argv)
    path = args.history or ROOT / "patterns" / args.engine / "ladder-history.toml"
    src = Sources(args.engine, args.source, args.from_dir)
    try:
        if args.engine != "vllm":
            raise RefreshError(f"{args.engine}: no ast deriver yet (only vllm); see docs/ladders.md")
        doc = lh.load(path)
        releases = lh.expand(doc) if doc else {}
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
            got = derive_release(args.engine, src.tree(v))
            src.done(v)
            if args.check:
                lines = (lh.summarize(releases[v], got, v, f"{v} source") if v in releases
                         else [f"{v}: not in the shipped history"])
                print(f"{args.engine} {v}: shipped {'==' if not lines else '!='} source", file=out)
                for line in lines:
                    print(f"  {line}", file=out)
                differ += bool(lines)
                continue
            prev = previous(releases, v)
            lines = lh.summarize(releases.get(prev) if prev else None, got, prev or "-", v)
            verb = "replaced" if v in releases else "added"
            print(f"{args.engine} {v} ({verb}) vs {prev or 'nothing'}: {len(lines) if prev else 0} changes", file=out)
            for line in lines if prev else []:
                print(f"  {line}", file=out)
            releases[v] = got
        if args.check:
            return 1 if differ else 0
        text = lh.dumps(lh.compress(args.engine, SOURCE, releases))
        if args.dry_run:
            print(f"(dry run: {path} not written)", file=out)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(releases)} releases, {len(text)} bytes)", file=out)
        return 0
    except RefreshError as exc:
        print(f"refresh: {exc}", file=sys.stderr)
        return 2
    finally:
        src.close()


if __name__ == "__main__":
    sys.exit(run())
