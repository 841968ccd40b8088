"""Pydantic models generated from the plain report classes (``logscan.plain``), for where validation
or a schema is the point: ``logscan schema``, ``GatedReport``, the first reading of a pack or policy
file, and any document ``plaincheck.exact`` does not accept as well-formed (a damaged ``--baseline``
report or follow checkpoint). Only this module (and the pack loader's and the policy's error paths)
imports pydantic; no warm start of scan, gate, diff, explain, ladder, matrix, codes or follow does
(issue 18; tests/test_startup_commands.py and tests/test_plain_models.py check both).

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

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_serializer, model_validator
from pydantic.json_schema import SkipJsonSchema

from .plain import PlainModel, bare

_VALIDATORS: dict[type, type[BaseModel]] = {}
_PLAIN: dict[type, type] = {}
_BUILDING: set[type] = set()


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


class _Strict(BaseModel):
    """Base of a pattern-pack model's validator: unknown keys are errors, instances frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _sub(tp: Any) -> Any:
    """``tp`` with every plain class in it replaced by its validator."""
    if isinstance(tp, type) and issubclass(tp, PlainModel):
        if tp in _BUILDING:  # a recursive model (GateTerm.options): resolved by model_rebuild
            return typing.ForwardRef(tp.__name__)
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
    hints = typing.get_type_hints(cls, localns={cls.__name__: cls})
    _BUILDING.add(cls)
    try:
        model = _build(cls, hints)
    finally:
        _BUILDING.discard(cls)
    _VALIDATORS[cls] = model
    _PLAIN[model] = cls
    return model


def _build(cls: type, hints: dict[str, Any]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for f in cls.model_fields.values():
        tp = _sub(hints[f.name])
        limits = f.metadata.get("constraints") or {}
        if f.default_factory is not dataclasses.MISSING:
            fac = f.default_factory
            spec = Field(default_factory=validator(fac) if isinstance(fac, type) and issubclass(fac, PlainModel)
                         else fac, **limits)
        elif f.default is not dataclasses.MISSING:
            spec = Field(default=f.default, **limits) if limits else f.default
        else:
            spec = Field(**limits) if limits else ...
        if f.metadata.get("exclude"):
            tp = SkipJsonSchema[tp]
            spec = Field(default=f.default, exclude=True)
        fields[f.name] = (tp, spec)
    checks = {}
    for klass in reversed(cls.__mro__):
        for name, fn in vars(klass).items():
            mark = getattr(fn, "_plain_check", None)
            if mark is not None:
                checks[name] = (model_validator(mode="after")(fn) if mark[0] == "after"
                                else field_validator(*mark[1])(fn))
    base = _OmitNone if cls._omit_none else _Strict if cls._strict else BaseModel
    model = create_model(cls.__name__, __base__=base, __module__=cls.__module__, __doc__=cls.__doc__,
                         __validators__=checks, **fields)
    model.model_rebuild(_types_namespace={cls.__name__: model})
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
    """The ``cls`` object holding ``model``'s field values (nested validators turned back too),
    made without ``__init__`` (the values are validated already)."""
    return bare(cls, {name: _plain_value(getattr(model, name)) for name in cls.model_fields})


def revalidate(obj: PlainModel) -> None:
    """Validate a directly constructed ``@plain`` object as its pydantic model would have been, and
    store the converted values in it (nested dicts become models). Raises ``ValidationError``."""
    cls = type(obj)
    checked = to_plain(validator(cls).model_validate(obj.model_dump()), cls)
    for name in cls.model_fields:
        object.__setattr__(obj, name, getattr(checked, name))


def core_schema_of(cls: type, handler: Any) -> Any:
    """The pydantic-core schema of a ``@plain`` class used as a field type of a pydantic model
    (``follow.stream.FollowRecord.selection``): an instance passes as it is, a dict is validated
    by the generated model and turned into the plain object; dumped by the plain class's own
    ``model_dump`` (``mode`` and ``exclude_none`` passed on)."""
    from pydantic_core import core_schema as cs

    checked = cs.no_info_after_validator_function(lambda m: to_plain(m, cls), handler.generate_schema(validator(cls)))
    return cs.json_or_python_schema(
        json_schema=checked,
        python_schema=cs.union_schema([cs.is_instance_schema(cls), checked], mode="left_to_right"),
        serialization=cs.plain_serializer_function_ser_schema(
            lambda v, info: v.model_dump(mode=info.mode, exclude_none=info.exclude_none), info_arg=True))
