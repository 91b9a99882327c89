"""Writing an index: one run's deletes and adds, committed atomically through ``meta.json``.

See ``askrepo.store`` for the layout and the crash-safety model; this module holds the one
writer allowed at a time (``_Lock``) and ``IndexWriter``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .datatypes import Chunk, SourceFile
from .errors import IndexIncompatibleError, IndexLockedError
from .store import (
    KEEP_OLD_VERSIONS,
    META_FILE,
    SCHEMA_VERSION,
    IndexMeta,
    _check_compatible,
    _lancedb,
    _read_meta,
    _sql_str,
    _write_meta,
    chunk_id,
    index_dir,
)


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
        self._new_table = False
        self._old_table: str | None = None
        self._pending_delete: set[str] = set()

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
        meta = None
        if (self.path / META_FILE).exists():
            try:
                meta, files = _read_meta(self.path)
                _check_compatible(meta, self.path)
                self.previous_meta, self.previous = meta, files
            except IndexIncompatibleError as exc:
                self.rebuild_reason = str(exc)
                meta = None
        self._db = lancedb.connect(str(self.path / "lance"))
        if meta is not None and not self.rebuild and not self.rebuild_reason:
            try:
                tbl = self._db.open_table(meta.table)
                if tbl.version != meta.table_version:
                    # A previous run died after writing; go back to what was committed.
                    tbl.restore(meta.table_version)
                self._tbl = tbl
                return
            except Exception as exc:  # damaged table: fall back to a fresh build
                self.rebuild_reason = f"previous index unreadable ({exc.__class__.__name__})"
        if meta is not None:
            self._old_table = meta.table
        self.previous = {}
        self._tbl = self._create_table()
        self._new_table = True

    def _create_table(self):
        import pyarrow as pa

        schema = pa.schema(
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
                pa.field("vector", pa.list_(pa.float32(), self.dim)),
            ]
        )
        name = f"chunks_{int(time.time() * 1000)}_{os.getpid()}"
        return self._db.create_table(name, schema=schema, mode="overwrite")

    # -- changes ------------------------------------------------------------------------------
    def delete_paths(self, paths: Iterable[str]) -> None:
        """Remove every chunk of these files (applied in batches)."""
        batch = sorted(set(paths))
        for i in range(0, len(batch), 200):
            part = batch[i : i + 200]
            self._tbl.delete("path IN (" + ", ".join(_sql_str(p) for p in part) + ")")

    def add(self, chunks: Sequence[Chunk], vectors: Any, fts_texts: Sequence[str]) -> None:
        import numpy as np
        import pyarrow as pa

        if not chunks:
            return
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(chunks), self.dim)
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
        flat = pa.array(vecs.reshape(-1), type=pa.float32())
        arrays.append(pa.FixedSizeListArray.from_arrays(flat, self.dim))
        self._tbl.add(pa.Table.from_arrays(arrays, schema=self._tbl.schema))

    def finish_fts(self) -> None:
        """(Re)build the full-text index over the whole table.

        A full rebuild rather than ``optimize()``: LanceDB's optimize also deletes old table
        versions, which must not happen before the new state is committed.
        """
        from lancedb.index import FTS

        self._tbl.create_index(
            "fts",
            config=FTS(with_position=False, stem=True, remove_stop_words=True),
            replace=True,
        )

    @property
    def is_new(self) -> bool:
        """Whether this run writes a fresh table (first index, --rebuild, or a damaged one)."""
        return self._new_table

    def count(self) -> int:
        return self._tbl.count_rows()

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
        )
        _write_meta(self.path, meta, files)
        # Committed. Now tidy up: compact fragments and drop versions/tables no reader needs.
        # Readers that still hold an old version re-read meta.json and retry (IndexStore._run).
        if not tidy:
            return meta
        with contextlib.suppress(Exception):
            self._tbl.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
            if self._tbl.version != meta.table_version:
                meta.table_version = self._tbl.version
                _write_meta(self.path, meta, files)
        if self._old_table and self._old_table != self._tbl.name:
            with contextlib.suppress(Exception):
                self._db.drop_table(self._old_table)
        self._drop_stray_tables(keep=self._tbl.name)
        return meta

    def _drop_stray_tables(self, keep: str) -> None:
        """Remove tables of rebuilds that died before committing."""
        with contextlib.suppress(Exception):
            for name in self._table_names():
                if name != keep and name.startswith("chunks_"):
                    self._db.drop_table(name)

    def _table_names(self) -> Iterator[str]:
        lister = getattr(self._db, "list_tables", None) or self._db.table_names
        res = lister()
        names = getattr(res, "tables", res)
        yield from names
