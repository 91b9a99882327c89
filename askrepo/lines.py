"""The one line-splitting rule for everything that computes line numbers, and line hashes.

Line numbers are 1-based and count ``\\n`` only (as tree-sitter, git and editors do): form
feeds, ``\\r``, ``\\x1c``-``\\x1e``, ``\\x85`` and ``\\u2028`` inside a line do not start a new
line, unlike ``str.splitlines()``. A trailing ``\\r`` (CRLF files) is kept by ``split_lines`` and
ignored by ``span_hash``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def split_lines(text: str) -> list[str]:
    """``text`` cut at ``\\n`` only; a final newline does not add an empty last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def span_hash(lines: Sequence[str] | str) -> str:
    """A short, stable hash of some lines (a citation's content): sha256 over the lines with
    trailing ``\\r`` and whitespace removed, joined by ``\\n``; first 16 hex digits."""
    if isinstance(lines, str):
        lines = split_lines(lines)
    norm = "\n".join(line.rstrip() for line in lines)
    return hashlib.sha256(norm.encode("utf-8", "surrogatepass")).hexdigest()[:16]
