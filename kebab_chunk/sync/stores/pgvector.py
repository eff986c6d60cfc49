"""PostgreSQL + pgvector: chunks in a table of an existing database (``postgresql://...``).

Layout: table ``<table>`` with ``chunk_id text primary key``, ``label``,
``content_digest``, ``record_digest``, ``text`` (the embedded text: the record's
``embed_text``), ``metadata jsonb`` and ``embedding vector(<dimensions>)``, every column
``not null``. ``metadata`` is the whole chunk record except ``text``
(:func:`kebab_chunk.integrations._common.record_metadata`: the full metadata form's
fields, spans and lists as JSON), so SQL filters on any field
(``metadata->>'doc_id'``, ``metadata->'heading_path'``) and the record can be rebuilt
from ``metadata`` and the chunk's own text. The table ``<table>_sync_state`` holds one
row: the embedder the vectors came from (written when the table is created, so
:meth:`PgVectorStore.open` refuses another embedder even before the first sync finished;
the dimension is the ``embedding`` column's own type) and the last
:class:`~kebab_chunk.sync.store.SyncState` (null until a sync finished).

Every write is one transaction: an upsert or a delete of many rows lands whole or not
at all. Table names are plain identifiers (letters, digits, underscores), and are quoted
as identifiers in every statement anyway.

No approximate (HNSW or IVFFlat) index is created: which one fits, its distance
(``vector_cosine_ops``, ``vector_l2_ops``, ``vector_ip_ops``) and parameters depend on the
embedder and the queries, which only the user knows; an IVFFlat index built on an empty
table is useless; every index slows the bulk upserts of a first sync; and exact search is
right for small tables. Create one once, for example
``CREATE INDEX ON kebab_chunks USING hnsw (embedding vector_cosine_ops)``: PostgreSQL
keeps it up to date through every later sync.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.integrations._common import as_record, record_metadata
from kebab_chunk.sync.store import StoredRow, StoreRow, SyncState

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

__all__ = ["PgVectorStore"]

_INSTALL = "pip install 'kebab-chunk[sync]'"
#: A plain identifier short enough that ``<table>_sync_state`` fits PostgreSQL's 63 bytes.
_STATE_SUFFIX = "_sync_state"
_NAME = re.compile(rf"^[A-Za-z_][A-Za-z0-9_]{{0,{62 - len(_STATE_SUFFIX)}}}$")
#: Rows per executemany call (each call is pipelined; the whole write is one transaction).
_BATCH = 1000
#: The tables named %s in the schema ``CREATE TABLE`` writes to (the first on the path).
_TABLES = (
    "pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relname = %s AND n.nspname = current_schema() AND c.relkind IN ('r', 'p')"
)


def _batches(rows: Sequence[StoreRow]) -> Iterator[Sequence[StoreRow]]:
    for start in range(0, len(rows), _BATCH):
        yield rows[start : start + _BATCH]


def _where(dsn: str) -> str:
    """The server and database of ``dsn`` for messages, never its password."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.Error:  # a DSN libpq cannot parse: say nothing of it
        return "the given URL"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"{host}{port}/{parts.get('dbname') or parts.get('user') or 'postgres'}"


