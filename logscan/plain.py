"""Plain report classes: slotted classes of annotated fields that answer the part of pydantic's
model interface logscan and its users call, without importing pydantic (start-up, issue 18).

``@plain`` turns a class body of annotated fields (defaults as values or ``dataclasses.field``)
into a slotted class with a keyword-only ``__init__``, as ``dataclass(kw_only=True, slots=True)``
would (without its per-class cost), and adds:

- ``model_dump(mode="python"|"json", exclude=, exclude_none=)`` and ``model_dump_json(indent=,
  exclude_none=)``: the dict / JSON text pydantic's methods give for the same model (JSON by the
  ``json`` module, non-ASCII kept, the same separators: byte-identical, tests/test_plain_models.py);
- ``model_copy(update=, deep=)``, ``model_fields`` and ``dict(obj)`` (iteration over
  ``(name, value)``), as on a pydantic model;
- ``model_validate`` / ``model_validate_json`` / ``model_json_schema``: these are where validation
  or a schema is the point (``logscan schema``, a ``--baseline`` report, a follow checkpoint), so
  they go through a pydantic model generated from the dataclass (``logscan.validate``), imported
  only then; ``pydantic.ValidationError`` is what they raise on bad input. ``model_validate``
  first tries ``plaincheck.exact``, which builds the object of a document whose values already
  have exactly their fields' types (what logscan itself wrote) without pydantic.

What construction does, as pydantic did for the values logscan passes: a list or dict argument is
copied (the model never shares a caller's container), and a string given for an ``Enum`` field is
turned into the member (``ValueError`` on an unknown value). Nothing else is converted or checked.

Field metadata (``dataclasses.field(metadata=...)``): ``exclude`` keeps a field out of every dump
and out of the schema (pydantic ``Field(exclude=True)`` + ``SkipJsonSchema``). A class attribute
``_omit_none`` (a tuple of field names) drops those fields from a dump when they are None.

Pattern-pack models (``@plain(strict=True)``, ``logscan.packs.model``) are frozen, and their
validator forbids unknown keys. ``spec(min_length=1, ...)`` gives a field pydantic ``Field``
constraints, ``@after_check`` / ``@field_check("name")`` mark methods that become the validator's
``model_validator(mode="after")`` / ``field_validator``. Constructing such a class directly
validates through pydantic, as the pydantic model did, only when it has to: the class has a
constraint or a check, or a nested value is not yet a model (a dict, as TOML gives). Objects made
from a validated model (``validate.to_plain``), ``model_construct`` and ``model_copy`` skip that,
so a scan that reads the packs from the cache never imports pydantic.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from datetime import date as _date
from enum import Enum
from typing import Any, Optional

_ATOMS = frozenset((str, int, bool, float, type(None)))


class PlainModel:
    """Base of the ``@plain`` classes: the pydantic-like methods (see the module docstring)."""

    __slots__ = ()
    model_fields: typing.ClassVar[dict[str, dataclasses.Field]] = {}
    _omit_none: typing.ClassVar[tuple[str, ...]] = ()
    _excluded: typing.ClassVar[frozenset[str]] = frozenset()
    _strict: typing.ClassVar[bool] = False
    _setters: typing.ClassVar[tuple] = ()
    _pending: typing.ClassVar[Optional[tuple]] = None  #: set until ``plaininit.finish`` built ``__init__``

    def __iter__(self):
        for name in self.model_fields:
            yield name, getattr(self, name)

    # generic methods instead of the ones ``dataclasses`` writes and compiles for each class
    # (~90 classes: their ``exec`` was a measurable part of start-up); same results
    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.model_fields)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.model_fields)

    __hash__ = None  # type: ignore[assignment]  # mutable; a strict (frozen) class hashes its values

    def _frozen_hash(self) -> int:
        return hash(tuple(getattr(self, n) for n in self.model_fields))

    def __reduce__(self):
        """Pickle as (class, field values): unpickling the pack cache's ~5000 objects this way costs
        a third of the ``__setstate__`` dataclasses gives slotted frozen classes."""
        return (_rebuild, (self.__class__, tuple([getattr(self, n) for n in self.model_fields])))

    def model_dump(self, *, mode: str = "python", exclude: Optional[set[str]] = None,
                   exclude_none: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested models as dicts; ``mode="json"``: enums as their values, dates as ISO text."""
        return _dump_model(self, mode == "json", exclude, exclude_none)

    def model_dump_json(self, *, indent: Optional[int] = None, exclude_none: bool = False) -> str:
        """JSON text equal to pydantic's ``model_dump_json`` of the same model (same separators,
        non-ASCII characters written as they are)."""
        d = _dump_model(self, True, None, exclude_none)
        if indent is None:
            return json.dumps(d, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(d, ensure_ascii=False, indent=indent)

    def model_copy(self, *, update: Optional[dict[str, Any]] = None, deep: bool = False):
        """A shallow (or ``deep``) copy with ``update``'s fields set (not converted, as pydantic)."""
        if deep:
            import copy

            new = copy.deepcopy(self)
        else:  # what copy.copy does with ``__reduce__`` (no class here defines ``__copy__``), without its dispatch
            new = _rebuild(self.__class__, tuple([getattr(self, n) for n in self.model_fields]))
        for k, v in (update or {}).items():
            object.__setattr__(new, k, v)
        return new

    @classmethod
    def model_construct(cls, **values: Any):
        """An object of these values and the defaults, never validated (as pydantic's)."""
        return bare(cls, values)

    @classmethod
    def model_validate(cls, obj: Any):
        """Validate ``obj`` (a dict as JSON gives) and return the plain object: a well-formed ``obj``
        without pydantic (``plaincheck.exact``), anything else with the generated pydantic model.
        Raises ``pydantic.ValidationError``."""
        from .plaincheck import exact

        got = exact(cls, obj)
        if got is not None:
            return got
        from .validate import to_plain, validator

        return to_plain(validator(cls).model_validate(obj), cls)

    @classmethod
    def model_validate_json(cls, data: str | bytes):
        """``model_validate`` of a JSON document. Raises ``pydantic.ValidationError``."""
        from .validate import to_plain, validator

        return to_plain(validator(cls).model_validate_json(data), cls)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """A plain class as a field of a pydantic model (``validate.core_schema_of``)."""
        from .validate import core_schema_of

        return core_schema_of(cls, handler)

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        """The JSON schema pydantic gives for the model (the generated pydantic model's)."""
        from .validate import validator

        return validator(cls).model_json_schema()


def _dump(v: Any, json_mode: bool, exclude_none: bool) -> Any:
    if type(v) in _ATOMS:
        return v
    if isinstance(v, PlainModel):
        return _dump_model(v, json_mode, None, exclude_none)
    if isinstance(v, Enum):
        return v.value if json_mode else v
    if type(v) is _date:  # a gate's date (GateResult.date, Allowance.expires): ISO text, as pydantic
        return v.isoformat() if json_mode else v
    if isinstance(v, (list, tuple)):
        return [_dump(x, json_mode, exclude_none) for x in v]
    if isinstance(v, dict):
        return {k: _dump(x, json_mode, exclude_none) for k, x in v.items()}
    return v


def _dump_model(m: PlainModel, json_mode: bool, exclude: Optional[set[str]], exclude_none: bool) -> dict[str, Any]:
    out = {}
    skip = m._excluded
    for name in m.model_fields:
        if name in skip or (exclude and name in exclude):
            continue
        v = getattr(m, name)
        if v is None and (exclude_none or name in m._omit_none):
            continue
        out[name] = _dump(v, json_mode, exclude_none)
    return out


def _rebuild(cls: type, values: tuple):
    obj = object.__new__(cls)
    for put, v in zip(cls._setters, values):  # the slots' own setters: no attribute lookup, no frozen check
        put(obj, v)
    return obj


def bare(cls: type, values: dict[str, Any]):
    """A ``cls`` object holding ``values`` (defaults for the rest) without running ``__init__``."""
    obj = object.__new__(cls)
    for name, f in cls.model_fields.items():
        if name in values:
            v = values[name]
        elif f.default is not dataclasses.MISSING:
            v = f.default
        elif f.default_factory is not dataclasses.MISSING:
            v = f.default_factory()
        else:
            raise TypeError(f"{cls.__name__}: missing field {name!r}")
        object.__setattr__(obj, name, v)
    return obj


def spec(default: Any = dataclasses.MISSING, *, default_factory: Any = dataclasses.MISSING,
         **constraints: Any) -> Any:
    """A dataclass field whose validator has pydantic ``Field`` ``constraints`` (``min_length``,
    ``ge``, ``le``)."""
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={"constraints": constraints})


