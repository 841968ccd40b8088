"""The base of every pattern-file model: unknown keys are errors, instances are frozen.

``extra="forbid"``: a typo in a pack never silently disables a rule; ``defer_build``: a model
is built on first use (start-up pays only for the files it reads).
"""

from pydantic import BaseModel, ConfigDict


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
