"""Writing an index: one run's deletes and adds, committed atomically through ``meta.json``.

See ``askrepo.store`` for the layout and the crash-safety model; this module holds the one
writer allowed at a time (``_Lock``) and ``IndexWriter``.

An index is two LanceDB tables: ``chunks_*`` (text, metadata and the full-text column) and
``vectors_*`` (chunk id, path, file class, piece, vector). Piece 0 is the chunk's own vector;
a chunk longer than the model's window also has pieces 1, 2, … (``indexer.piece_texts``),
written in the same append as piece 0. Indexes built before pieces existed have no ``piece``
column: they are read and updated without pieces. Phase 1 of a run writes the chunks and
commits: the index is searchable (full-text, symbols, grep) from then on. Phase 2 appends
vectors in batches and commits after each one, so a killed run loses at most one batch and
the next run embeds only the chunks that still have no vector (``pending``).

A vector depends only on the string that was embedded, so phase 2 can copy a vector instead
of computing it when that string was embedded before: ``old_vectors`` reads the stored vectors
of the rows a run replaces (a changed file's old chunks, or every chunk of the index a
chunker upgrade rebuilds) keyed by their embedded text, which the caller recomputes from the
stored chunk.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .datatypes import Chunk, SourceFile
from .errors import IndexIncompatibleError, IndexLockedError
from .store import (
    _CHUNK_COLUMNS,
    EMBED_TEXT_VERSION,
    KEEP_OLD_VERSIONS,
    META_FILE,
    SCHEMA_VERSION,
    IndexMeta,
    _check_compatible,
    _has_pieces,
    _lancedb,
    _read_meta,
    _rows_to_chunks,
    _sql_in,
    _write_meta,
    build_lexical,
    chunk_id,
    index_dir,
    table_docs,
)

# Schema metadata of a vectors table: the EMBED_TEXT_VERSION its vectors were made with.
_EMBED_TEXT_KEY = b"askrepo.embed_text"


class _Lock:
    """An exclusive, non-blocking flock on ``path`` that records the holder's pid."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> _Lock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise IndexLockedError(
                    f"Another index run is in progress (pid {holder}) — wait for it to finish"
                ) from exc
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)
            os.close(self.fd)
            self.fd = None


