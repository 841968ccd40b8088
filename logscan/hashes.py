"""``sha256``, ``sha1``, ``blake2b``: the standard library's hash constructors without ``hashlib``'s import.

``import hashlib`` loads OpenSSL's ``_hashlib`` (libcrypto) to offer its algorithms: ~2.3 ms of a
~0.15 s start (``python -X importtime``, CPython 3.11), for the cache keys (``packs/packcache.py``,
``sources/hsdb.py``) and fold keys (``fold.py``) that every scan computes. CPython's built-in
modules ``_sha256`` (``_sha2`` from 3.12), ``_sha1`` and ``_blake2`` give the same digests at
~0.4 ms; where one is missing (another interpreter or build) ``hashlib``'s constructor is used.
"""
from __future__ import annotations

try:
    from _sha256 import sha256  # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256
try:
    from _sha1 import sha1
except ImportError:  # pragma: no cover
    from hashlib import sha1
try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

__all__ = ["blake2b", "sha1", "sha256"]