def after_check(fn):
    """Mark ``fn(self) -> self`` as the validator's ``model_validator(mode="after")``; it sees the
    validated pydantic object, raises ``ValueError`` on a bad one."""
    fn._plain_check = ("after",)
    return fn


def field_check(*names: str):
    """Mark ``fn(cls, value) -> value`` as the validator's ``field_validator(*names)``."""
    def deco(fn):
        fn._plain_check = ("field", names)
        return fn
    return deco


def _frozen_setattr(self, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _is_classvar(ann: Any) -> bool:
    """An annotation (a string under ``from __future__ import annotations``) that is a ``ClassVar``."""
    if isinstance(ann, str):
        return ann.startswith(("ClassVar", "typing.ClassVar"))
    return typing.get_origin(ann) is typing.ClassVar


def _lazy_init(holder: list):
    """The first ``__init__`` of a plain class: builds the real one (``plaininit.finish``), then runs it."""
    def __init__(self, *args, **kwargs):
        from .plaininit import finish

        cls = holder[0]
        finish(cls)
        cls.__init__(self, *args, **kwargs)
    return __init__


def plain(cls=None, *, eq: bool = True, strict: bool = False):
    """Class decorator: a slotted class of annotated fields with ``PlainModel``'s methods (module
    docstring), keyword-only ``__init__`` as a ``dataclass(kw_only=True)`` has, field defaults
    given as values or ``dataclasses.field`` / ``spec``. ``eq`` is kept for the signature (a
    class's own ``__eq__`` is always kept); ``strict``: a frozen pattern-pack model (its validator
    forbids unknown keys; direct construction validates when it has to). Type hints are resolved
    and ``__init__`` compiled on the first construction (``plaininit.finish``)."""
    def wrap(c):
        own = c.__dict__.get("__annotations__", {})
        fields: dict[str, dataclasses.Field] = {}
        for name, ann in own.items():
            if _is_classvar(ann):
                continue
            v = c.__dict__.get(name, dataclasses.MISSING)
            f = v if isinstance(v, dataclasses.Field) else dataclasses.field(default=v)
            f.name, f.type = name, ann
            fields[name] = f
        all_fields: dict[str, dataclasses.Field] = {}
        for b in reversed(c.__mro__[1:]):
            all_fields.update(getattr(b, "model_fields", {}) if b is not PlainModel else {})
        all_fields.update(fields)
        checks = [v for v in c.__dict__.values() if hasattr(v, "_plain_check")]
        constrained = any(f.metadata.get("constraints") for f in fields.values())
        always = strict and bool(checks or constrained)
        ns = {k: v for k, v in c.__dict__.items() if k not in fields and k not in ("__dict__", "__weakref__")}
        ns["__slots__"] = tuple(fields)
        holder: list = []
        ns["__init__"] = _lazy_init(holder)
        if strict:
            ns["__setattr__"], ns["__delattr__"] = _frozen_setattr, _frozen_delattr
            if "__eq__" not in c.__dict__:
                ns["__hash__"] = PlainModel._frozen_hash
        d = type(c)(c.__name__, c.__bases__, ns)
        holder.append(d)
        d.model_fields = all_fields
        d._setters = tuple(getattr(d, n).__set__ for n in all_fields)
        d._excluded = frozenset(n for n, f in all_fields.items() if f.metadata.get("exclude"))
        d._strict = strict
        d._pending = (fields, strict, always)
        return d

    return wrap if cls is None else wrap(cls)