class IndexWriter:
    """Applies one index run's changes and commits them atomically.

    Use as a context manager; nothing is visible to readers until :meth:`commit`.
    """

    def __init__(self, repo: Path, model_id: str, model_name: str, dim: int, *, rebuild: bool):
        self.repo = Path(repo).resolve()
        self.model_id = model_id
        self.model_name = model_name
        self.dim = dim
        self.path = index_dir(self.repo, model_id)
        self.rebuild = rebuild
        self._lock = _Lock(self.path / "lock")
        self.previous: dict[str, SourceFile] = {}
        self.previous_meta: IndexMeta | None = None
        self.rebuild_reason: str | None = None
        self._db = None
        self._tbl = None
        self._vec = None
        self._new_table = False
        self._old_tables: list[str] = []
        self._replaced: IndexMeta | None = None  # the index a version-forced rebuild replaces
        self._meta: IndexMeta | None = None
        self._files: dict[str, SourceFile] = {}
        # the full-text documents of the chunks this run added (tokenized at the commit
        # without reading them back), and a full-text index built ahead of it: (table version,
        # directory name)
        self._docs: dict[str, Any] = {}
        self._lexical_ready: tuple[int, str] | None = None

    def __enter__(self) -> IndexWriter:
        self._lock.__enter__()
        try:
            self._open()
        except BaseException:
            self._lock.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.__exit__()

    def _open(self) -> None:
        lancedb = _lancedb()
        self.path.mkdir(parents=True, exist_ok=True)
        meta = read = None
        if (self.path / META_FILE).exists():
            try:
                meta, files = _read_meta(self.path)
                read = meta
                _check_compatible(meta, self.path)
                self.previous_meta, self.previous = meta, files
            except IndexIncompatibleError as exc:
                self.rebuild_reason = exc.reason  # not the fix: this run is the rebuild
                meta = None
        if read is not None and meta is None and not self.rebuild:
            # another chunker version, same store layout: its tables may still be read
            if read.schema_version == SCHEMA_VERSION and read.vectors_table:
                self._replaced = read
        self._db = lancedb.connect(str(self.path / "lance"))
        if meta is not None and not self.rebuild and not self.rebuild_reason:
            try:
                tbl = self._db.open_table(meta.table)
                vec = self._db.open_table(meta.vectors_table)
                # A previous run died after writing: go back to what was committed.
                if tbl.version != meta.table_version:
                    tbl.restore(meta.table_version)
                if vec.version != meta.vectors_version:
                    vec.restore(meta.vectors_version)
                self._tbl, self._vec = tbl, vec
                return
            except Exception as exc:  # damaged table: fall back to a fresh build
                self.rebuild_reason = f"previous index unreadable ({exc.__class__.__name__})"
        if meta is not None:
            self._old_tables = [t for t in (meta.table, meta.vectors_table) if t]
        self.previous = {}
        self.previous_meta = None
        self._tbl, self._vec = self._create_tables()
        self._new_table = True

    def _create_tables(self) -> tuple[Any, Any]:
        import pyarrow as pa

        chunks = pa.schema(
            [
                pa.field("id", pa.string()),
                pa.field("path", pa.string()),
                pa.field("start_line", pa.int32()),
                pa.field("end_line", pa.int32()),
                pa.field("text", pa.string()),
                pa.field("language", pa.string()),
                pa.field("kind", pa.string()),
                pa.field("symbol", pa.string()),
                pa.field("signature", pa.string()),
                pa.field("calls", pa.list_(pa.string())),
                pa.field("file_class", pa.string()),
                pa.field("file_sha", pa.string()),
                pa.field("context", pa.string()),
                pa.field("fts", pa.string()),
            ]
        )
        vectors = pa.schema(
            [
                pa.field("id", pa.string()),
                pa.field("path", pa.string()),
                pa.field("file_class", pa.string()),
                pa.field("piece", pa.int16()),
                pa.field("vector", pa.list_(pa.float32(), self.dim)),
            ],
            metadata={_EMBED_TEXT_KEY: EMBED_TEXT_VERSION.encode()},
        )
        stamp = f"{int(time.time() * 1000)}_{os.getpid()}"
        return (
            self._db.create_table(f"chunks_{stamp}", schema=chunks, mode="overwrite"),
            self._db.create_table(f"vectors_{stamp}", schema=vectors, mode="overwrite"),
        )

    # -- changes ------------------------------------------------------------------------------
    def delete_paths(self, paths: Iterable[str]) -> None:
        """Remove every chunk (and vector) of these files (applied in batches)."""
        for cond in _path_conditions(paths):
            self._tbl.delete(cond)
            self._vec.delete(cond)

    def add(self, chunks: Sequence[Chunk], fts_texts: Sequence[str]) -> None:
        """Add chunks without vectors (phase 1); ``add_vectors`` adds those later."""
        import pyarrow as pa

        if not chunks:
            return
        cols = {
            "id": [chunk_id(c) for c in chunks],
            "path": [c.path for c in chunks],
            "start_line": [c.start_line for c in chunks],
            "end_line": [c.end_line for c in chunks],
            "text": [c.text for c in chunks],
            "language": [c.language for c in chunks],
            "kind": [c.kind for c in chunks],
            "symbol": [c.symbol for c in chunks],
            "signature": [c.signature for c in chunks],
            "calls": [list(c.calls) for c in chunks],
            "file_class": [c.file_class for c in chunks],
            "file_sha": [c.file_sha for c in chunks],
            "context": [c.context for c in chunks],
            "fts": list(fts_texts),
        }
        arrays = [pa.array(v, type=self._tbl.schema.field(k).type) for k, v in cols.items()]
        self._tbl.add(pa.Table.from_arrays(arrays, schema=self._tbl.schema))
        from .lexical import Doc

        for cid, c, body in zip(cols["id"], chunks, cols["fts"], strict=True):
            self._docs[cid] = Doc(cid, c.file_class, body or "", c.symbol)

    @property
    def has_pieces(self) -> bool:
        """Whether the vectors table stores piece vectors (indexes built before them do not)."""
        return _has_pieces(self._vec)

    def add_vectors(
        self,
        chunks: Sequence[Chunk],
        vectors: Any,
        piece_of: Sequence[int] = (),
        piece_vectors: Any = None,
    ) -> None:
        """Store the vectors of chunks already added (phase 2), in one append: each chunk's
        own vector, and piece vectors, ``piece_of[j]`` being the position in ``chunks`` of
        piece ``j``'s chunk (ignored when ``has_pieces`` is false)."""
        import numpy as np
        import pyarrow as pa

        if not chunks:
            return
        if not self.has_pieces:
            piece_of = ()
        owners = [chunks[i] for i in piece_of]
        numbers: list[int] = [0] * len(chunks)
        seen: dict[int, int] = {}
        for i in piece_of:
            seen[i] = seen.get(i, 0) + 1
            numbers.append(seen[i])
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(chunks), self.dim)
        if owners:
            more = np.asarray(piece_vectors, dtype=np.float32).reshape(len(owners), self.dim)
            vecs = np.concatenate([vecs, more])
        rows = list(chunks) + owners
        schema = self._vec.schema
        flat = pa.array(vecs.reshape(-1), type=pa.float32())
        cols = {
            "id": pa.array([chunk_id(c) for c in rows], type=pa.string()),
            "path": pa.array([c.path for c in rows], type=pa.string()),
            "file_class": pa.array([c.file_class for c in rows], type=pa.string()),
            "piece": pa.array(numbers, type=pa.int16()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, self.dim),
        }
        arrays = [cols[name] for name in schema.names]
        self._vec.add(pa.Table.from_arrays(arrays, schema=schema))

    @property
    def reuse_meta(self) -> IndexMeta | None:
        """The committed index whose vectors this run may copy (``old_vectors``): the open one,
        or the one a rebuild for another chunker version replaces. None for a first index, an
        explicit ``--rebuild``, or an index that is damaged or of another store schema."""
        return self._replaced if self._new_table else self.previous_meta

    def old_vectors(
        self,
        keys_of: Callable[[Chunk], Sequence[Hashable]],
        paths: Sequence[str] | None = None,
    ) -> dict[Hashable, Any]:
        """Stored vectors (numpy rows) by the key of the text they were made from:
        ``keys_of(chunk)[n]`` is the key of piece ``n`` (0: the chunk's own text).

        ``paths``: the chunks of these files in the open index (call it before
        ``delete_paths``); None: every chunk of the index a version-forced rebuild replaces.
        Empty when there is no such index (``reuse_meta``), its vectors were made from another
        ``EMBED_TEXT_VERSION``, or its tables cannot be read: those chunks are embedded again.
        """
        try:
            if paths is not None and not self._new_table:
                tbl, vec = self._tbl, self._vec
            elif paths is None and self._new_table and self._replaced is not None:
                old = self._replaced
                tbl = self._db.open_table(old.table)
                tbl.checkout(old.table_version)
                vec = self._db.open_table(old.vectors_table)
                vec.checkout(old.vectors_version)
            else:
                return {}
            stamp = (vec.schema.metadata or {}).get(_EMBED_TEXT_KEY, b"1").decode()
            if stamp != EMBED_TEXT_VERSION:
                return {}
            conds = [None] if paths is None else list(_path_conditions(paths))
            out: dict[Hashable, Any] = {}
            for cond in conds:
                out.update(_stored_vectors(tbl, vec, cond, keys_of, self.dim))
            return out
        except Exception:  # unreadable: nothing to reuse, everything is embedded
            return {}

    def pending(self) -> list[Chunk]:
        """Chunks that have no vector yet, in table order."""
        have = set(self._ids(self._vec))
        n = self._tbl.count_rows()
        if n == 0 or len(have) >= n and set(self._ids(self._tbl)) <= have:
            return []
        arr = self._tbl.search().select(_CHUNK_COLUMNS).limit(n).to_arrow()
        ids = arr.column("id").to_pylist()
        want = [i for i, cid in enumerate(ids) if cid not in have]
        if not want:
            return []
        rows = arr.take(want).to_pylist()
        return [c for _, c, _ in _rows_to_chunks(rows)]

    @staticmethod
    def _ids(tbl: Any) -> list[str]:
        n = tbl.count_rows()
        if n == 0:
            return []
        return tbl.search().select(["id"]).limit(n).to_arrow().column("id").to_pylist()

    @property
    def is_new(self) -> bool:
        """Whether this run writes a fresh table (first index, --rebuild, or a damaged one)."""
        return self._new_table

    def count(self) -> int:
        return self._tbl.count_rows()

    def embedded_count(self) -> int:
        return self._embedded()

    def _embedded(self) -> int:
        """Chunks with a vector (piece 0 rows; every row in an index without pieces)."""
        return self._vec.count_rows("piece = 0" if self.has_pieces else None)

    def column(self, name: str) -> list[Any]:
        """All values of one column (small columns only: language, path, ...)."""
        rows = self._tbl.search().select([name]).limit(max(self.count(), 1)).to_arrow()
        return rows.column(name).to_pylist()

    def commit(
        self,
        files: dict[str, SourceFile],
        *,
        commit: str | None,
        chunker_version: str,
        enrich: bool,
        redactions: int,
        skipped: dict[str, int],
        contextual: bool = False,
        dirty: Sequence[str] = (),
        tidy: bool = True,
    ) -> IndexMeta:
        """Atomically publish this run's state; then (``tidy``) compact and drop old versions."""
        meta = IndexMeta(
            repo=str(self.repo),
            model_id=self.model_id,
            model_name=self.model_name,
            dim=self.dim,
            commit=commit,
            indexed_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            chunk_count=self._tbl.count_rows(),
            file_count=len(files),
            chunker_version=chunker_version,
            schema_version=SCHEMA_VERSION,
            enrich=enrich,
            table=self._tbl.name,
            table_version=self._tbl.version,
            redactions=redactions,
            skipped=dict(skipped),
            contextual=contextual,
            vectors_table=self._vec.name,
            vectors_version=self._vec.version,
            embedded_count=self._embedded(),
            dirty=sorted(dirty),
        )
        meta.lexical = self.build_lexical()
        _write_meta(self.path, meta, files)
        self._meta, self._files = meta, files
        self._docs = {}  # tokenized into the committed full-text index
        if tidy:
            self.tidy()
        return meta

    def build_lexical(self) -> str:
        """Build askrepo's full-text index (``askrepo.lexical``) of the table as it is now, in
        a new directory beside the tables, and return its name (``commit`` names it in
        meta.json; calling this first only moves the work, and its progress report, ahead of
        the commit). Chunks the previous index already held keep their postings; the ones
        this run added are tokenized from the documents ``add`` kept, so no text is read back
        from the table. An unchanged table keeps the previous directory."""
        version = self._tbl.version
        if self._lexical_ready is None or self._lexical_ready[0] != version:
            self._lexical_ready = (version, self._write_lexical(version))
        return self._lexical_ready[1]

    def _write_lexical(self, table_version: int) -> str:
        from . import lexical

        prev = self.previous_meta
        old_name = (self._meta.lexical if self._meta else "") or (prev.lexical if prev else "")
        old_version = (
            self._meta.table_version if self._meta else (prev.table_version if prev else -1)
        )
        previous = None
        if old_name and not self._new_table:
            with contextlib.suppress(OSError, ValueError):
                previous = lexical.LexicalIndex.load(self.path / old_name)
                if old_version == table_version:
                    return old_name
        index = build_lexical(self._tbl, self._lexical_docs, previous)
        name = f"lexical_{table_version}_{int(time.time() * 1000)}_{os.getpid()}"
        index.save(self.path / name)
        return name

    def _lexical_docs(self, ids: Sequence[str]) -> Iterator[Any]:
        """The full-text documents of these chunks: the ones this run added from memory, any
        other (an index whose full-text files were lost) read from the table."""
        docs = self._docs
        yield from (docs[cid] for cid in ids if cid in docs)
        missing = [cid for cid in ids if cid not in docs]
        if missing:
            yield from table_docs(self._tbl, missing)

    def commit_vectors(self) -> IndexMeta:
        """Publish the vectors added since the last commit (phase 2); nothing else changes."""
        assert self._meta is not None, "commit() first"
        self._meta.vectors_version = self._vec.version
        self._meta.embedded_count = self._embedded()
        _write_meta(self.path, self._meta, self._files)
        return self._meta

    def tidy(self, chunks: bool = True) -> None:
        """After a commit: compact fragments, drop versions and tables no reader needs.

        ``chunks=False``: only phase 2 wrote (vectors); the chunks table is left as it is, so
        readers keep their in-memory copy of it. Readers that still hold an old version
        re-read meta.json and retry (IndexStore._run).
        """
        meta = self._meta
        if meta is None:
            return
        with contextlib.suppress(Exception):
            if chunks:
                self._tbl.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
            self._vec.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
            if (self._tbl.version, self._vec.version) != (meta.table_version, meta.vectors_version):
                meta.table_version = self._tbl.version
                meta.vectors_version = self._vec.version
                _write_meta(self.path, meta, self._files)
        for old in self._old_tables:
            if old not in (self._tbl.name, self._vec.name):
                with contextlib.suppress(Exception):
                    self._db.drop_table(old)
        self._drop_stray_tables(keep={self._tbl.name, self._vec.name})
        before = self.previous_meta.lexical if self.previous_meta else ""
        self._drop_old_lexical(keep={meta.lexical, before})

    def _drop_old_lexical(self, keep: set[str]) -> None:
        """Remove full-text index directories but the current one and the one the previous
        commit named (a reader that read the previous meta.json may still open it); stray
        directories of runs that died before committing go too."""
        import shutil

        with contextlib.suppress(OSError):
            for old in self.path.glob("lexical_*"):
                if old.name not in keep and old.is_dir():
                    shutil.rmtree(old, ignore_errors=True)

    def _drop_stray_tables(self, keep: set[str]) -> None:
        """Remove tables of rebuilds that died before committing."""
        with contextlib.suppress(Exception):
            for name in list(self._table_names()):
                if name not in keep and name.startswith(("chunks_", "vectors_")):
                    self._db.drop_table(name)

    def _table_names(self) -> Iterator[str]:
        lister = getattr(self._db, "list_tables", None) or self._db.table_names
        res = lister()
        names = getattr(res, "tables", res)
        yield from names


