"""The on-disk cache folder, shared by everything logscan caches (parsed packs, Hyperscan databases).

``$LOGSCAN_CACHE_DIR`` when set (empty turns caching off), else ``$XDG_CACHE_HOME/logscan``
or ``~/.cache/logscan``. A cache is only ever an optimisation: every reader of it falls back
to the real work when the folder is missing, unwritable or holds anything unexpected.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


def cache_dir() -> Optional[Path]:
    """The cache folder (not created here), or None when caching is turned off."""
    root = os.environ.get("LOGSCAN_CACHE_DIR")
    if root is None:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "logscan")
    return Path(root) if root else None


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; silently gives up on OSError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass
