"""LanceDB storage: one index per (repo path, embedding model).

Layout under ``$ASKREPO_HOME/indexes/<repo-name>-<hash>/<model_id>/``::

    lance/          LanceDB database; the chunks live in table ``meta.table``
    meta.json       the *committed* state: table name + version, manifest of files, model, versions
    lock            flock()ed by the one index run allowed at a time

Crash safety comes from LanceDB's versioned tables: a writer adds and deletes rows (each a new
table version) and only at the very end atomically replaces ``meta.json`` to point at the new
version. Readers always ``checkout()`` the version named in ``meta.json``, so a run killed at any
point leaves the previous index answering queries, and a concurrent search sees the old or the
new index, never a mix. The next run ``restore()``s the committed version before it writes.
A ``--rebuild`` writes a fresh table and swaps it in the same way.

Nothing LanceDB- or Arrow-shaped leaves this module: callers get ``Chunk`` objects.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import config
from .datatypes import Chunk, SourceFile
from .errors import IndexIncompatibleError, IndexLockedError, NoIndexError

SCHEMA_VERSION = 1
META_FILE = "meta.json"
# Old table versions stay readable this long after a newer commit (for searches in flight).
KEEP_OLD_VERSIONS = _dt.timedelta(minutes=10)

_CHUNK_COLUMNS = [
    "id",
    "path",
    "start_line",
    "end_line",
    "text",
    "language",
    "kind",
    "symbol",
    "signature",
    "calls",
    "file_class",
    "file_sha",
    "context",
]


def _lancedb() -> Any:
    """``import lancedb``, minus ~0.5 s of start-up for a client askrepo never uses.

    ``lancedb`` imports ``lance_namespace``, whose ``lance_namespace_urllib3_client`` package
    eagerly imports a generated REST client for remote catalogs (about half of lancedb's
    1.1-1.4 s import time here). askrepo only opens local tables. So that package is
    registered without running its ``__init__``: its submodules (the models lance_namespace
    needs) import normally, and the first attribute lookup on the package itself runs the real
    ``__init__``, so any code that does use the client still gets it.
    """
    import importlib.util
    import sys

    name = "lance_namespace_urllib3_client"
    if "lancedb" not in sys.modules and name not in sys.modules:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and spec.submodule_search_locations:
            pkg = importlib.util.module_from_spec(spec)

            def load_on_use(attr: str) -> Any:
                del pkg.__dict__["__getattr__"]
                spec.loader.exec_module(pkg)
                return getattr(pkg, attr)

            pkg.__getattr__ = load_on_use  # type: ignore[attr-defined]
            sys.modules[name] = pkg
    import lancedb

    return lancedb


def chunk_id(chunk: Chunk) -> str:
    raw = f"{chunk.path}\0{chunk.start_line}\0{chunk.end_line}\0{chunk.file_sha}\0{chunk.kind}"
    return hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def repo_key(repo: Path) -> str:
    resolved = str(Path(repo).resolve())
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(resolved).name or "root")[:40]
    return f"{name}-{hashlib.sha1(resolved.encode()).hexdigest()[:12]}"


def repo_dir(repo: Path) -> Path:
    return config.home() / "indexes" / repo_key(repo)


def index_dir(repo: Path, model_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)
    return repo_dir(repo) / safe


def model_id_for(name: str) -> str:
    """The stable id of a selectable model name, without loading the model."""
    from .embedder import model_spec
    from .errors import UsageError

    try:
        return model_spec(name).model_id
    except UsageError:
        return name  # an id already (or a custom embedder's), used as it is


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _classes_filter(classes: Iterable[str] | None) -> str | None:
    if classes is None:
        return None
    return "file_class IN (" + ", ".join(_sql_str(c) for c in sorted(classes)) + ")"


def _and(*parts: str | None) -> str | None:
    kept = [f"({p})" for p in parts if p]
    return " AND ".join(kept) if kept else None


@dataclass
class IndexMeta:
    repo: str
    model_id: str
    model_name: str
    dim: int
    commit: str | None
    indexed_at: str
    chunk_count: int
    file_count: int
    chunker_version: str
    schema_version: int
    enrich: bool
    table: str
    table_version: int
    redactions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _read_meta(path: Path) -> tuple[IndexMeta, dict[str, SourceFile]]:
    try:
        raw = json.loads((path / META_FILE).read_text("utf-8"))
        files = {p: SourceFile(path=p, **f) for p, f in raw.pop("files").items()}
        meta = IndexMeta(**raw)
    except FileNotFoundError:
        raise
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise IndexIncompatibleError(
            f"The index at {path} is damaged ({exc.__class__.__name__}) — "
            "run `askrepo index --rebuild`"
        ) from exc
    return meta, files


def _meta_stamp(path: Path) -> tuple[int, int, int] | None:
    """Identity of the current meta.json (inode, size, mtime): changes on every commit."""
    try:
        st = (path / META_FILE).stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _write_meta(path: Path, meta: IndexMeta, files: dict[str, SourceFile]) -> None:
    data = meta.to_dict()
    data["files"] = {
        p: {k: v for k, v in asdict(f).items() if k != "path"} for p, f in sorted(files.items())
    }
    tmp = path / f".{META_FILE}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / META_FILE)
    with contextlib.suppress(OSError):
        dfd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _check_compatible(meta: IndexMeta, where: Path) -> None:
    from .chunker import CHUNKER_VERSION

    if meta.schema_version != SCHEMA_VERSION or meta.chunker_version != CHUNKER_VERSION:
        raise IndexIncompatibleError(
            f"The index for {meta.repo} was built by another askrepo version "
            f"(schema {meta.schema_version}, chunker {meta.chunker_version}) — "
            f"run `askrepo index --rebuild {meta.repo}`"
        )


def _rows_to_chunks(rows: Sequence[dict[str, Any]]) -> list[tuple[str, Chunk, float]]:
    out = []
    for r in rows:
        score = r.get("_score")
        if score is None:
            dist = r.get("_distance")
            score = 1.0 - float(dist) if dist is not None else 0.0
        chunk = Chunk(
            path=r["path"],
            start_line=int(r["start_line"]),
            end_line=int(r["end_line"]),
            text=r["text"],
            language=r["language"],
            kind=r["kind"],
            symbol=r["symbol"],
            signature=r["signature"],
            calls=list(r["calls"] or []),
            file_class=r["file_class"],
            file_sha=r["file_sha"],
            context=r.get("context"),
        )
        out.append((r["id"], chunk, float(score)))
    return out


class _Mirror:
    """All chunks of one committed version in memory, with their unit vectors."""

    def __init__(self, ids, chunks, matrix, classes):
        import numpy as np

        self.ids: list[str] = ids
        self.chunks: list[Chunk] = chunks
        self.matrix = matrix
        self.classes = np.asarray(classes, dtype=object)
        self._masks: dict[frozenset[str], Any] = {}
        self.position = {cid: i for i, cid in enumerate(ids)}
        self.by_last: dict[str, list[int]] = {}
        self.by_callee: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            if c.symbol:
                self.by_last.setdefault(c.symbol.rsplit(".", 1)[-1], []).append(i)
            for callee in dict.fromkeys(c.calls):
                self.by_callee.setdefault(callee, []).append(i)

    @classmethod
    def load(cls, table: Any, meta: IndexMeta) -> _Mirror:
        import numpy as np

        count = max(meta.chunk_count, 1)
        arr = table.search().select(_CHUNK_COLUMNS + ["vector"]).limit(count).to_arrow()
        vecs = arr.column("vector").combine_chunks()
        mat = np.asarray(vecs.values, dtype=np.float32).reshape(len(arr), meta.dim)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = mat / np.where(norms == 0, 1.0, norms)
        rows = _rows_to_chunks(arr.drop_columns(["vector"]).to_pylist())
        return cls([r[0] for r in rows], [r[1] for r in rows], mat, [r[1].file_class for r in rows])

    def class_mask(self, classes: Iterable[str]) -> Any:
        import numpy as np

        key = frozenset(classes)
        if key not in self._masks:
            self._masks[key] = np.isin(self.classes, list(key))
        return self._masks[key]

    def _rows(self, idx: Iterable[int], classes: Iterable[str] | None, limit: int):
        allowed = None if classes is None else set(classes)
        out = []
        for i in sorted(set(idx)):
            if allowed is None or self.chunks[i].file_class in allowed:
                out.append((self.ids[i], self.chunks[i], 0.0))
                if len(out) >= limit:
                    break
        return out

    def by_symbol(self, names: list[str], classes: Iterable[str] | None, limit: int):
        idx = []
        for name in names:
            for i in self.by_last.get(name.rsplit(".", 1)[-1], []):
                sym = self.chunks[i].symbol or ""
                if sym == name or sym.endswith("." + name):
                    idx.append(i)
        return self._rows(idx, classes, limit)

    def callers(self, name: str, classes: Iterable[str] | None, limit: int):
        return self._rows(self.by_callee.get(name, []), classes, limit)


def find_index(repo: Path, model: str | None = None) -> Path:
    """The index directory for ``repo``; with no model, the default model's or the newest one."""
    repo = Path(repo).resolve()
    hint = f"run `askrepo index {repo}`"
    if model is not None or config.embed_model() != config.DEFAULT_EMBED_MODEL:
        name = model or config.embed_model()
        path = index_dir(repo, model_id_for(name))
        if not (path / META_FILE).exists():
            opt = "" if name == config.DEFAULT_EMBED_MODEL else f" --model {name}"
            raise NoIndexError(f"No index for {repo} with model {name} — {hint}{opt}")
        return path
    default = index_dir(repo, model_id_for(config.DEFAULT_EMBED_MODEL))
    if (default / META_FILE).exists():
        return default
    candidates = sorted(
        (p for p in repo_dir(repo).glob("*") if (p / META_FILE).exists()),
        key=lambda p: (p / META_FILE).stat().st_mtime,
        reverse=True,
    )
    if not candidates:
        raise NoIndexError(f"No index for {repo} — {hint}")
    return candidates[0]