def _path_conditions(paths: Iterable[str], size: int = 200) -> Iterator[str]:
    """``path IN (...)`` filters covering ``paths``, ``size`` paths each."""
    batch = sorted(set(paths))
    for i in range(0, len(batch), size):
        yield _sql_in("path", batch[i : i + size])


def _stored_vectors(
    tbl: Any, vec: Any, cond: str | None, keys_of: Callable[[Chunk], Sequence[Hashable]], dim: int
) -> dict[Hashable, Any]:
    """``old_vectors`` for the rows matching ``cond`` (None: all rows)."""
    import numpy as np

    n = vec.count_rows(cond)
    if not n:
        return {}
    pieces = _has_pieces(vec)
    q = vec.search()
    varr = (q.where(cond) if cond else q).select(
        ["id", "piece", "vector"] if pieces else ["id", "vector"]
    )
    varr = varr.limit(n).to_arrow()
    mat = np.array(varr.column("vector").combine_chunks().values, dtype=np.float32)
    mat = mat.reshape(len(varr), dim)
    numbers = varr.column("piece").to_pylist() if pieces else [0] * len(varr)
    rows: dict[str, dict[int, int]] = {}
    for j, (cid, number) in enumerate(zip(varr.column("id").to_pylist(), numbers, strict=True)):
        rows.setdefault(cid, {})[int(number)] = j
    del varr
    q = tbl.search()
    arr = (q.where(cond) if cond else q).select(_CHUNK_COLUMNS)
    arr = arr.limit(max(tbl.count_rows(cond), 1)).to_arrow()
    out: dict[Hashable, Any] = {}
    for start in range(0, len(arr), 2_000):
        for cid, chunk, _ in _rows_to_chunks(arr.slice(start, 2_000).to_pylist()):
            stored = rows.get(cid)
            if not stored:
                continue
            keys = keys_of(chunk)
            for number, j in stored.items():
                if number < len(keys):
                    out[keys[number]] = mat[j]
    return out
