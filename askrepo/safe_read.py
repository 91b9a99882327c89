"""Read a file that was indexed, safely: never block, never follow a symlink, never read more
than a cap.

Between indexing and a later read (MCP ``read_file`` / ``get_file_context``, grep's display of a
match) a file can be swapped for a FIFO, a device or a symlink, or grow without bound. So the
file is opened with ``O_NONBLOCK | O_NOFOLLOW`` (opening a FIFO does not wait for a writer),
refused unless ``fstat`` says it is a regular file, and read up to ``max_bytes``.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import UsageError


class UnsafeFileError(UsageError):
    """The file is not a regular file (FIFO, device, socket, directory, symlink) or too big."""


def read_regular(path: str | Path, max_bytes: int, *, label: str | None = None) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``).

    Raises UnsafeFileError for anything that is not a regular file or is larger than
    ``max_bytes``; FileNotFoundError / other OSErrors pass through. ``label`` names the file in
    messages (default: the path).
    """
    name = label or str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if _is_symlink_loop(exc):
            raise UnsafeFileError(
                f"{name!r} is now a symlink; only regular files are served — "
                "re-run `askrepo index` if the repository changed"
            ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(
                f"{name!r} is not a regular file any more ({_kind(st.st_mode)}); only regular "
                "files are served — re-run `askrepo index` if the repository changed"
            )
        if st.st_size > max_bytes:
            raise UnsafeFileError(
                f"{name!r} is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit "
                "(ASKREPO_MAX_FILE_BYTES) — it changed since indexing; re-run `askrepo index`"
            )
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            part = os.read(fd, min(left, 1 << 20))
            if not part:
                break
            chunks.append(part)
            left -= len(part)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # grew while we read it
            raise UnsafeFileError(
                f"{name!r} is over the {max_bytes:,}-byte limit (ASKREPO_MAX_FILE_BYTES) — "
                "it changed since indexing; re-run `askrepo index`"
            )
        return data
    finally:
        os.close(fd)


def is_regular(path: str | Path) -> bool:
    """Whether ``path`` itself (not a symlink's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _is_symlink_loop(exc: OSError) -> bool:
    return exc.errno == errno.ELOOP  # O_NOFOLLOW on a symlink


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
