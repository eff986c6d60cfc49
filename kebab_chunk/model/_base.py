"""Shared pydantic configuration for the frozen, strict data model."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable model that rejects unknown fields, so records round-trip exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")


M = TypeVar("M", bound=Frozen)


_new = object.__new__
_set = object.__setattr__


def trusted(cls: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``cls`` holding ``values`` as given, without running validation.

    Only for hot internal paths whose inputs are produced by our own code and already are
    exactly what validation would make of them: ``values`` holds every field, in the
    class's field order, with the exact types and constrained values the schema would keep
    (defaults included), and ``fields_set`` is the set of fields a validating call would
    have been given explicitly. The result is then indistinguishable from a validated
    instance (equality, hashing, ``model_dump``, pickling); tests check this per model.
    Public constructors keep validating.
    """
    obj = _new(cls)
    _set(obj, "__dict__", values)
    _set(obj, "__pydantic_fields_set__", fields_set)
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj
