"""``dataclass``: ``dataclasses.dataclass``, with the class processed on its first use (start-up, issue 18).

``dataclasses`` writes and compiles ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``, ``__delattr__``, ``__hash__``) for every class when the class is defined:
0.3 ms a class, 0.9 ms a frozen one, ~17 ms for the 25 classes a ``logscan scan`` imports, of
which ~10 are never instantiated in a given run (a GPU table row, a server-args dump, a trust
verdict...). ``@dataclass`` here takes the same options and gives the same class, processed by
``dataclasses.dataclass`` itself the first time an instance is made: by ``__init__``, or by
unpickling or copying one (``__setstate__``). Until then the class holds two stand-ins for
those methods, which process it, remove themselves and carry on.

What works before the first instance: everything that needs no instance, except the class-level
``dataclasses`` API (``dataclasses.fields(cls)``, ``is_dataclass(cls)``, ``cls.__match_args__``);
``processed(cls)`` processes a class at once for a caller that needs those. A class whose body
defines ``__init__`` or ``__setstate__``, or that asks for ``slots=True`` (which makes a new
class), is processed at once. Bases are processed before their subclasses; a subclass must use
this decorator too (``dataclasses.dataclass`` on it would not see a base not yet processed).
Processing is under a lock (``logscan follow`` has threads).
"""
from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any

_LOCK = threading.RLock()
_PENDING = "__lazy_dataclass__"  #: class attribute: the options, while the class is not processed


def processed(cls: type) -> type:
    """Process ``cls`` (and its lazy bases) now if it was not; returns ``cls``."""
    with _LOCK:
        options = cls.__dict__.get(_PENDING)
        if options is None:
            return cls
        for base in reversed(cls.__mro__[1:]):
            if _PENDING in base.__dict__:
                processed(base)
        for name in ("__init__", "__setstate__", _PENDING):
            delattr(cls, name)
        dataclasses.dataclass(cls, **options)
        return cls


def _stand_ins(cls: type):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        processed(cls)
        cls.__init__(self, *args, **kwargs)

    def __setstate__(self, state: Any) -> None:  # unpickling, copy.copy: the default protocol's state
        processed(cls)
        setstate = getattr(type(self), "__setstate__", None)
        if setstate is not None:
            setstate(self, state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            self.__dict__.update(state)
        for name, value in (slots or {}).items():
            object.__setattr__(self, name, value)

    return __init__, __setstate__


def _lazy(cls=None, /, **options: Any):
    def wrap(c: type) -> type:
        if options.get("slots") or "__init__" in c.__dict__ or "__setstate__" in c.__dict__:
            return dataclasses.dataclass(c, **options)
        c.__init__, c.__setstate__ = _stand_ins(c)  # type: ignore[method-assign]
        setattr(c, _PENDING, options)
        return c

    return wrap if cls is None else wrap(cls)


if TYPE_CHECKING:  # type checkers see ``dataclasses.dataclass`` itself
    from dataclasses import dataclass
else:
    dataclass = _lazy
