"""Keep an index fresh while files change: file-system events (``watchfiles``), debounced.

Events only wake the loop; what to re-index is decided by the freshness check
(``askrepo.freshness``), which applies exactly the walker's rules (.gitignore,
.askrepoignore, vendored directories, secrets, binary, size). So an event in an ignored
place costs one cheap check and no index run. The index lock keeps it to one writer: when
another run holds it, the loop tries again on the next event or after ``retry_s``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError

DEBOUNCE_MS = 800


@dataclass
class WatchStatus:
    """One line of state, redrawn after every check."""

    repo: str
    files: int
    embedded: int
    chunks: int
    stale: bool
    changed_files: int
    refreshes: int = 0
    last_refresh: str | None = None  # "12:01:03: 2 files in 0.4 s"
    note: str | None = None

    def line(self) -> str:
        state = f"stale ({self.changed_files} changed)" if self.stale else "fresh"
        parts = [
            f"watching {self.repo}",
            state,
            f"{self.files:,} files",
            f"embedded {self.embedded:,}/{self.chunks:,}",
        ]
        if self.last_refresh:
            parts.append(f"last refresh {self.last_refresh}")
        if self.note:
            parts.append(self.note)
        return " · ".join(parts)


def _filter(root: Path) -> Callable[[Any, str], bool]:
    """watchfiles' default filter plus the index's vendored directories and ASKREPO_HOME."""
    from watchfiles import DefaultFilter

    from . import config
    from .ingest import VENDORED_DIRS

    home = str(config.home().resolve())
    flt = DefaultFilter(ignore_dirs=tuple(DefaultFilter.ignore_dirs) + tuple(VENDORED_DIRS))

    def keep(change: Any, path: str) -> bool:
        return not path.startswith(home) and flt(change, path)

    return keep


def watch_index(
    root: Path,
    *,
    model: str | None = None,
    embedder: Any = None,
    on_status: Callable[[WatchStatus], None] | None = None,
    stop_event: Any = None,
    debounce_ms: int = DEBOUNCE_MS,
    retry_s: float = 2.0,
) -> None:
    """Refresh ``root``'s index now and after every burst of file changes, until
    ``stop_event`` is set (or Ctrl-C). ``embedder``: a loaded model (tests); by default
    the index's model is loaded on the first refresh and kept."""
    try:
        import watchfiles
    except ImportError:
        raise UsageError('askrepo watch needs watchfiles: pip install "watchfiles"') from None
    from .ingest import check_root
    from .store import open_index

    root = check_root(root)
    store = open_index(root, model)
    state: dict[str, Any] = {"embedder": embedder, "refreshes": 0, "last": None}

    def step() -> WatchStatus:
        note = _refresh(store, state)
        from .refresh import status

        st = status(store)
        f = st.freshness
        ws = WatchStatus(
            repo=str(root),
            files=st.file_count,
            embedded=st.embedded,
            chunks=st.chunk_count,
            stale=f.stale,
            changed_files=f.changed_files,
            refreshes=state["refreshes"],
            last_refresh=state["last"],
            note=note,
        )
        if on_status is not None:
            on_status(ws)
        return ws

    status_now = step()
    for _changes in watchfiles.watch(
        root,
        watch_filter=_filter(root),
        debounce=debounce_ms,
        stop_event=stop_event,
        rust_timeout=int(retry_s * 1000),
        yield_on_timeout=True,
        raise_interrupt=False,
    ):
        if not _changes and not (status_now.stale or status_now.note or _behind(store)):
            continue  # a timeout, nothing pending: the cheap check also catches any change
            # made before the watcher started
        status_now = step()


def _behind(store: Any) -> bool:
    from .freshness import check_store

    store.refresh()
    return check_store(store).stale or not store.meta().fully_embedded


def _refresh(store: Any, state: dict[str, Any]) -> str | None:
    """Bring the index up to date: the changed files, or (many changes, or phase 2 pending)
    a normal incremental run. Returns a note when it could not."""
    from .errors import AskrepoError, IndexLockedError
    from .freshness import check_store
    from .indexer import index_repo

    store.refresh()
    fresh = check_store(store)
    meta = store.meta()
    pending = not meta.fully_embedded
    if not fresh.stale and not pending:
        return None
    if state["embedder"] is None and meta.model_id != "":
        from .embedder import MODELS, load_embedder

        names = [n for n, spec in MODELS.items() if spec.model_id == meta.model_id]
        state["embedder"] = load_embedder(names[0] if names else meta.model_name)
    t = time.perf_counter()
    few = fresh.changed_files <= 200 and fresh.method == "git" or fresh.changed_files <= 50
    try:
        index_repo(
            Path(store.repo),
            model=meta.model_name,
            embedder=state["embedder"],
            enrich=meta.enrich,
            paths=fresh.changed if fresh.stale and few else None,
        )
    except IndexLockedError:
        return "another index run holds the lock; will retry"
    except AskrepoError as exc:
        return f"refresh failed: {exc}"
    store.refresh()
    state["refreshes"] += 1
    n = fresh.changed_files
    state["last"] = (
        f"{time.strftime('%H:%M:%S')}: {n} file{'s' * (n != 1)} in {time.perf_counter() - t:.1f} s"
    )
    return None
