"""A throwaway PostgreSQL server with pgvector, for the sync tests.

:func:`throwaway_postgres` runs ``initdb`` in a new temporary directory, starts the
server on loopback only (``127.0.0.1``, a free port, its unix socket inside the temporary
directory, trust authentication), creates a database with ``CREATE EXTENSION vector``
and yields its DSN; at exit it stops the server (``pg_ctl stop -m fast``) and removes the
directory, also when the body or the start failed. PostgreSQL refuses to run as root, so
as root the server runs as the ``postgres`` system user (Debian's package creates it)
through ``runuser``; otherwise as the current user. Durability is switched off
(``fsync``, ``synchronous_commit``, ``full_page_writes``): the data dies with the test.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
SYSTEM_USER = "postgres"
SUPERUSER = "postgres"
DATABASE = "kebab"
#: Seconds pg_ctl waits for the server to start or stop.
TIMEOUT = 60


class PostgresError(RuntimeError):
    """The throwaway server could not be set up; the message holds the tool's output."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (at the time of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user() -> list[str]:
    """The command prefix that runs a server tool as a user PostgreSQL accepts."""
    return ["runuser", "-u", SYSTEM_USER, "--"] if os.geteuid() == 0 else []


def _clean_env() -> dict[str, str]:
    """The environment without PG* variables, so nothing points at another server."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env["LC_ALL"] = "C"
    return env


def _run(args: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run(
        [*_as_server_user(), *args],
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT + 30,
        check=False,
    )
    if result.returncode != 0:
        raise PostgresError(
            f"{what} failed (exit {result.returncode}): {result.stdout}{result.stderr}"
        )


def _server_log(log: Path) -> str:
    try:
        return log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no server log)"


@contextlib.contextmanager
def throwaway_postgres(pg_bin: Path = PG_BIN) -> Iterator[str]:
    """Start a PostgreSQL server with pgvector on loopback; yield a DSN to its database."""
    import psycopg  # the sync extra, installed with the dev extra

    root = Path(tempfile.mkdtemp(prefix="kebab-pg-"))
    data, sockets, log = root / "data", root / "sockets", root / "server.log"
    started = False
    try:
        sockets.mkdir()
        if os.geteuid() == 0:
            shutil.chown(root, SYSTEM_USER, SYSTEM_USER)
            shutil.chown(sockets, SYSTEM_USER, SYSTEM_USER)
        _run(
            [
                str(pg_bin / "initdb"),
                "--pgdata",
                str(data),
                "--username",
                SUPERUSER,
                "--auth",
                "trust",
                "--encoding",
                "UTF8",
                "--locale",
                "C",
                "--no-sync",
            ],
            root,
            "initdb",
        )
        port = free_port()
        options = " ".join(
            [
                "-c listen_addresses=127.0.0.1",
                f"-c port={port}",
                f"-c unix_socket_directories={sockets}",
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
            ]
        )
        started = True  # from here on a half-started server is stopped too
        try:
            _run(
                [
                    str(pg_bin / "pg_ctl"),
                    "start",
                    "--pgdata",
                    str(data),
                    "--wait",
                    f"--timeout={TIMEOUT}",
                    "--log",
                    str(log),
                    "--options",
                    options,
                ],
                root,
                "pg_ctl start",
            )
        except PostgresError as exc:
            raise PostgresError(f"{exc}\nserver log:\n{_server_log(log)}") from None
        admin = f"host=127.0.0.1 port={port} user={SUPERUSER} dbname=postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        dsn = f"host=127.0.0.1 port={port} user={SUPERUSER} dbname={DATABASE}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        yield dsn
    finally:
        try:
            if started:
                _stop(pg_bin, data, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _stop(pg_bin: Path, data: Path, root: Path) -> None:
    """``pg_ctl stop -m fast``; if that fails, kill the postmaster so nothing outlives us."""
    if not (data / "postmaster.pid").exists():
        return
    try:
        _run(
            [str(pg_bin / "pg_ctl"), "stop", "--pgdata", str(data), "--mode", "fast", "--wait"],
            root,
            "pg_ctl stop",
        )
    except (PostgresError, subprocess.TimeoutExpired):
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((data / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, 9)
        raise
