"""The differential tests need the compiled core; without it they skip, unless
``KEBAB_REQUIRE_CORE=1`` says the core was built for this run (``./run_local.sh test`` sets
it whenever it built the core), where a missing core is a failure, not a skip."""

from __future__ import annotations

import os
from collections.abc import Iterator
from types import ModuleType

import pytest

from kebab_chunk import _core


@pytest.fixture(scope="module")
def compiled() -> Iterator[ModuleType]:
    """The installed core module; the module's tests run with ``KEBAB_CORE=auto``."""
    module = _core.installed()
    if module is None:
        if os.environ.get("KEBAB_REQUIRE_CORE") == "1":
            pytest.fail("KEBAB_REQUIRE_CORE=1 but kebab_chunk_core is not importable")
        pytest.skip("the compiled core is not built (pip install ./native)")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KEBAB_CORE", "auto")
        yield module
