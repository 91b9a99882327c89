"""Whether the work tree changed since an index was built."""

from __future__ import annotations

from typing import Any

from . import config


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
