"""Validation of a well-formed document without pydantic: ``exact(cls, data)`` builds the ``@plain``
object of ``data`` (a dict as ``json.loads`` gives) when every value already has exactly the
type its field asks for, and answers None otherwise (start-up, issue 18).

``PlainModel.model_validate`` tries this first and hands anything it does not accept to the
pydantic model generated from the class (``logscan.validate``), so bad input still gets
pydantic's error (the messages of ``gate --baseline`` and ``diff`` are unchanged) and input
pydantic would convert (an int given for a float, ``"3"`` for an int) still is converted by
pydantic. What is accepted here is what pydantic accepts unchanged, with the same result:

- ``str``, ``int``, ``bool`` and ``float`` values of exactly that type (a bool is not an int);
- ``None`` for an ``Optional`` field; an enum member's value for an ``Enum`` field (the member);
  a ``Literal`` field's string;
- ``list[X]`` and ``dict[str, X]`` (copied, each item checked); a nested ``@plain`` class as a dict;
- a missing field with a default (the default, or a fresh ``default_factory()``); unknown keys
  are ignored, as pydantic's default ``extra="ignore"`` does.

A class with validators or ``spec`` constraints, a strict (pattern-pack) class given an unknown
key, a missing required field and any other type (``date``, ``Any``, a tuple) is not accepted:
pydantic decides those.
"""
from __future__ import annotations

import dataclasses
import typing
from enum import Enum
from typing import Any, Optional

from .plain import PlainModel, bare
from .plaininit import finish

_EXACT = (str, int, bool, float)
_NONE = type(None)


class _Refused(Exception):
    """A value ``exact`` leaves to pydantic."""


def exact(cls: type, data: Any) -> Optional[PlainModel]:
    """The ``cls`` object of ``data`` when ``data`` is well-formed exactly (module docstring), else None."""
    try:
        return _model(cls, data)
    except _Refused:
        return None


def _checked(cls: type) -> bool:
    """``cls`` (or a base) has validators or field constraints: pydantic must run them."""
    for klass in cls.__mro__:
        for v in vars(klass).values():
            if hasattr(v, "_plain_check"):
                return True
    return any(f.metadata.get("constraints") for f in cls.model_fields.values())


_CHECKED: dict[type, bool] = {}


def _model(cls: type, data: Any) -> PlainModel:
    if type(data) is not dict:
        raise _Refused
    checked = _CHECKED.get(cls)
    if checked is None:
        finish(cls)  # resolves every field's type hint (``Field.type``)
        checked = _CHECKED[cls] = _checked(cls)
    if checked:
        raise _Refused
    fields = cls.model_fields
    if cls._strict and any(k not in fields for k in data):
        raise _Refused
    values = {}
    for name, f in fields.items():
        if name in data:
            values[name] = _value(f.type, data[name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise _Refused  # a required field is missing: pydantic says which
    return bare(cls, values)


def _value(tp: Any, v: Any) -> Any:
    if tp in _EXACT:
        if type(v) is not tp:
            raise _Refused
        return v
    if tp is _NONE:
        if v is not None:
            raise _Refused
        return v
    if isinstance(tp, type):
        if issubclass(tp, PlainModel):
            return _model(tp, v)
        if issubclass(tp, Enum):
            for member in tp:
                if type(v) is type(member.value) and member.value == v:
                    return member
        raise _Refused
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union:
        if v is None and _NONE in args:
            return None
        rest = [a for a in args if a is not _NONE]
        if len(rest) != 1:
            raise _Refused  # a real union: pydantic's smart mode picks the member
        return _value(rest[0], v)
    if origin is list:
        if type(v) is not list:
            raise _Refused
        (item,) = args
        return [_value(item, x) for x in v]
    if origin is dict:
        if type(v) is not dict or args[0] is not str:
            raise _Refused
        return {k: _value(args[1], x) for k, x in v.items()}
    if origin is typing.Literal:
        if any(type(v) is type(a) and v == a for a in args):
            return v
        raise _Refused
    raise _Refused