def _reason(exc: Exception) -> str:
    """The cause in a libpq message (``... failed: Connection refused``), one line."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first.rpartition("failed: ")[2].strip().rstrip(".") or first


class PgVectorStore:
    """Chunks in the table ``table`` of the PostgreSQL database at ``dsn`` (with pgvector)."""

    kind = "pgvector"

    def __init__(self, dsn: str, table: str = "kebab_chunks") -> None:
        if not _NAME.match(table):
            raise UsageError(
                f"store table name {table!r} is not a plain identifier of at most "
                f"{63 - len(_STATE_SUFFIX)} characters; use letters, digits and underscores, "
                "starting with a letter or underscore."
            )
        try:
            import pgvector.psycopg  # noqa: F401
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError(
                f"the PostgreSQL store needs the sync extra; install it with {_INSTALL}."
            ) from exc
        self.dsn = dsn
        self.table_name = table
        self._conn: psycopg.Connection[Any] | None = None
        self._dimensions: int | None = None

    # ------------------------------------------------------------------ connection

    def _ident(self, suffix: str = "") -> sql.Identifier:
        from psycopg import sql

        return sql.Identifier(self.table_name + suffix)

    def _connection(self) -> psycopg.Connection[Any]:
        import psycopg

        if self._conn is None or self._conn.closed:
            try:
                conn = psycopg.connect(self.dsn, autocommit=True)
            except psycopg.Error as exc:  # OperationalError; ProgrammingError: a bad DSN
                reason = _reason(exc)
                raise UsageError(
                    f"cannot connect to the PostgreSQL store at {_where(self.dsn)} ({reason}); "
                    "check the URL and that the server is running."
                ) from None
            self._conn = conn
        return self._conn

    def _ensure_extension(self, conn: psycopg.Connection[Any]) -> None:
        """``CREATE EXTENSION vector`` if missing, then teach psycopg the vector type."""
        import psycopg
        from pgvector.psycopg import register_vector

        have = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if have is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise UsageError(
                    f"the database {_where(self.dsn)} has no pgvector extension and it could "
                    f"not be created ({_reason(exc)}); run CREATE "
                    "EXTENSION vector there as a superuser, or install pgvector on the server."
                ) from None
        register_vector(conn)

    def _exists(self, conn: psycopg.Connection[Any], name: str) -> bool:
        """Whether the table ``name`` exists in the schema tables are created in."""
        found = conn.execute(f"SELECT 1 FROM {_TABLES}", (name,)).fetchone()
        return found is not None

    def _opened(self) -> psycopg.Connection[Any]:
        if self._dimensions is None:
            raise UsageError("the store is not open; call open(dimensions, embedder) first.")
        return self._connection()

    # ------------------------------------------------------------------ protocol

    def open(self, dimensions: int, embedder: str) -> None:
        from psycopg import sql

        if not 0 < dimensions <= 16000:  # pgvector's limit for the vector type
            raise UsageError(
                f"pgvector stores vectors of 1 to 16000 floats, not {dimensions}; "
                "use an embedder with fewer dimensions."
            )
        conn = self._connection()
        self._ensure_extension(conn)
        table, state = self._ident(), self._ident(_STATE_SUFFIX)
        with conn.transaction():
            # Two syncs opening a missing table at once: the second waits, then sees it.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.table_name,))
            if not self._exists(conn, self.table_name):
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE {} ("
                        "chunk_id text PRIMARY KEY, "
                        "label text NOT NULL, "
                        "content_digest text NOT NULL, "
                        "record_digest text NOT NULL, "
                        "text text NOT NULL, "
                        "metadata jsonb NOT NULL, "
                        "embedding vector({}) NOT NULL)"
                    ).format(table, sql.Literal(dimensions))
                )
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE IF NOT EXISTS {} ("
                        "one boolean PRIMARY KEY DEFAULT true CHECK (one), "
                        "embedder text NOT NULL, "
                        "output text, snapshot bigint, labels text[], state_embedder text)"
                    ).format(state)
                )
                # A state left by an earlier table of this name describes nothing now.
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (embedder) VALUES (%s) ON CONFLICT (one) DO UPDATE SET "
                        "embedder = EXCLUDED.embedder, output = NULL, snapshot = NULL, "
                        "labels = NULL, state_embedder = NULL"
                    ).format(state),
                    (embedder,),
                )
        size, theirs = self._vectors()
        if size != dimensions or theirs != embedder:
            raise UsageError(
                f"the store table {self.table_name!r} in {_where(self.dsn)} holds "
                f"{size}-float vectors of {theirs or 'an unknown embedder'}, not "
                f"{dimensions}-float vectors of {embedder}; sync into another table or use "
                "that embedder."
            )
        self._dimensions = dimensions

    def _vectors(self) -> tuple[int | None, str | None]:
        """The dimension of the ``embedding`` column and the embedder in the state table."""
        from psycopg import sql

        conn = self._connection()
        row = conn.execute(
            "SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname = %s "
            "AND n.nspname = current_schema() AND c.relkind IN ('r', 'p') "
            "AND a.attname = 'embedding' AND NOT a.attisdropped",
            (self.table_name,),
        ).fetchone()
        size = int(row[0]) if row is not None and row[0] > 0 else None
        if not self._exists(conn, self.table_name + _STATE_SUFFIX):
            return size, None
        found = conn.execute(
            sql.SQL("SELECT embedder FROM {}").format(self._ident(_STATE_SUFFIX))
        ).fetchone()
        return size, (str(found[0]) if found is not None else None)

    def state(self) -> SyncState | None:
        from psycopg import sql

        conn = self._connection()
        if not self._exists(conn, self.table_name + _STATE_SUFFIX):
            return None
        row = conn.execute(
            sql.SQL("SELECT output, snapshot, labels, state_embedder FROM {}").format(
                self._ident(_STATE_SUFFIX)
            )
        ).fetchone()
        if row is None or row[0] is None:
            return None
        output, snapshot, labels, embedder = row
        return SyncState(str(output), int(snapshot), tuple(labels or ()), str(embedder))

    def set_state(self, state: SyncState) -> None:
        from psycopg import sql

        conn = self._opened()
        with conn.transaction():
            conn.execute(
                sql.SQL(
                    "UPDATE {} SET output = %s, snapshot = %s, labels = %s, state_embedder = %s"
                ).format(self._ident(_STATE_SUFFIX)),
                (state.output, state.snapshot, list(state.labels), state.embedder),
            )

    def digests(self) -> dict[str, tuple[str, str]]:
        from psycopg import sql

        rows = self._opened().execute(
            sql.SQL("SELECT chunk_id, content_digest, record_digest FROM {}").format(self._ident())
        )
        return {str(i): (str(c), str(r)) for i, c, r in rows}

    def _vector(self, row: StoreRow) -> Any:
        from pgvector import Vector

        if row.vector is None:
            raise ValueError(f"upsert of {row.chunk_id} has no vector")
        values = [float(x) for x in row.vector]
        if len(values) != self._dimensions:
            raise ValueError(
                f"upsert of {row.chunk_id} has a {len(values)}-float vector, but the store "
                f"table {self.table_name!r} holds {self._dimensions}-float vectors."
            )
        return Vector(values)

    def _values(self, row: StoreRow) -> tuple[Any, ...]:
        from psycopg.types.json import Jsonb

        metadata = record_metadata(as_record(row.record))
        return (
            row.chunk_id,
            row.label,
            row.content_digest,
            row.record_digest,
            row.text,
            Jsonb(metadata),
        )

    def upsert(self, rows: Sequence[StoreRow]) -> None:
        from psycopg import sql

        if not rows:
            return
        conn = self._opened()
        query = sql.SQL(
            "INSERT INTO {} (chunk_id, label, content_digest, record_digest, text, metadata, "
            "embedding) VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (chunk_id) DO UPDATE SET label = EXCLUDED.label, "
            "content_digest = EXCLUDED.content_digest, record_digest = EXCLUDED.record_digest, "
            "text = EXCLUDED.text, metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding"
        ).format(self._ident())
        with conn.transaction(), conn.cursor() as cur:
            for batch in _batches(rows):
                cur.executemany(query, [(*self._values(r), self._vector(r)) for r in batch])

    def update_metadata(self, rows: Sequence[StoreRow]) -> None:
        from psycopg import sql

        if not rows:
            return
        conn = self._opened()
        query = sql.SQL(
            "UPDATE {} SET label = %s, content_digest = %s, record_digest = %s, text = %s, "
            "metadata = %s WHERE chunk_id = %s"
        ).format(self._ident())
        with conn.transaction(), conn.cursor() as cur:
            for batch in _batches(rows):
                params = []
                for row in batch:
                    chunk_id, *rest = self._values(row)
                    params.append((*rest, chunk_id))
                cur.executemany(query, params)

    def delete(self, chunk_ids: Sequence[str]) -> None:
        from psycopg import sql

        if not chunk_ids:
            return
        conn = self._opened()
        with conn.transaction():
            conn.execute(
                sql.SQL("DELETE FROM {} WHERE chunk_id = ANY(%s)").format(self._ident()),
                (list(chunk_ids),),
            )

    def rows(self) -> list[StoredRow]:
        from psycopg import sql

        cursor = self._opened().execute(
            sql.SQL(
                "SELECT chunk_id, label, content_digest, record_digest, text, metadata, "
                'embedding FROM {} ORDER BY chunk_id COLLATE "C"'
            ).format(self._ident())
        )
        return [
            StoredRow(
                str(chunk_id),
                str(label),
                str(content),
                str(record),
                str(text),
                dict(metadata),
                tuple(float(x) for x in embedding.to_list()),
            )
            for chunk_id, label, content, record, text, metadata, embedding in cursor
        ]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn = None
        self._dimensions = None
