"""Turn an untrusted repo-relative path (from an MCP client, a CLI flag) into a safe file path.

Refused, with a UsageError that says why: empty paths, NUL bytes, absolute paths, ``..`` that
leaves the repository, anything under ``.git/``, symlinks (in any component) that lead outside
the repository, and — when the set of indexed paths is given — files that were not indexed
(skipped as secret, binary, too large or ignored).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path, PurePosixPath, PureWindowsPath

from .errors import UsageError


def _is_absolute(rel: str) -> bool:
    """``/x``, ``\\x``, ``~/x``, ``C:\\x``, ``C:/x``, ``C:``; on POSIX ``a:1-2.py`` and
    ``~notes.md`` are file names (a repository can hold them, and search cites them)."""
    drive = PureWindowsPath(rel).drive
    return (
        rel.startswith(("/", "\\"))
        or rel.split("/", 1)[0].split("\\", 1)[0] == "~"
        or PurePosixPath(rel).is_absolute()
        or PureWindowsPath(rel).is_absolute()
        or (drive != "" and (os.name == "nt" or rel == drive))
    )


def normalize(rel: str) -> str:
    """The canonical repo-relative POSIX form of ``rel`` (``./a//b`` -> ``a/b``), validated."""
    if not isinstance(rel, str) or not rel.strip():
        raise UsageError("The path is empty — pass a file path relative to the repo root")
    if "\0" in rel:
        raise UsageError("The path contains a NUL byte — pass a plain repo-relative path")
    if _is_absolute(rel):
        raise UsageError(
            f"{rel!r}: path must be relative to the repo root (e.g. 'src/app.py'), not absolute"
        )
    norm = posixpath.normpath(rel.replace("\\", "/"))
    if norm == ".." or norm.startswith("../"):
        raise UsageError(f"{rel!r} is outside the repository — pass a path inside the repo root")
    if norm == ".":
        raise UsageError(f"{rel!r} is the repo root, not a file — pass a file path")
    if ".git" in norm.split("/"):
        raise UsageError(f"{rel!r} is inside .git/, which is never served — pass a source file")
    return norm


def resolve_repo_path(root: Path, rel: str, *, allowed: set[str] | None = None) -> Path:
    """The real path of ``rel`` inside ``root``; raises UsageError when it is not safe to read.

    ``allowed``: the indexed repo-relative paths; when given, anything else is refused.
    The returned path need not exist (unless ``allowed`` is given, it is not checked).
    """
    norm = normalize(rel)
    top = Path(os.path.realpath(root))
    full = Path(os.path.realpath(top / norm))
    try:
        real_rel = full.relative_to(top).as_posix()
    except ValueError:
        raise UsageError(
            f"{rel!r} is outside the repository (through a symlink) — "
            "only files inside the repo are served"
        ) from None
    if ".git" in real_rel.split("/"):
        raise UsageError(f"{rel!r} leads into .git/, which is never served — pass a source file")
    if allowed is not None and (norm not in allowed or real_rel not in allowed):
        raise UsageError(
            f"{rel!r} was not indexed (skipped as secret/binary/ignored, or it does not exist) — "
            "use list_files to see the indexed files"
        )
    return full
