"""Plain report classes: stdlib dataclasses (with slots) that answer the part of pydantic's model
interface logscan and its users call, without importing pydantic (start-up, issue 18).

``@plain`` turns a class body of annotated fields into a slotted dataclass and adds:

- ``model_dump(mode="python"|"json", exclude=, exclude_none=)`` and ``model_dump_json(indent=,
  exclude_none=)``: the dict / JSON text pydantic's methods give for the same model (JSON by the
  ``json`` module, non-ASCII kept, the same separators: byte-identical, tests/test_plain_models.py);
- ``model_copy(update=, deep=)``, ``model_fields`` and ``dict(obj)`` (iteration over
  ``(name, value)``), as on a pydantic model;
- ``model_validate`` / ``model_validate_json`` / ``model_json_schema``: these are where validation
  or a schema is the point (``logscan schema``, a ``--baseline`` report, a follow checkpoint), so
  they go through a pydantic model generated from the dataclass (``logscan.validate``), imported
  only then; ``pydantic.ValidationError`` is what they raise on bad input.

What construction does, as pydantic did for the values logscan passes: a list or dict argument is
copied (the model never shares a caller's container), and a string given for an ``Enum`` field is
turned into the member (``ValueError`` on an unknown value). Nothing else is converted or checked.

Field metadata (``dataclasses.field(metadata=...)``): ``exclude`` keeps a field out of every dump
and out of the schema (pydantic ``Field(exclude=True)`` + ``SkipJsonSchema``). A class attribute
``_omit_none`` (a tuple of field names) drops those fields from a dump when they are None.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from enum import Enum
from typing import Any, Optional

_ATOMS = frozenset((str, int, bool, float, type(None)))


class PlainModel:
    """Base of the ``@plain`` classes: the pydantic-like methods (see the module docstring)."""

    __slots__ = ()
    model_fields: typing.ClassVar[dict[str, dataclasses.Field]] = {}
    _omit_none: typing.ClassVar[tuple[str, ...]] = ()
    _excluded: typing.ClassVar[frozenset[str]] = frozenset()

    def __iter__(self):
        for name in self.model_fields:
            yield name, getattr(self, name)

    def model_dump(self, *, mode: str = "python", exclude: Optional[set[str]] = None,
                   exclude_none: bool = False) -> dict[str, Any]:
        """The fields as a dict, nested models as dicts; ``mode="json"``: enums as their values."""
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
        import copy

        new = copy.deepcopy(self) if deep else copy.copy(self)
        for k, v in (update or {}).items():
            setattr(new, k, v)
        return new

    @classmethod
    def model_validate(cls, obj: Any):
        """Validate ``obj`` (a dict as JSON gives) with the generated pydantic model and return the
        plain object. Raises ``pydantic.ValidationError``."""
        from .validate import to_plain, validator

        return to_plain(validator(cls).model_validate(obj), cls)

    @classmethod
    def model_validate_json(cls, data: str | bytes):
        """``model_validate`` of a JSON document. Raises ``pydantic.ValidationError``."""
        from .validate import to_plain, validator

        return to_plain(validator(cls).model_validate_json(data), cls)

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


def _enum_of(tp: Any) -> Optional[type]:
    """The Enum class of ``E`` or ``Optional[E]``, else None."""
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if typing.get_origin(tp) is typing.Union:
        for a in typing.get_args(tp):
            if isinstance(a, type) and issubclass(a, Enum):
                return a
    return None


def _post_init(copies: tuple[tuple[str, type], ...], enums: tuple[tuple[str, type], ...]):
    def __post_init__(self) -> None:
        for name, kind in copies:
            v = getattr(self, name)
            if v is not None:
                object.__setattr__(self, name, kind(v))
        for name, enum in enums:
            v = getattr(self, name)
            if v is not None and not isinstance(v, enum):
                object.__setattr__(self, name, enum(v))
    return __post_init__


def plain(cls=None, *, eq: bool = True):
    """Class decorator: a slotted dataclass with ``PlainModel``'s methods (module docstring).
    ``eq=False`` keeps the class's own ``__eq__``."""
    def wrap(c):
        hints = typing.get_type_hints(c)
        copies, enums = [], []
        for name in c.__dict__.get("__annotations__", {}):
            tp = hints[name]
            base = typing.get_origin(tp) or tp
            if typing.get_origin(tp) is typing.Union:
                args = [a for a in typing.get_args(tp) if a is not type(None)]
                base = typing.get_origin(args[0]) or args[0] if len(args) == 1 else None
            if base in (list, dict):
                copies.append((name, base))
            e = _enum_of(tp)
            if e is not None:
                enums.append((name, e))
        if copies or enums:
            c.__post_init__ = _post_init(tuple(copies), tuple(enums))
        d = dataclasses.dataclass(slots=True, eq=eq, kw_only=True)(c)
        fields = dataclasses.fields(d)
        d.model_fields = {f.name: f for f in fields}
        d._excluded = frozenset(f.name for f in fields if f.metadata.get("exclude"))
        if not eq:
            d.__hash__ = None
        return d

    return wrap if cls is None else wrap(cls)
