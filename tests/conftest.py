"""Suite-wide settings: hypothesis example budgets (small in CI, larger locally); fixtures
shared by several test packages."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "local", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fast", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("KEBAB_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temporary directory that a user without root's privileges can traverse (pytest's
    own is 0700); any mode changes below it are undone before it is removed."""
    path = Path(tempfile.mkdtemp(prefix="kebab-open-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for d, _, _ in os.walk(path):
            os.chmod(d, 0o755)
        shutil.rmtree(path)
