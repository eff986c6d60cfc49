"""PgVectorStore against a real PostgreSQL 15 + pgvector server (the ``pg_dsn`` fixture).

Every test writes to its own table of the session's throwaway database and reads back
both through the store and with plain SQL, so a store that agrees with itself but writes
something else fails too.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from kebab_chunk.errors import MissingDependencyError, UsageError
from kebab_chunk.integrations._common import record_from_metadata
from kebab_chunk.integrations.markdown_chunker import MarkdownChunker
from kebab_chunk.model import Chunk
from kebab_chunk.sync.store import StoredRow, StoreRow, SyncState, VectorStore
from kebab_chunk.sync.stores import pgvector as pgvector_store
from kebab_chunk.sync.stores.pgvector import PgVectorStore
from tests.sync.postgres import free_port

DIMENSIONS = 4
EMBEDDER = "fake@1"
SAMPLE = (
    "# Café guide\n\nNaïve users read this — ✓ 日本語 too.\n\n"
    '![Flow diagram](img/flow.png "Data flow")\n\n## Steps\n\n'
    + "\n\n".join(f"Step {i} moves part {i} of the order along." for i in range(8))
)
_tables = itertools.count()


@pytest.fixture(scope="module")
def chunks() -> list[Chunk]:
    records = MarkdownChunker(max_chunk_size=120, overlap=0).chunk_records(
        SAMPLE, source="guides/café.md"
    )
    assert len(records) >= 4 and any(c.captions for c in records)
    return records


@pytest.fixture
def new_store(pg_dsn: str) -> Iterator[Callable[..., PgVectorStore]]:
    """A factory of handles on one fresh table (every call: the same table), all closed
    at the end."""
    table = f"pgv_{next(_tables)}"
    handles: list[PgVectorStore] = []

    def make(name: str = table) -> PgVectorStore:
        handle = PgVectorStore(pg_dsn, table=name)
        handles.append(handle)
        return handle

    yield make
    for handle in handles:
        handle.close()


def vector(seed: int) -> list[float]:
    """Floats that float32 holds exactly, so stored vectors compare with ``==``."""
    return [seed + 0.5, -seed / 4, 1 / 8, float(seed % 3)]


def store_row(
    chunk: Chunk,
    seed: int = 0,
    *,
    digest: str = "r1",
    with_vector: bool = True,
    label: str | None = None,
) -> StoreRow:
    return StoreRow(
        chunk_id=chunk.chunk_id,
        label=label or chunk.chunker_version,
        content_digest=f"c{seed}-{chunk.content_hash}",
        record_digest=digest,
        text=f"{chunk.heading_path} {chunk.text}",
        record=chunk.model_dump(mode="json"),
        vector=vector(seed) if with_vector else None,
    )


def expected(
    rows: Sequence[StoreRow], vectors: dict[str, Sequence[float]] | None = None
) -> list[StoredRow]:
    """What ``rows()`` must return after writing ``rows`` (vectors by id when kept)."""
    out = []
    for row in sorted(rows, key=lambda r: r.chunk_id):
        metadata = {k: v for k, v in row.record.items() if k != "text"}
        vec = vectors[row.chunk_id] if vectors else row.vector
        assert vec is not None
        out.append(
            StoredRow(
                row.chunk_id,
                row.label,
                row.content_digest,
                row.record_digest,
                row.text,
                metadata,
                tuple(vec),
            )
        )
    return out


def query(dsn: str, statement: str | sql.Composed, params: Sequence[Any] = ()) -> list[Any]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(statement, params).fetchall()


def execute(dsn: str, statement: str | sql.Composed) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute(statement)


def table_exists(dsn: str, name: str) -> bool:
    return bool(query(dsn, "SELECT 1 FROM pg_tables WHERE tablename = %s", (name,)))


def one_sentence(message: str) -> None:
    assert "\n" not in message and message.endswith(".")
    assert message.count(". ") == 0, message


# --- open -------------------------------------------------------------------------------


def test_open_creates_the_table_with_the_documented_columns(
    new_store: Callable[..., PgVectorStore], pg_dsn: str
) -> None:
    store = new_store()
    assert isinstance(store, VectorStore) and store.kind == "pgvector"
    assert not table_exists(pg_dsn, store.table_name)
    store.open(DIMENSIONS, EMBEDDER)
    columns = query(
        pg_dsn,
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
        "FROM pg_attribute a WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
        "AND NOT a.attisdropped ORDER BY a.attnum",
        (store.table_name,),
    )
    assert columns == [
        ("chunk_id", "text", True),
        ("label", "text", True),
        ("content_digest", "text", True),
        ("record_digest", "text", True),
        ("text", "text", True),
        ("metadata", "jsonb", True),
        ("embedding", f"vector({DIMENSIONS})", True),
    ]
    key = query(
        pg_dsn,
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
        (store.table_name,),
    )
    assert key == [("chunk_id",)]
    assert table_exists(pg_dsn, f"{store.table_name}_sync_state")
    assert store.rows() == [] and store.digests() == {} and store.state() is None
    store.open(DIMENSIONS, EMBEDDER)  # opening an existing table again is fine
    assert store.rows() == []


@pytest.mark.parametrize(
    ("dimensions", "embedder", "named"),
    [(8, EMBEDDER, "8-float"), (DIMENSIONS, "other@2", "other@2")],
)
def test_reopening_with_another_dimension_or_embedder_is_refused_in_one_sentence(
    new_store: Callable[..., PgVectorStore],
    chunks: list[Chunk],
    dimensions: int,
    embedder: str,
    named: str,
) -> None:
    first = new_store()
    first.open(DIMENSIONS, EMBEDDER)
    first.upsert([store_row(chunks[0])])
    with pytest.raises(UsageError) as refused:
        new_store().open(dimensions, embedder)
    message = str(refused.value)
    one_sentence(message)
    assert f"{DIMENSIONS}-float vectors of {EMBEDDER}" in message and named in message
    again = new_store()
    again.open(DIMENSIONS, EMBEDDER)
    assert [r.chunk_id for r in again.rows()] == [chunks[0].chunk_id]


def test_a_table_not_made_by_sync_is_refused(
    new_store: Callable[..., PgVectorStore], pg_dsn: str
) -> None:
    store = new_store()
    execute(
        pg_dsn,
        sql.SQL("CREATE TABLE {} (chunk_id text PRIMARY KEY, embedding vector(4))").format(
            sql.Identifier(store.table_name)
        ),
    )
    with pytest.raises(UsageError, match="an unknown embedder"):
        store.open(DIMENSIONS, EMBEDDER)


def test_a_dropped_table_is_made_again_with_a_fresh_state(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk], pg_dsn: str
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    store.upsert([store_row(chunks[0])])
    store.set_state(SyncState("out", 3, ("md-v1",), EMBEDDER))
    store.close()
    execute(pg_dsn, sql.SQL("DROP TABLE {}").format(sql.Identifier(store.table_name)))
    again = new_store()
    again.open(8, "other@2")  # the state table's old embedder does not hold it back
    assert again.rows() == [] and again.state() is None


def test_open_refuses_dimensions_pgvector_cannot_store(
    new_store: Callable[..., PgVectorStore],
) -> None:
    for dimensions in (0, 16001):
        with pytest.raises(UsageError, match="1 to 16000"):
            new_store().open(dimensions, EMBEDDER)


# --- writes -----------------------------------------------------------------------------


def test_upsert_then_rows_are_what_was_written(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk], pg_dsn: str
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    written = [store_row(c, i) for i, c in enumerate(chunks)]
    store.upsert(written)
    rows = store.rows()
    assert rows == expected(written)
    assert [r.chunk_id for r in rows] == sorted(c.chunk_id for c in chunks)
    assert store.digests() == {r.chunk_id: (r.content_digest, r.record_digest) for r in written}
    by_id = {c.chunk_id: c for c in chunks}
    for row in rows:  # the full metadata form: the record comes back from it and the text
        assert row.metadata == by_id[row.chunk_id].model_dump(mode="json", exclude={"text"})
        assert record_from_metadata(row.metadata, by_id[row.chunk_id].text) == by_id[row.chunk_id]
    # metadata is a JSON document SQL can filter on
    found = query(
        pg_dsn,
        sql.SQL(
            "SELECT chunk_id FROM {} WHERE metadata->>'source_uri' = %s "
            "AND jsonb_array_length(metadata->'captions') > 0"
        ).format(sql.Identifier(store.table_name)),
        ("guides/café.md",),
    )
    assert sorted(r[0] for r in found) == sorted(c.chunk_id for c in chunks if c.captions)
    # and the vectors are pgvector's: a nearest-neighbour query finds a row by its own vector
    nearest = query(
        pg_dsn,
        sql.SQL("SELECT chunk_id FROM {} ORDER BY embedding <-> %s::vector LIMIT 1").format(
            sql.Identifier(store.table_name)
        ),
        (str(vector(2)).replace(" ", ""),),
    )
    assert nearest == [(chunks[2].chunk_id,)]


def test_upsert_again_replaces_rows_by_chunk_id(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    store.upsert([store_row(c, 1) for c in chunks[:3]])
    replaced = [
        store_row(
            c.model_copy(update={"position": c.position + 100}), 7, digest="r2", label="other-v1"
        )
        for c in chunks[1:3]
    ]
    added = [store_row(c, 9) for c in chunks[3:]]
    store.upsert([*replaced, *added])
    assert store.rows() == expected([store_row(chunks[0], 1), *replaced, *added])
    assert len(store.rows()) == len(chunks)


def test_the_same_writes_twice_leave_the_same_rows(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    written = [store_row(c, i) for i, c in enumerate(chunks)]
    store.upsert(written)
    once = store.rows()
    store.upsert(written)
    assert store.rows() == once == expected(written)
    moved = [store_row(chunks[0], 0, digest="r2", with_vector=False)]
    store.update_metadata(moved)
    after_update = store.rows()
    store.update_metadata(moved)
    assert store.rows() == after_update
    store.delete([chunks[1].chunk_id])
    after_delete = store.rows()
    store.delete([chunks[1].chunk_id])
    assert store.rows() == after_delete and len(after_delete) == len(chunks) - 1


def test_update_metadata_keeps_the_vector(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    original = [store_row(c, i) for i, c in enumerate(chunks)]
    store.upsert(original)
    moved_chunk = chunks[1].model_copy(update={"source_uri": "guides/moved.md", "position": 42})
    moved = StoreRow(
        chunk_id=chunks[1].chunk_id,
        label="md-moved-v1",
        content_digest="c-new",
        record_digest="r-new",
        text="the new embedded text",
        record=moved_chunk.model_dump(mode="json"),
        vector=[9.0, 9.0, 9.0, 9.0],  # ignored: a metadata update never writes vectors
    )
    ghost = store_row(chunks[0].model_copy(update={"chunk_id": "not-in-the-store"}))
    store.update_metadata([moved, ghost])
    rows = {r.chunk_id: r for r in store.rows()}
    assert set(rows) == {c.chunk_id for c in chunks}  # no row made by an update
    row = rows[chunks[1].chunk_id]
    assert row.vector == tuple(vector(1))
    assert (row.label, row.content_digest, row.record_digest, row.text) == (
        "md-moved-v1",
        "c-new",
        "r-new",
        "the new embedded text",
    )
    assert row.metadata["source_uri"] == "guides/moved.md" and row.metadata["position"] == 42
    untouched = expected(original)
    assert [r for r in store.rows() if r.chunk_id != chunks[1].chunk_id] == [
        r for r in untouched if r.chunk_id != chunks[1].chunk_id
    ]


def test_delete_removes_exactly_the_given_ids(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    written = [store_row(c, i) for i, c in enumerate(chunks)]
    store.upsert(written)
    gone = {chunks[0].chunk_id, chunks[2].chunk_id}
    store.delete([*gone, "never-stored", "x' OR '1'='1"])
    assert store.rows() == expected([r for r in written if r.chunk_id not in gone])
    store.delete([])
    assert len(store.rows()) == len(chunks) - 2


def test_a_failing_write_leaves_nothing_behind(
    new_store: Callable[..., PgVectorStore],
    chunks: list[Chunk],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pgvector_store, "_BATCH", 2)  # the bad row is in a later batch
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    good = [store_row(c, i) for i, c in enumerate(chunks[:-1])]
    bad = dataclasses.replace(store_row(chunks[-1]), vector=[1.0, 2.0])
    with pytest.raises(ValueError, match="2-float vector"):
        store.upsert([*good, bad])
    assert store.rows() == []
    store.upsert(good)  # in batches of 2, all of them
    assert store.rows() == expected(good)


def test_upsert_without_a_vector_is_refused(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    with pytest.raises(ValueError, match="no vector"):
        store.upsert([store_row(chunks[0], with_vector=False)])
    assert store.rows() == []


def test_writes_before_open_are_refused(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk]
) -> None:
    store = new_store()
    with pytest.raises(UsageError, match="not open"):
        store.upsert([store_row(chunks[0])])


# --- state ------------------------------------------------------------------------------


def test_sync_state_round_trips_and_survives_a_new_handle(
    new_store: Callable[..., PgVectorStore], pg_dsn: str
) -> None:
    store = new_store()
    store.open(DIMENSIONS, EMBEDDER)
    assert store.state() is None
    first = SyncState("/data/out", 1, ("md-heading-v1", "pdf-page-v1"), EMBEDDER)
    store.set_state(first)
    assert store.state() == first
    second = SyncState("gs://bucket/out", 7, (), EMBEDDER)
    store.set_state(second)
    assert store.state() == second
    store.close()
    reader = new_store()
    assert reader.state() == second  # readable without open
    assert query(
        pg_dsn,
        sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(f"{store.table_name}_sync_state")),
    ) == [(1,)]


# --- names and connections --------------------------------------------------------------


@pytest.mark.parametrize(
    "table",
    [
        'kebab"; DROP TABLE pgv_victim; --',
        "kebab chunks",
        "1kebab",
        "public.kebab",
        "",
        "k" * 53,
    ],
)
def test_table_names_that_are_not_plain_identifiers_are_refused(pg_dsn: str, table: str) -> None:
    execute(pg_dsn, "CREATE TABLE IF NOT EXISTS pgv_victim (x int)")
    with pytest.raises(UsageError) as refused:
        PgVectorStore(pg_dsn, table=table)
    one_sentence(str(refused.value))
    assert table_exists(pg_dsn, "pgv_victim")


def test_table_names_are_quoted_as_identifiers(
    new_store: Callable[..., PgVectorStore], chunks: list[Chunk], pg_dsn: str
) -> None:
    suffix = next(_tables)
    upper, lower = new_store(f"Pgv_Case_{suffix}"), new_store(f"pgv_case_{suffix}")
    longest = new_store("k" * 52)
    for store in (upper, lower, longest):
        store.open(DIMENSIONS, EMBEDDER)
    upper.upsert([store_row(chunks[0])])
    assert len(upper.rows()) == 1 and lower.rows() == [] and longest.rows() == []
    assert table_exists(pg_dsn, f"Pgv_Case_{suffix}") and table_exists(pg_dsn, "k" * 52)
    assert table_exists(pg_dsn, "k" * 52 + "_sync_state")
    longest.close()
    execute(pg_dsn, 'DROP TABLE "{0}", "{0}_sync_state"'.format("k" * 52))


def test_an_unreachable_server_is_one_sentence_without_the_password() -> None:
    store = PgVectorStore(
        f"postgresql://kebab:s3cret@127.0.0.1:{free_port()}/nowhere?connect_timeout=5"
    )
    with pytest.raises(UsageError) as refused:
        store.open(DIMENSIONS, EMBEDDER)
    message = str(refused.value)
    assert "\n" not in message and message.endswith(".")
    assert "s3cret" not in message and "127.0.0.1" in message and "nowhere" in message


def test_without_psycopg_the_store_names_the_extra(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'kebab-chunk\[sync\]'"):
        PgVectorStore(pg_dsn)


def test_open_creates_the_extension_or_says_who_can(pg_dsn: str) -> None:
    suffix = next(_tables)
    bare, plain = f"pgv_bare_{suffix}", f"pgv_plain_{suffix}"
    for statement in (
        f"CREATE DATABASE {bare}",
        f"CREATE ROLE {plain} LOGIN",
        f"CREATE DATABASE {plain} OWNER {plain}",
    ):
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(statement)
    superuser = PgVectorStore(make_conninfo(pg_dsn, dbname=bare))
    superuser.open(DIMENSIONS, EMBEDDER)  # a superuser creates the extension itself
    assert superuser.rows() == []
    superuser.close()
    owner = PgVectorStore(make_conninfo(pg_dsn, dbname=plain, user=plain))
    with pytest.raises(UsageError) as refused:
        owner.open(DIMENSIONS, EMBEDDER)
    owner.close()
    message = str(refused.value)
    assert "\n" not in message and message.endswith(".")
    assert f"/{plain} has no pgvector extension" in message
    assert "CREATE EXTENSION vector" in message
