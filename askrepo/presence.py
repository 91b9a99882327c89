"""Whether a name occurs anywhere in an index: the one check behind ``ask``'s refusal.

``ask`` answers "the code base does not contain X" without asking a model, so that answer must
be certain. Absence is therefore decided by an exact scan of the indexed text, never by the
full-text ranker (which drops stop words, one-letter names and digits and looks at a top-n):

1. ripgrep (the grep machinery, ``askrepo.grep``) scans every file the index kept that is still
   a regular file inside the repository for the name as a whole word, or for the same words in
   another identifier style, case-insensitively (``getFileContext``, ``get_file_context``,
   ``GET_FILE_CONTEXT``, ``_get_file_context``). A hit anywhere: present.
2. No hit: the files whose content is no longer what was indexed (changed, deleted, unreadable,
   grown past the size limit) are scanned in the index's own text (their chunks), with the same
   pattern. A hit: present.

Otherwise the name is absent. If ripgrep cannot run or does not finish, the name counts as
present: no refusal is better than a false one.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TIMEOUT_S = 30.0


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def term_regex(term: str) -> str | None:
    """The pattern (valid for both ripgrep and Python ``re``) that finds ``term``.

    >>> term_regex("get_file")
    '\\\\bget_file\\\\b|(?i:\\\\b_*get_*file_*\\\\b)'
    >>> term_regex("Context.invoke")
    '\\\\bContext\\\\.invoke\\\\b'
    """
    from .identifiers import split_identifier

    term = term.strip()
    if not term:
        return None
    exact = re.escape(term)
    if _word(term[0]):
        exact = r"\b" + exact
    if _word(term[-1]):
        exact += r"\b"
    alts = [exact]
    parts = split_identifier(term) if _IDENT.fullmatch(term) else []
    if parts:
        alts.append(r"(?i:\b_*" + "_*".join(re.escape(p) for p in parts) + r"_*\b)")
    return "|".join(alts)


def text_has_term(term: str, texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` contains ``term`` by :func:`term_regex` (pure)."""
    rx = term_regex(term)
    return rx is not None and _matches(rx, texts)


def _matches(rx: str, texts: Iterable[str]) -> bool:
    """Whether the pattern ``rx`` occurs in any of ``texts``."""
    pattern = re.compile(rx)
    return any(pattern.search(t) for t in texts)


def has_term(store: Any, term: str, *, exclude: Iterable[str] = ()) -> bool:
    """Whether ``term`` occurs anywhere in the index of ``store`` (an ``IndexStore``: ``repo``,
    ``files()`` and ``where()``), leaving out the paths in ``exclude``. See the module doc."""
    rx = term_regex(term)
    if rx is None:
        return False
    return _present(store, rx, exclude)


def word_root(word: str, stem: str) -> str:
    """What every form of a question word starts with: the common prefix of the word and its
    stem less two letters (at least three), without a final ``i`` (Snowball's y -> i).

    >>> [word_root(w, s) for w, s in [("YAML", "yaml"), ("dashboards", "dashboard"),
    ...                               ("lazily", "lazili"), ("suggestions", "suggest")]]
    ['yam', 'dashboa', 'laz', 'sugge']
    """
    w, s = word.lower(), stem.lower()
    common = os.path.commonprefix([w, s]) or w
    root = common[: max(3, len(common) - 2)]
    return root[:-1] if root.endswith("i") and len(root) > 3 else root


def has_fragment(store: Any, fragment: str, *, exclude: Iterable[str] = ()) -> bool:
    """Whether any indexed file contains ``fragment`` (letters and digits) anywhere, in any
    case, inside any word: ``dashboa`` is in ``web_dashboard`` and ``DashboardView``. Its
    absence is certain (the scan of :func:`has_term`); a word whose root is absent occurs in
    no form at all."""
    return not absent_fragments(store, [fragment], exclude=exclude)


