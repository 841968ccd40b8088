"""What the maintainers' scripts under ``tools/`` share.

``tools/`` is not a package: a script puts its own folder on ``sys.path`` (appended, so it
never shadows an installed module) and imports this one by name::

    sys.path.append(str(Path(__file__).resolve().parent))
    from _common import tool
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def tool(name: str) -> ModuleType:
    """Import the sibling tool ``tools/<name>.py`` by file, once (kept in ``sys.modules`` under
    ``name``: a dataclass looks its module up while the class is built). Raises ``OSError`` /
    ``ImportError`` when the file is missing or fails to import."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {HERE / f'{name}.py'}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
