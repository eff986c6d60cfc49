"""Fixtures of the sync tests: a throwaway PostgreSQL + pgvector server for the session.

Missing PostgreSQL or pgvector is a failure, never a skip: ``pg_dsn`` runs
tests/sync/ensure_pgvector.sh (a fast no-op once pgvector is installed) and fails with its
output when it cannot provide them.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sync.postgres import throwaway_postgres

ENSURE_SCRIPT = Path(__file__).resolve().parent / "ensure_pgvector.sh"


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """The DSN of a database with the vector extension, on a server started for the session."""
    result = subprocess.run(
        ["bash", str(ENSURE_SCRIPT)], capture_output=True, text=True, timeout=1800, check=False
    )
    if result.returncode != 0:
        pytest.fail(
            f"{ENSURE_SCRIPT.name} could not provide PostgreSQL 15 with pgvector (exit "
            f"{result.returncode}), and the sync tests need it; these tests never skip:\n"
            f"{result.stdout}{result.stderr}",
            pytrace=False,
        )
    with throwaway_postgres() as dsn:
        yield dsn