def open_index(repo: Path, model: str | None = None) -> IndexStore:
    """Open the committed state of the index for ``repo`` (read-only)."""
    path = find_index(repo, model)
    try:
        meta, files = _read_meta(path)
    except FileNotFoundError as exc:
        raise NoIndexError(f"No index for {repo} — run `askrepo index {repo}`") from exc
    _check_compatible(meta, path)
    return IndexStore(path, meta, files)


class IndexStore:
    """Read-only view of one committed index version."""

    def __init__(self, path: Path, meta: IndexMeta, files: dict[str, SourceFile]):
        self.path = path
        self._meta = meta
        self._files = files
        self.repo = Path(meta.repo)
        self.model_id = meta.model_id
        self.model_name = meta.model_name
        self._table = None
        # An in-memory mirror of the table (vectors, chunks, symbol and call maps), loaded when
        # a second search starts on this store: a one-shot CLI search does not pay for loading
        # it; a long-lived caller (MCP server, eval, ask) gets millisecond lookups.
        self._matrix: _Mirror | None = None
        self._searches = 0
        self._stamp = _meta_stamp(path)

    # -- metadata ---------------------------------------------------------------------------
    def meta(self) -> IndexMeta:
        return self._meta

    def files(self) -> dict[str, SourceFile]:
        return self._files

    @property
    def table(self):
        if self._table is None:
            lancedb = _lancedb()
            try:
                db = lancedb.connect(str(self.path / "lance"))
                tbl = db.open_table(self._meta.table)
                tbl.checkout(self._meta.table_version)
            except Exception as exc:  # lance raises many kinds (ValueError, OSError, RuntimeError)
                raise IndexIncompatibleError(
                    f"The index at {self.path} is damaged or incomplete ({exc}) — "
                    f"run `askrepo index --rebuild {self.repo}`"
                ) from exc
            self._table = tbl
        return self._table

    def warm(self) -> None:
        """Import LanceDB and open the table now (e.g. in a thread while a model loads).

        Errors are left for the first real query to raise.
        """
        with contextlib.suppress(Exception):
            _ = self.table

    def refresh(self) -> bool:
        """Switch to a newer committed state if an index run committed one. True if it did."""
        stamp = _meta_stamp(self.path)
        if stamp is not None and stamp == self._stamp:
            return False  # meta.json untouched since we read it
        try:
            meta, files = _read_meta(self.path)
        except (FileNotFoundError, IndexIncompatibleError):
            return False
        _check_compatible(meta, self.path)
        self._stamp = stamp
        if (meta.table, meta.table_version) == (self._meta.table, self._meta.table_version):
            return False
        self._meta, self._files, self._table = meta, files, None
        self._matrix = None
        return True

    def _run(self, make_query) -> list[tuple[str, Chunk, float]]:
        """Run a query; if the version we hold was retired under us, move to the new one."""
        try:
            return _rows_to_chunks(make_query(self.table).to_list())
        except Exception:
            if not self.refresh():
                raise
            return _rows_to_chunks(make_query(self.table).to_list())

    # -- queries ----------------------------------------------------------------------------
    def dense(
        self, vector: Sequence[float], n: int, classes: Iterable[str] | None = None
    ) -> list[tuple[str, Chunk, float]]:
        """Nearest chunks by cosine similarity (score = 1 - distance), best first."""
        if n <= 0 or self._meta.chunk_count == 0:
            return []
        if self._mirror_ready() is not None:
            return self._dense_in_memory(vector, n, classes)
        vec = [float(x) for x in vector]
        flt = _classes_filter(classes)

        def make(tbl):
            q = tbl.search(vec, vector_column_name="vector").metric("cosine")
            q = q.select(_CHUNK_COLUMNS).limit(n)
            return q.where(flt, prefilter=True) if flt else q

        return self._run(make)

    def start_search(self) -> None:
        """Called by each search; from the second one on, queries use the in-memory mirror."""
        self._searches += 1

    def _mirror_ready(self) -> _Mirror | None:
        """The in-memory mirror, once a second search has started (see ``__init__``)."""
        if self._matrix is None and self._searches >= 2:
            try:
                self._matrix = _Mirror.load(self.table, self._meta)
            except Exception:
                self._matrix = None
        return self._matrix

    def _dense_in_memory(
        self, vector: Sequence[float], n: int, classes: Iterable[str] | None
    ) -> list[tuple[str, Chunk, float]]:
        """Exact cosine search over the mirror's matrix (same results as LanceDB's scan)."""
        import numpy as np

        m = self._matrix
        q = np.asarray(vector, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        scores = m.matrix @ q
        if classes is not None:
            scores = np.where(m.class_mask(classes), scores, -np.inf)
        n = min(n, int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]
        return [(m.ids[i], m.chunks[i], float(scores[i])) for i in top]

    def fts(
        self, query: str, n: int, classes: Iterable[str] | None = None
    ) -> list[tuple[str, Chunk, float]]:
        """BM25 full-text matches on the code-aware column, best first."""
        if n <= 0 or not query.strip() or self._meta.chunk_count == 0:
            return []
        flt = _classes_filter(classes)
        mirror = self._mirror_ready()
        cols = ["id", "_score"] if mirror is not None else _CHUNK_COLUMNS + ["_score"]

        def make(tbl):
            q = tbl.search(query, query_type="fts", fts_columns="fts").select(cols).limit(n)
            return q.where(flt, prefilter=True) if flt else q

        if mirror is None:
            return self._run(make)
        rows = make(self.table).to_list()
        found = [(r["id"], mirror.position.get(r["id"]), float(r["_score"])) for r in rows]
        return [(cid, mirror.chunks[i], sc) for cid, i, sc in found if i is not None]

    def where(self, condition: str, limit: int = 50) -> list[tuple[str, Chunk, float]]:
        return self._run(
            lambda tbl: tbl.search().where(condition).select(_CHUNK_COLUMNS).limit(limit)
        )

    def by_symbol(
        self, names: Iterable[str], classes: Iterable[str] | None = None, limit: int = 50
    ) -> list[tuple[str, Chunk, float]]:
        """Definitions whose qualified symbol equals a name or ends with ``.name``."""
        names = list(dict.fromkeys(n for n in names if n))
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.by_symbol(names, classes, limit)
        conds = []
        for name in names:
            conds.append(f"symbol = {_sql_str(name)}")
            like = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            conds.append(f"symbol LIKE {_sql_str('%.' + like)} ESCAPE '\\'")
        if not conds or self._meta.chunk_count == 0:
            return []
        return self.where(_and(" OR ".join(conds), _classes_filter(classes)) or "", limit)

    def callers(
        self, name: str, classes: Iterable[str] | None = None, limit: int = 5
    ) -> list[tuple[str, Chunk, float]]:
        """Chunks whose ``calls`` include ``name`` (the last part of a qualified symbol)."""
        if not name or self._meta.chunk_count == 0:
            return []
        mirror = self._mirror_ready()
        if mirror is not None:
            return mirror.callers(name, classes, limit)
        cond = _and(f"array_has(calls, {_sql_str(name)})", _classes_filter(classes))
        return self.where(cond or "", limit)

    def find_symbol(self, name: str) -> list[Chunk]:
        """Exact qualified-symbol matches, else ``.name`` suffix matches; definitions only
        (never a line window or a markdown heading: ``datatypes.is_definition``)."""
        from .datatypes import is_definition

        rows = [c for _, c, _ in self.by_symbol([name], limit=200) if is_definition(c.kind)]
        exact = [c for c in rows if c.symbol == name]
        return sorted(exact or rows, key=lambda c: (c.path, c.start_line))

    def has_term(self, term: str) -> bool:
        """Whether ``term`` occurs as a whole word (or the same words in another identifier
        style) anywhere in the indexed text: an exact scan, see ``askrepo.presence``."""
        from .presence import has_term

        return has_term(self, term)


def worktree_changed(store: Any) -> bool:
    """Whether files were added, changed or removed since the index was built."""
    from .ingest import walk

    try:
        walked = walk(store.repo, max_file_bytes=config.max_file_bytes())
    except Exception:
        return True
    now = {f.path: f.sha for f in walked.files}
    then = {p: f.sha for p, f in store.files().items()}
    return now != then


# --------------------------------------------------------------------------------------------
# Writing


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
