"""Pydantic models generated from the plain report classes (``logscan.plain``), for where validation
or a schema is the point: ``logscan schema``, reading a ``--baseline`` report, restoring a follow
checkpoint, ``GatedReport``. Only this module (and the gate, policy and pack code) imports pydantic;
``logscan scan`` never does (issue 18; tests/test_plain_models.py checks both).

``validator(cls)`` is the pydantic model of a ``@plain`` class: same name, docstring, fields,
types (nested plain classes replaced by their validators), defaults and factories, so its
``model_json_schema()`` is the schema the pydantic report models gave (byte-identical output of
``logscan schema``, checked by a test). ``exclude`` metadata becomes ``Field(exclude=True)`` under
``SkipJsonSchema``; a class's ``_omit_none`` fields are dropped from a dump when None, as the plain
dump does. ``to_plain(model, cls)`` turns a validated pydantic object back into the plain one.
"""
from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, Field, create_model, model_serializer
from pydantic.json_schema import SkipJsonSchema

from .plain import PlainModel

_VALIDATORS: dict[type, type[BaseModel]] = {}
_PLAIN: dict[type, type] = {}


class _OmitNone(BaseModel):
    """Base of a validator whose plain class drops some None fields from its dump."""

    @model_serializer(mode="wrap")
    def _drop_none(self, handler):
        d = handler(self)
        if isinstance(d, dict):
            for name in _PLAIN[type(self)]._omit_none:
                if d.get(name, 0) is None:
                    d.pop(name)
        return d


def _sub(tp: Any) -> Any:
    """``tp`` with every plain class in it replaced by its validator."""
    if isinstance(tp, type) and issubclass(tp, PlainModel):
        return validator(tp)
    args = typing.get_args(tp)
    if not args:
        return tp
    new = tuple(_sub(a) for a in args)
    if new == args:
        return tp
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        return typing.Union[new]
    return origin[new]  # list[X], dict[K, V]


def validator(cls: type) -> type[BaseModel]:
    """The pydantic model of the ``@plain`` class ``cls`` (generated once, then cached)."""
    got = _VALIDATORS.get(cls)
    if got is not None:
        return got
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        tp = _sub(hints[f.name])
        if f.default_factory is not dataclasses.MISSING:
            fac = f.default_factory
            spec = Field(default_factory=validator(fac) if isinstance(fac, type) and issubclass(fac, PlainModel)
                         else fac)
        elif f.default is not dataclasses.MISSING:
            spec = f.default
        else:
            spec = ...
        if f.metadata.get("exclude"):
            tp = SkipJsonSchema[tp]
            spec = Field(default=f.default, exclude=True)
        fields[f.name] = (tp, spec)
    base = _OmitNone if cls._omit_none else BaseModel
    model = create_model(cls.__name__, __base__=base, __module__=cls.__module__, __doc__=cls.__doc__, **fields)
    _VALIDATORS[cls] = model
    _PLAIN[model] = cls
    return model


def _plain_value(v: Any) -> Any:
    if isinstance(v, BaseModel):
        cls = _PLAIN.get(type(v))
        return v if cls is None else to_plain(v, cls)
    if isinstance(v, list):
        return [_plain_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain_value(x) for k, x in v.items()}
    return v


def to_plain(model: BaseModel, cls: type) -> Any:
    """The ``cls`` object holding ``model``'s field values (nested validators turned back too)."""
    return cls(**{name: _plain_value(getattr(model, name)) for name in cls.model_fields})
