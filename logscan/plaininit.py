"""Building a ``@plain`` class's ``__init__`` on its first construction (``finish``): its type
hints resolved, its keyword-only ``__init__`` compiled, and the ``__post_init__`` that copies list
and dict arguments, turns strings into enum members and (pattern-pack models) validates through
pydantic when a nested value is still a dict. Split from ``logscan.plain`` (start-up, issue 18: a
warm scan unpickles most models and never constructs them, so this work is done only for the
classes a run builds).
"""
from __future__ import annotations

import dataclasses
import typing
from enum import Enum
from typing import Any, Optional

from .plain import PlainModel

def _mentions_plain(tp: Any) -> bool:
    if isinstance(tp, type) and issubclass(tp, PlainModel):
        return True
    return any(_mentions_plain(a) for a in typing.get_args(tp))


def _shape_ok(v: Any, tp: Any) -> bool:
    """``v`` already holds models wherever ``tp`` asks for one (so nothing needs converting)."""
    if isinstance(tp, type) and issubclass(tp, PlainModel):
        return isinstance(v, tp)
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        args = typing.get_args(tp)
        return v is None or any(_shape_ok(v, a) for a in args if a is not type(None))
    if origin is list:
        (a,) = typing.get_args(tp)
        return isinstance(v, list) and all(_shape_ok(x, a) for x in v)
    if origin is dict:
        a = typing.get_args(tp)[1]
        return isinstance(v, dict) and all(_shape_ok(x, a) for x in v.values())
    return True


def _enum_of(tp: Any) -> Optional[type]:
    """The Enum class of ``E`` or ``Optional[E]``, else None."""
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if typing.get_origin(tp) is typing.Union:
        for a in typing.get_args(tp):
            if isinstance(a, type) and issubclass(a, Enum):
                return a
    return None


def _post_init(copies: tuple[tuple[str, type], ...], enums: tuple[tuple[str, type], ...],
               nested: tuple[tuple[str, Any], ...] = (), always: bool = False):
    def __post_init__(self) -> None:
        if always or any(not _shape_ok(getattr(self, name), tp) for name, tp in nested):
            from .validate import revalidate

            revalidate(self)
            return
        for name, kind in copies:
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, kind(v))
        for name, enum in enums:
            v = getattr(self, name)
            if v is not None and not isinstance(v, enum):
                object.__setattr__(self, name, enum(v))
    return __post_init__


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Missing()


def _make_init(cls_name: str, fields: dict[str, dataclasses.Field], frozen: bool, post: bool):
    """The keyword-only ``__init__`` of a plain class, compiled once (as ``dataclasses`` writes it,
    without the rest of its class processing: ~0.5 ms a class, most of the models' import time)."""
    env: dict[str, Any] = {"_REQUIRED": _REQUIRED, "_osa": object.__setattr__}
    params, body = [], []
    for name, f in fields.items():
        if f.default_factory is not dataclasses.MISSING:
            env[f"_fac_{name}"] = f.default_factory
            params.append(f"{name}=_REQUIRED")
            body.append(f"    if {name} is _REQUIRED: {name} = _fac_{name}()")
        elif f.default is not dataclasses.MISSING:
            env[f"_dflt_{name}"] = f.default
            params.append(f"{name}=_dflt_{name}")
        else:
            params.append(name)
        body.append(f"    _osa(self, {name!r}, {name})" if frozen else f"    self.{name} = {name}")
    if post:
        body.append("    self.__post_init__()")
    src = f"def __init__(self, *, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    if not params:
        src = "def __init__(self):\n" + ("\n".join(body) or "    pass") + "\n"
    ns: dict[str, Any] = {}
    exec(src, env, ns)  # noqa: S102 - the source is built from the class's own field names
    fn = ns["__init__"]
    fn.__qualname__ = f"{cls_name}.__init__"
    return fn


def finish(d: type) -> None:
    """Resolve the type hints of a plain class and compile its ``__init__`` (and ``__post_init__``:
    list/dict copies, enum conversion, nested-model checks). Done on the first construction, not at
    import: a scan that unpickles the pack models from the cache never constructs most of the ~70
    classes (their hints and ``exec`` were ~20 ms of every start, issue 18)."""
    plan = d.__dict__.get("_pending")
    if plan is None:
        return
    for b in d.__mro__[1:]:
        if b.__dict__.get("_pending") is not None:
            finish(b)
    fields, strict, always = plan
    hints = typing.get_type_hints(d, localns={d.__name__: d})
    copies, enums, nested = [], [], []
    for name, f in fields.items():
        tp = f.type = hints[name]
        base = typing.get_origin(tp) or tp
        if typing.get_origin(tp) is typing.Union:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            base = typing.get_origin(args[0]) or args[0] if len(args) == 1 else None
        if base in (list, dict):
            copies.append((name, base))
        e = _enum_of(tp)
        if e is not None:
            enums.append((name, e))
        if strict and _mentions_plain(tp):
            nested.append((name, tp))
    if copies or enums or nested or always:
        d.__post_init__ = _post_init(tuple(copies), tuple(enums), tuple(nested), always)
    post = any("__post_init__" in vars(b) for b in d.__mro__)
    d.__init__ = _make_init(d.__name__, d.model_fields, strict, post)
    d._pending = None