def absent_fragments(
    store: Any, fragments: Sequence[str], *, exclude: Iterable[str] = ()
) -> list[str]:
    """The ``fragments`` no indexed file contains (``has_fragment`` of each), with the file
    list, and the check of files changed since indexing, done once for all of them."""
    words = [f for f in fragments if f and f.isalnum()]  # not a word: never claimed absent
    found = _present_all(store, [f"(?i:{f})" for f in words], exclude)
    return [f for f, seen in zip(words, found, strict=True) if not seen]


def _present(store: Any, rx: str, exclude: Iterable[str]) -> bool:
    return _present_all(store, [rx], exclude)[0]


def _present_all(store: Any, rxs: Sequence[str], exclude: Iterable[str]) -> list[bool]:
    """Whether each pattern occurs in the index (the scan of the module doc)."""
    if not rxs:
        return []
    skip = set(exclude)
    files = {p: f for p, f in store.files().items() if p not in skip}
    if not files:
        return [False] * len(rxs)
    from . import config
    from .grep import searchable

    root = os.path.realpath(store.repo)
    on_disk = [e[0] for e in searchable(root, [(p, None, None) for p in sorted(files)])]
    out: list[bool | None] = []
    for rx in rxs:
        found = _rg_any(root, on_disk, rx, config.max_file_bytes())
        # present, or ripgrep could not say (never refuse on a doubt); None: not on disk
        out.append(True if found is None or found else None)
    if None in out:
        stale = _not_as_indexed(root, files, set(on_disk), config.max_file_bytes())
        texts = _index_texts(store, stale) if stale else []
        for i, rx in enumerate(rxs):
            if out[i] is None:
                out[i] = True if texts is None else _matches(rx, texts)
    return [bool(v) for v in out]


def _rg_any(root: str, paths: list[str], rx: str, max_bytes: int) -> bool | None:
    """True if ripgrep finds ``rx`` in any of ``paths`` (under ``root``), False if in none,
    None if it could not run or finish."""
    from .errors import AskrepoError
    from .grep import _batches, rg_binary

    try:
        rg = rg_binary()
    except AskrepoError:
        return None
    base = [rg, "--no-config", "--no-messages", "--no-follow", "--quiet", "--crlf"]
    base += [f"--max-filesize={max_bytes}", "--regexp", rx, "--"]
    for batch in _batches(paths):
        try:
            proc = subprocess.run(
                [*base, *batch],
                cwd=root,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=TIMEOUT_S,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode == 0:
            return True
        # 1: no match; 2: some file could not be read — such a file cannot be read by step 2
        # either, which then scans its indexed text instead.
    return False


def _not_as_indexed(
    root: str, files: dict[str, Any], regular: set[str], max_bytes: int
) -> list[str]:
    """Indexed paths whose file is missing, not a regular file, unreadable, or whose content
    hash differs from the one the index recorded."""
    from .safe_read import read_regular

    stale = []
    for path, f in files.items():
        if path not in regular:
            stale.append(path)
            continue
        full = os.path.join(root, path)
        try:
            if os.stat(full).st_size != getattr(f, "size", None):
                stale.append(path)
                continue
            data = read_regular(full, max_bytes)
        except Exception:  # noqa: BLE001 - any failure to read: use the indexed text
            stale.append(path)
            continue
        if hashlib.sha256(data).hexdigest() != getattr(f, "sha", None):
            stale.append(path)
    return stale


def _index_texts(store: Any, paths: list[str]) -> list[str] | None:
    """The indexed chunk texts of ``paths`` (None if the store cannot list them)."""
    where = getattr(store, "where", None)
    if where is None:
        return None
    limit = max(int(getattr(store.meta(), "chunk_count", 0) or 0), 1)
    out: list[str] = []
    for i in range(0, len(paths), 200):
        part = paths[i : i + 200]
        cond = "path IN (" + ", ".join("'" + p.replace("'", "''") + "'" for p in part) + ")"
        try:
            rows = where(cond, limit=limit)
        except Exception:  # noqa: BLE001 - a damaged index: cannot be certain
            return None
        out.extend(chunk.text for _, chunk, _ in rows)
    return out
