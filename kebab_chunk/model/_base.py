"""Shared pydantic configuration for the frozen, strict data model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """Immutable model that rejects unknown fields, so records round-trip exactly."""

    model_config = ConfigDict(frozen=True, extra="forbid")
