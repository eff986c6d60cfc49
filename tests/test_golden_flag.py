"""CI must never regenerate golden snapshots: that would hide an output change."""

from __future__ import annotations

import os

from tests.golden import UPDATE_FLAG


def test_golden_update_flag_is_off_in_ci() -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        assert os.environ.get(UPDATE_FLAG) != "1", f"{UPDATE_FLAG} must not be set in CI"
    else:
        # Outside CI the flag may be set deliberately; the check above is what guards CI.
        assert os.environ.get(UPDATE_FLAG) in (None, "", "0", "1")
