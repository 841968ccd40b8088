"""The base of every pattern-file model: unknown keys are errors, instances are frozen.

The models are plain frozen dataclasses (``logscan.plain``, ``@strict``): a scan that reads the
packs from the cache builds no pydantic model (start-up, issue 18). Loading a TOML file validates
it through the pydantic model ``logscan.validate`` generates from the class (``extra="forbid"``:
a typo in a pack never silently disables a rule; ``spec`` constraints, ``@after_check`` /
``@field_check`` validators), then keeps the plain objects.
"""

from ..plain import PlainModel, plain


class _Strict(PlainModel):
    __slots__ = ()


#: class decorator of a pattern-file model: ``@plain(strict=True)``
strict = plain(strict=True)
