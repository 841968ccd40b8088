#!/usr/bin/env python3
"""Maintainers' tool: fetch one engine release's Python source from the package index, unbuilt.

``pip download --no-binary :all:`` prepares an sdist's metadata, which for vLLM means building
its build requirements (torch, cmake) from source. This module reads the index's project page
instead (the standard simple API, PEP 691 JSON, one request per package), downloads the
release's sdist (or, when the release has none, its smallest ``py3``/``none-any`` or other
wheel), checks its sha256 against the index, and extracts only the ``.py`` files of the
package folder (``vllm/``, ``sglang/``; SGLang keeps it under ``python/``). The archive is
deleted afterwards; nothing is built or imported.

Usage::

    python tools/release_source.py vllm 0.31.0 --dest /tmp/src      # -> /tmp/src/vllm/0.31.0/vllm/...
    python tools/release_source.py sglang --list                    # the releases on the index

Errors: ``SourceError`` (no such release, no file, hash mismatch, network failure); the CLI
exits 2 on it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path
from typing import Optional

from packaging.utils import parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

INDEX = os.environ.get("LOGSCAN_INDEX_URL", "https://pypi.org/simple")
#: the top-level package folder of each engine's distribution
PACKAGE_DIR = {"vllm": "vllm", "sglang": "sglang"}


class SourceError(Exception):
    """A release's source could not be fetched or read."""


def project_files(project: str, index: str = INDEX) -> list[dict]:
    """The index's file entries of ``project`` (PEP 691 JSON: filename, url, hashes, size)."""
    req = urllib.request.Request(f"{index.rstrip('/')}/{project}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return json.load(resp)["files"]
    except (OSError, ValueError, KeyError) as exc:
        raise SourceError(f"{project}: index page unreadable: {exc}") from None


def _version_of(filename: str) -> Optional[Version]:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        if filename.endswith((".tar.gz", ".zip")):
            return parse_sdist_filename(filename)[1]
    except (ValueError, InvalidVersion):
        return None
    return None


def releases(project: str, files: Optional[list[dict]] = None) -> list[str]:
    """Every final (non-yanked, non-pre) release on the index, oldest first."""
    files = project_files(project) if files is None else files
    vs = {v for f in files if not f.get("yanked") and (v := _version_of(f["filename"])) is not None
          and not v.is_prerelease and not v.is_devrelease}
    return [str(v) for v in sorted(vs)]


def pick_file(files: list[dict], version: str) -> dict:
    """The sdist of ``version``, else its smallest wheel. Raises ``SourceError`` when none."""
    want = Version(version)
    mine = [f for f in files if _version_of(f["filename"]) == want and not f.get("yanked")]
    sdists = [f for f in mine if f["filename"].endswith((".tar.gz", ".zip"))]
    if sdists:
        return sdists[0]
    wheels = sorted((f for f in mine if f["filename"].endswith(".whl")), key=lambda f: f.get("size") or 0)
    if wheels:
        return wheels[0]
    raise SourceError(f"no file of release {version} on the index")


def _extract(archive: Path, top: str, out: Path) -> int:
    """Copy ``<top>/**/*.py`` out of an sdist or wheel into ``out``; returns the file count."""
    n = 0

    def rel_parts(name: str) -> Optional[list[str]]:
        parts = name.split("/")
        for i in range(min(3, len(parts))):  # <sdist-root>/[python/]<top>/...  or  <top>/... in a wheel
            if parts[i] == top:
                return parts[i:]
        return None

    def write(parts: list[str], data: bytes) -> None:
        dest = out.joinpath(*parts)
        if ".." in parts:
            raise SourceError(f"{archive.name}: unsafe member path {'/'.join(parts)}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)

    if archive.name.endswith(".whl") or archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                parts = rel_parts(name)
                if parts and name.endswith(".py"):
                    write(parts, z.read(name)); n += 1
    else:
        with tarfile.open(archive) as t:
            for m in t:
                parts = rel_parts(m.name)
                if parts and m.isfile() and m.name.endswith(".py"):
                    fh = t.extractfile(m)
                    if fh is not None:
                        write(parts, fh.read()); n += 1
    return n


def fetch_source(engine: str, version: str, dest: Path, files: Optional[list[dict]] = None) -> Path:
    """Download and extract ``engine==version``'s Python files under ``dest/<engine>/<version>``.

    Returns that folder (it holds ``vllm/`` or ``sglang/``). Already fetched: returned as is.
    Raises ``SourceError``.
    """
    out = dest / engine / version
    if (out / ".fetched").is_file():
        return out
    files = project_files(engine) if files is None else files
    f = pick_file(files, version)
    tmp = Path(tempfile.mkdtemp(prefix=f"logscan-{engine}-"))
    try:
        archive = tmp / f["filename"]
        h = hashlib.sha256()
        try:
            with urllib.request.urlopen(f["url"], timeout=600) as resp, archive.open("wb") as fh:
                while chunk := resp.read(1 << 20):
                    h.update(chunk)
                    fh.write(chunk)
        except OSError as exc:
            raise SourceError(f"{f['filename']}: download failed: {exc}") from None
        want = (f.get("hashes") or {}).get("sha256")
        if want and h.hexdigest() != want:
            raise SourceError(f"{f['filename']}: sha256 mismatch")
        if out.exists():
            shutil.rmtree(out)
        n = _extract(archive, PACKAGE_DIR.get(engine, engine), out)
        if not n:
            raise SourceError(f"{f['filename']}: no {PACKAGE_DIR.get(engine, engine)}/*.py inside")
        (out / ".fetched").write_text(f"{f['filename']} {f.get('size', '')} {n} files\n")
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("engine", choices=sorted(PACKAGE_DIR))
    ap.add_argument("versions", nargs="*")
    ap.add_argument("--dest", type=Path, default=Path(tempfile.gettempdir()) / "logscan-src")
    ap.add_argument("--list", action="store_true", help="print the releases on the index")
    args = ap.parse_args(argv)
    try:
        files = project_files(args.engine)
        if args.list:
            print(" ".join(releases(args.engine, files)))
            return 0
        for v in args.versions:
            out = fetch_source(args.engine, v, args.dest, files)
            print(f"{v}: {out} ({(out / '.fetched').read_text().strip()})", flush=True)
    except SourceError as exc:
        print(f"release_source: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
