"""askrepo-mcp: a read-only MCP server (stdio) that gives coding agents search over indexed repos.

Tools: search_code, grep_code, find_symbol, get_file_context, read_file, list_files,
index_status. Every result is JSON with repo-relative ``path``s, 1-based lines and the indexed
``commit``. Every path goes through ``askrepo.safepath`` (only indexed files inside the repo are
served); every tool turns failures into an MCP tool error with a one-line message, so one bad
call never takes the server down.

The MCP SDK is an optional extra: ``pip install "askrepo[mcp]"``.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import hashlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field  # a dependency of the MCP SDK (and of lancedb and ollama)

from .errors import AskrepoError, UsageError, at_least, shell_arg

log = logging.getLogger("askrepo.mcp")

MAX_QUERY_CHARS = 20_000  # search_code query
MAX_ARG_CHARS = 4_096  # paths, names, globs, repo
MAX_LINES = 400  # per read_file / get_file_context call
MAX_BYTES = 64 * 1024  # per read_file / get_file_context call, and total hit text per search
MAX_LINE_CHARS = 2_000  # a longer line (minified code) is cut
MAX_K = 20
MAX_GREP_LIMIT = 200
MAX_LIST_LIMIT = 1_000
MAX_SYMBOLS = 50
MAX_CONTEXT = 200  # before/after lines for get_file_context

INSTRUCTIONS = """\
askrepo: read-only search over indexed code repositories. Paths are repo-relative, lines 1-based.
- search_code: natural-language or identifier search (semantic + BM25); start here for "where/how".
- grep_code: exact text or regex, ranked (definitions first); use for identifiers/error strings.
- find_symbol: where a function/class/method is defined ("main" also finds "Command.main").
- find_callers: what calls a function/method, with each call's line (certain ones first).
- get_file_context / read_file: numbered source lines (<= 400 lines per call).
- list_files, index_status: what is indexed, and whether the index is stale.
- verify_citation: does a path:start-end[@commit] citation still hold (valid/moved/changed/gone)?
- plan_change: files/functions a change touches, with evidence, callers that may break, tests.
- search_history, why_lines: commits (why/when/who), and the commit behind given lines.
"""


# ----------------------------------------------------------------------------------------------
# Tool arguments: the MCP SDK builds each tool's input schema from its method's signature, and a
# pydantic ``Field(description=...)`` in ``Annotated`` becomes the argument's description there.
# Called from Python the methods take plain values (``Annotated`` changes nothing at runtime).

SearchMode = Literal["hybrid", "dense", "fts"]  # askrepo.retriever.MODES

Repo = Annotated[
    str | None,
    Field(description="Repo path or directory name; needed only when several repos are served."),
]
FilePath = Annotated[
    str, Field(description="Repo-relative path of an indexed file, e.g. 'src/app.py'.")
]


# ----------------------------------------------------------------------------------------------
# The service: plain Python, no MCP types (tested through the protocol in tests/test_mcp.py)


def _limit_str(what: str, value: str | None, limit: int = MAX_ARG_CHARS) -> None:
    if value is not None and len(value) > limit:
        raise UsageError(
            f"The {what} is {len(value):,} characters; the limit is {limit:,} — shorten it"
        )


def _cut(line: str) -> tuple[str, bool]:
    if len(line) <= MAX_LINE_CHARS:
        return line, False
    return line[:MAX_LINE_CHARS] + " …[line cut]", True


class RepoHandle:
    """One served repository: its index (opened lazily, refreshed per call) and a Retriever.

    ``_lock`` is held while the index is opened or refreshed and while a search (or anything
    else using the tables, the in-memory mirror or the embedding model) runs: a refresh swaps
    the table and mirror, so it must never run during a search. Calls that only read files and
    the index's file list use ``read_store()``, which does not wait for a running search."""

    def __init__(self, root: Path, model: str | None = None):
        self.root = root
        self.model = model
        self._retriever: Any = None
        self._lock = threading.RLock()
        self._last_refresh = float("-inf")
        self.refresh_note: str | None = None

    def retriever(self) -> Any:
        with self._lock:
            if self._retriever is None:
                from .retriever import Retriever

                self._retriever = Retriever.open(self.root, self.model)
            else:
                self._retriever.store.refresh()
            return self._retriever

    def store(self) -> Any:
        return self.retriever().store

    def read_store(self) -> Any:
        """The store for a call that reads only ``files()`` and ``meta()`` (never the tables or
        the mirror): file reads, list_files, verify_citation, why_lines, the web viewer.

        When no search is running it is opened or refreshed as by ``store()``. While one holds
        the lock it is the store that search uses, as refreshed when it began (a refresh now
        would swap the tables under it); if the index is still being opened, a fresh read-only
        view of its metadata."""
        if self._lock.acquire(blocking=False):
            try:
                return self.store()
            finally:
                self._lock.release()
        opened = self._retriever
        if opened is not None:
            return opened.store
        from .store import open_index

        return open_index(self.root, self.model)

    def search(self, query: str, opts: Any, files: bool = False) -> Any:
        """``Retriever.search``, or ``search_files`` with ``files`` (a FileSearchResult)."""
        r = self.retriever()
        with self._lock:  # the embedding model is shared; one query at a time per repo
            fresh = self.freshen(r)
            res = r.search_files(query, opts) if files else r.search(query, opts)
            res.stale, res.freshness = fresh.stale, fresh.to_dict()
            return res

    def freshen(self, r: Any) -> Any:
        """Check for changed files; re-index them first when there are few (at most once per
        ASKREPO_MCP_REFRESH_SECONDS, default 5; ASKREPO_MCP_REFRESH=0 turns it off). The index
        lock keeps it to one writer, here and across processes."""
        import time

        from .config import mcp_refresh
        from .freshness import check_store
        from .refresh import refresh_changed

        fresh = check_store(r.store)
        if not fresh.stale or not mcp_refresh():
            return fresh
        now = time.monotonic()
        if now - self._last_refresh < _mcp_refresh_seconds():
            return fresh
        self._last_refresh = now
        res = refresh_changed(r.store, embedder=r.embedder, before=fresh)
        self.refresh_note = res.note
        if res.note:
            log.info("refresh: %s", res.note)
        return res.freshness


class Service:
    """The tool implementations over one or more repos."""

    def __init__(self, repos: list[Path], model: str | None = None):
        if not repos:
            raise UsageError("No repository to serve — pass --repo PATH")
        self.repos = [RepoHandle(Path(r).expanduser().resolve(), model) for r in repos]

    # -- repo selection -------------------------------------------------------------------------
    def pick(self, repo: str | None) -> RepoHandle:
        if repo is None or not repo.strip():
            if len(self.repos) == 1:
                return self.repos[0]
            names = ", ".join(str(h.root) for h in self.repos)
            raise UsageError(f"Several repos are served ({names}) — pass repo=<path or name>")
        _limit_str("repo", repo)
        want = repo.strip().rstrip("/\\")
        try:
            want_path = str(Path(want).expanduser().resolve())
        except (OSError, RuntimeError, ValueError):
            want_path = want
        hits = [h for h in self.repos if str(h.root) in (want, want_path) or h.root.name == want]
        if len(hits) == 1:
            return hits[0]
        names = ", ".join(f"{h.root.name} ({h.root})" for h in self.repos)
        if not hits:
            raise UsageError(f"Unknown repo {repo!r} — served repos: {names}")
        raise UsageError(f"Repo name {repo!r} is ambiguous — pass the full path; served: {names}")

    @staticmethod
    def _base(h: RepoHandle, store: Any, fresh: dict[str, Any] | None = None) -> dict[str, Any]:
        """Fields every tool result carries: repo, commit, and the freshness of the index."""
        from .freshness import check_store

        out = {"repo": str(h.root), "commit": store.meta().commit}
        out.update(fresh if fresh is not None else check_store(store).to_dict())
        return out

    # -- tools ----------------------------------------------------------------------------------
    def search_code(
        self,
        query: Annotated[
            str,
            Field(
                description="What to find: a question in plain words, identifiers, or a pasted "
                "bug report or stack trace (at most 20,000 characters)."
            ),
        ],
        k: Annotated[
            int,
            Field(description="How many hits (with files=true: files) to return, 1-20 (capped)."),
        ] = 8,
        include_tests: Annotated[
            bool | None,
            Field(
                description="true: search test files too; false: leave them out; null: decided "
                "by the query (included when it is about tests)."
            ),
        ] = None,
        include_docs: Annotated[
            bool | None,
            Field(
                description="true: search documentation too; false: leave it out; null: decided "
                "by the query (included when it is about docs)."
            ),
        ] = None,
        expand: Annotated[
            bool,
            Field(
                description="Also return the definitions the hits call and a few callers of "
                "the top hits, each with expanded_from saying where it came from."
            ),
        ] = False,
        mode: Annotated[
            SearchMode,
            Field(
                description="'hybrid': semantic (embeddings) and BM25 keyword search fused; "
                "'dense': semantic only; 'fts': BM25 full-text only."
            ),
        ] = "hybrid",
        repo: Annotated[
            str | None,
            Field(
                description="Repo path or directory name. Left out with several repos served: "
                "all of them are searched, one fused ranking (each hit names its repo)."
            ),
        ] = None,
        files: Annotated[
            bool,
            Field(
                description="Rank files instead of chunks: which files to change, e.g. for a "
                "pasted bug report or stack trace. One repo only."
            ),
        ] = False,
    ) -> dict[str, Any]:
        from .retriever import SearchOptions

        _limit_str("query", query, MAX_QUERY_CHARS)
        k = at_least("k", k, 1, MAX_K)
        opts = SearchOptions(
            k=k, mode=mode, include_tests=include_tests, include_docs=include_docs, expand=expand
        )
        if (repo is None or not repo.strip()) and len(self.repos) > 1:
            if files:
                raise UsageError("files=true ranks one repository's files — pass `repo`")
            return self._search_all(query, opts)
        h = self.pick(repo)
        res = h.search(query, opts, files=files)
        out = self._base(h, h.store(), res.freshness)
        out.update(query=query, filters=res.filters, stale=bool(res.stale))
        if h.refresh_note:
            out["refresh_note"] = h.refresh_note
        if files:
            out["files"] = [f.to_dict() for f in res.files]
            return out
        hits = self._hit_items(res.hits)
        out.update(
            mode=res.mode,
            dense_partial=bool(getattr(res, "dense_partial", False)),
            hits=hits,
        )
        if not hits:
            out["note"] = "No results — try grep_code for exact text, or include_tests/include_docs"
        return out

    @staticmethod
    def _hit_items(found: list[Any], repos: list[str] | None = None) -> list[dict[str, Any]]:
        """Search hits as tool output, their text within MAX_BYTES in total."""
        budget = MAX_BYTES
        hits = []
        for i, hit in enumerate(found):
            text = hit.text
            cut = len(text) > budget
            text = text[: max(budget, 0)]
            budget -= len(text)
            item = {
                "rank": hit.rank,
                "path": hit.path,
                "start_line": hit.start_line,
                "end_line": hit.end_line,
                "symbol": hit.symbol,
                "kind": hit.kind,
                "file_class": hit.file_class,
                "score": round(float(hit.score), 5),
                "text": text,
            }
            if repos is not None:
                item["repo"] = repos[i]
            if hit.expanded_from:
                item["expanded_from"] = hit.expanded_from
            if cut:
                item["text_truncated"] = True
            hits.append(item)
        return hits

    def _search_all(self, query: str, opts: Any) -> dict[str, Any]:
        """search_code over every served repo, fused into one ranking (askrepo.multirepo)."""
        from .multirepo import check_freshness, freshness_fields, search_many

        res = search_many([(str(h.root), h.search) for h in self.repos], query, opts)
        fresh = check_freshness((str(h.root), h.read_store()) for h in self.repos)
        out: dict[str, Any] = {
            **freshness_fields(fresh, "repos"),  # each repo with its commit and freshness
            "query": query,
            "mode": res.mode,
            "filters": res.filters,
            "hits": self._hit_items([rh.hit for rh in res.hits], [rh.repo for rh in res.hits]),
        }
        if not out["hits"]:
            out["note"] = "No results — try grep_code for exact text, or include_tests/include_docs"
        return out

    def grep_code(
        self,
        pattern: Annotated[
            str,
            Field(
                description="A ripgrep (Rust) regex matched against each line: no look-around "
                "or backreferences. Plain text with literal=true. At most 10 KB."
            ),
        ],
        literal: Annotated[
            bool, Field(description="Search `pattern` as plain text, not as a regex.")
        ] = False,
        path: Annotated[
            str | None,
            Field(
                description="Only files whose repo-relative path matches this regex, e.g. "
                "'^tests/' or 'src/click/core\\.py'; null: all files."
            ),
        ] = None,
        lang: Annotated[
            str | None,
            Field(
                description="Only files of this indexed language: python, typescript, go, ... "
                "or an alias (py, js, ts, rs, ...); null: all languages."
            ),
        ] = None,
        limit: Annotated[
            int, Field(description="How many matches to return at most, 1-200 (capped).")
        ] = 20,
        case_sensitive: Annotated[
            bool, Field(description="false: ignore case (exact-case matches still rank first).")
        ] = True,
        repo: Repo = None,
    ) -> dict[str, Any]:
        from .grep import grep_index

        _limit_str("path filter", path)
        _limit_str("lang", lang, 100)
        limit = at_least("limit", limit, 1, MAX_GREP_LIMIT)
        h = self.pick(repo)
        store = h.store()
        res = grep_index(
            store,
            pattern,
            literal=literal,
            path=path,
            lang=lang,
            limit=limit,
            case_sensitive=case_sensitive,
        )
        out = self._base(h, store)
        out.update(res.to_dict())
        return out

    def find_symbol(
        self,
        name: Annotated[
            str,
            Field(
                description="The definition's name: qualified ('Command.main', "
                "'pkg.module.Class', 'crate::mod::Type') or its last part ('main' finds "
                "'Command.main')."
            ),
        ],
        repo: Repo = None,
    ) -> dict[str, Any]:
        _limit_str("name", name, 1_000)
        if not name or not name.strip():
            raise UsageError("The symbol name is empty — pass e.g. 'main' or 'Command.main'")
        h = self.pick(repo)
        store = h.store()
        chunks = store.find_symbol(name.strip())
        out = self._base(h, store)
        out["name"] = name
        out["definitions"] = [
            {
                "path": c.path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "symbol": c.symbol,
                "kind": c.kind,
                "language": c.language,
                "signature": c.signature,
            }
            for c in chunks[:MAX_SYMBOLS]
        ]
        out["truncated"] = len(chunks) > MAX_SYMBOLS
        if not chunks:
            out["note"] = (
                f"No definition named {name!r} in the index — try grep_code for a use, "
                "or search_code to describe it"
            )
        return out

    def find_callers(
        self,
        name: Annotated[
            str,
            Field(
                description="The function or method whose callers to find: 'parse_args', "
                "'Command.main', 'Foo::bar'."
            ),
        ],
        repo: Repo = None,
        include_tests: Annotated[
            bool, Field(description="false: leave out callers in test files.")
        ] = True,
    ) -> dict[str, Any]:
        from .callers import find_callers

        _limit_str("name", name, 1_000)
        h = self.pick(repo)
        store = h.store()
        out = self._base(h, store)
        out.update(find_callers(store, name, include_tests=include_tests).to_dict())
        return out

    def _read_lines(self, h: RepoHandle, store: Any, path: str) -> tuple[str, list[str], bool]:
        """(repo-relative path, the file's lines as the index holds them — secrets redacted —,
        whether it changed since indexing)."""
        from .ingest import decode
        from .lines import split_lines
        from .secrets import redact

        rel, data, changed = self._read_indexed(h, store, path)
        text = decode(data)  # as the indexer decodes it
        text, _ = redact(text, rel)  # show what the index holds: secrets stay redacted
        return rel, [ln[:-1] if ln.endswith("\r") else ln for ln in split_lines(text)], changed

    def _read_indexed(self, h: RepoHandle, store: Any, path: str) -> tuple[str, bytes, bool]:
        """(repo-relative path, the bytes of an indexed file now, whether they changed since
        indexing); a one-line UsageError when it is not an indexed file or cannot be read."""
        from . import config
        from .safe_read import read_regular
        from .safepath import resolve_repo_path

        _limit_str("path", path)
        files = store.files()
        full = resolve_repo_path(h.root, path, allowed=set(files))
        rel = full.relative_to(Path(os.path.realpath(h.root))).as_posix()
        try:
            # non-blocking, regular files only, at most ASKREPO_MAX_FILE_BYTES: a FIFO or a
            # device swapped in after indexing is refused at once, a huge file is not read
            data = read_regular(full, config.max_file_bytes(), label=rel)
        except FileNotFoundError:
            raise UsageError(
                f"{path!r} was indexed but no longer exists — "
                f"run `askrepo index {shell_arg(h.root)}`"
            ) from None
        except OSError as exc:
            raise UsageError(f"{path!r} cannot be read ({exc.strerror or exc})") from None
        return rel, data, hashlib.sha256(data).hexdigest() != files[rel].sha

    @staticmethod
    def _render(lines: list[str], start: int, end: int, mark: int | None) -> tuple[str, int, bool]:
        """Numbered lines start..end (1-based, inclusive) within the caps: (text, last, cut)."""
        width = len(str(end))
        out: list[str] = []
        size = 0
        last = start - 1
        cut_any = False
        for n in range(start, end + 1):
            if n - start >= MAX_LINES:
                break
            body, cut = _cut(lines[n - 1])
            prefix = ">" if n == mark else " "
            row = f"{prefix}{n:>{width}} | {body}"
            if size + len(row.encode("utf-8", "replace")) + 1 > MAX_BYTES and out:
                break
            out.append(row)
            size += len(row.encode("utf-8", "replace")) + 1
            last = n
            cut_any = cut_any or cut
        return "\n".join(out), last, cut_any

    def get_file_context(
        self,
        path: FilePath,
        line: Annotated[
            int, Field(description="The 1-based line to show, marked '>' in `content`.")
        ],
        before: Annotated[
            int, Field(description="How many lines to show before `line`, 0-200 (capped).")
        ] = 20,
        after: Annotated[
            int, Field(description="How many lines to show after `line`, 0-200 (capped).")
        ] = 20,
        repo: Repo = None,
    ) -> dict[str, Any]:
        before = at_least("before", before, 0, MAX_CONTEXT)
        after = at_least("after", after, 0, MAX_CONTEXT)
        h = self.pick(repo)
        store = h.read_store()
        rel, lines, changed = self._read_lines(h, store, path)
        total = len(lines)
        if not 1 <= line <= max(total, 1) or total == 0:
            raise UsageError(f"line {line} is outside {rel} ({total} lines) — pass 1..{total}")
        start = max(1, line - before)
        end = min(total, line + after)
        # keep the target line inside the capped window
        start = max(start, line - MAX_LINES // 2) if end - start + 1 > MAX_LINES else start
        text, last, cut_line = self._render(lines, start, end, line)
        out = self._base(h, store)
        out.update(
            path=rel,
            line=line,
            start_line=start,
            end_line=last,
            total_lines=total,
            truncated=start > 1 or last < total,
            changed_since_index=changed,
            content=text,
        )
        if cut_line:
            out["note"] = f"lines over {MAX_LINE_CHARS:,} characters were cut"
        return out

    def read_file(
        self,
        path: FilePath,
        start_line: Annotated[int, Field(description="The first line to return (1-based).")] = 1,
        end_line: Annotated[
            int | None,
            Field(
                description="The last line to return (1-based, inclusive); null: the end of the "
                "file. At most 400 lines / 64 KiB per call: continue at next_start_line."
            ),
        ] = None,
        repo: Repo = None,
    ) -> dict[str, Any]:
        start_line = at_least("start_line", start_line, 1, None)
        h = self.pick(repo)
        store = h.read_store()
        rel, lines, changed = self._read_lines(h, store, path)
        total = len(lines)
        out = self._base(h, store)
        if total == 0:
            out.update(path=rel, start_line=0, end_line=0, total_lines=0, truncated=False)
            out.update(changed_since_index=changed, content="")
            return out
        if start_line > total:
            raise UsageError(f"start_line {start_line} is past the end of {rel} ({total} lines)")
        want_end = total if end_line is None else min(end_line, total)
        if want_end < start_line:
            raise UsageError(f"end_line {end_line} is before start_line {start_line}")
        text, last, cut_line = self._render(lines, start_line, want_end, None)
        out.update(
            path=rel,
            start_line=start_line,
            end_line=last,
            total_lines=total,
            truncated=last < want_end,
            changed_since_index=changed,
            content=text,
        )
        if last < want_end:
            out["next_start_line"] = last + 1
        if cut_line:
            out["note"] = f"lines over {MAX_LINE_CHARS:,} characters were cut"
        return out

    def list_files(
        self,
        pattern: Annotated[
            str | None,
            Field(
                description="A case-sensitive glob on the repo-relative path, e.g. '*.py' or "
                "'src/*/models/*' ('*' also matches '/'); a file's exact path (e.g. "
                "'pages/[id].tsx') lists that file; null: every indexed file."
            ),
        ] = None,
        offset: Annotated[
            int,
            Field(description="How many files to skip, for paging: the last result's next_offset."),
        ] = 0,
        limit: Annotated[
            int, Field(description="How many files to return at most, 1-1000 (capped).")
        ] = 200,
        repo: Repo = None,
    ) -> dict[str, Any]:
        _limit_str("pattern", pattern, 1_000)
        offset = at_least("offset", offset, 0, 10**9)
        limit = at_least("limit", limit, 1, MAX_LIST_LIMIT)
        h = self.pick(repo)
        store = h.read_store()
        files = sorted(store.files().values(), key=lambda f: f.path)
        if pattern:
            # a pattern that is a file's path names it, even with glob characters in the
            # name (Next.js routes: 'pages/[id].tsx' would otherwise match pages/i.tsx, pages/d.tsx)
            files = [f for f in files if f.path == pattern or fnmatch.fnmatchcase(f.path, pattern)]
        page = files[offset : offset + limit]
        out = self._base(h, store)
        out.update(
            pattern=pattern,
            total=len(files),
            offset=offset,
            files=[
                {"path": f.path, "language": f.language, "file_class": f.file_class, "size": f.size}
                for f in page
            ],
            next_offset=offset + len(page) if offset + len(page) < len(files) else None,
        )
        return out

    def verify_citation(
        self,
        citation: Annotated[
            str,
            Field(
                description="The citation to check: 'path:start-end', optionally '@commit' "
                "(e.g. 'src/app.py:10-24@3f2c1ab'); lines 1-based, inclusive."
            ),
        ],
        hash: Annotated[
            str | None,
            Field(
                description="The citation's hash (16 hex digits, from an answer's citation): "
                "the cited lines must match it; without @commit it replaces the indexed commit."
            ),
        ] = None,
        repo: Repo = None,
    ) -> dict[str, Any]:
        from .ingest import decode
        from .lines import span_hash, split_lines
        from .verify import parse_citation, verify_citation

        _limit_str("citation", citation)
        _limit_str("hash", hash, 100)
        h = self.pick(repo)
        store = h.read_store()
        meta = store.meta()
        default_commit = meta.commit
        cite = parse_citation(citation)
        if cite.commit is None and hash is None and cite.path in set(meta.dirty):
            # indexed from a work tree where this file differed from the commit (edited or
            # untracked): search cites the indexed text, so that is what the citation means —
            # while the file is as indexed, its cited lines are the reference, not the commit's
            try:
                rel, data, changed = self._read_indexed(h, store, cite.path)
            except UsageError:
                rel, data, changed = "", b"", True
            # the raw lines, as verify_citation reads them (secrets are not redacted there)
            lines = split_lines(decode(data))
            if not changed and rel == cite.path and cite.end_line <= len(lines):
                hash = span_hash(lines[cite.start_line - 1 : cite.end_line])
        res = verify_citation(
            h.root,
            citation,
            expected_hash=hash,
            default_commit=default_commit,
            allowed=set(store.files()),
        )
        out = self._base(h, store)  # `commit` becomes the citation's own, from the result
        out.update(res.to_dict())
        return out

    def plan_change(
        self,
        request: Annotated[
            str,
            Field(
                description="The change to plan, in plain words, e.g. 'add a --color option to "
                "echo' (at most 20,000 characters)."
            ),
        ],
        max_files: Annotated[
            int, Field(description="How many files the plan names at most, 1-20 (capped).")
        ] = 6,
        repo: Repo = None,
    ) -> dict[str, Any]:
        from .plan import plan_change

        _limit_str("request", request, MAX_QUERY_CHARS)
        max_files = at_least("max_files", max_files, 1, 20)
        h = self.pick(repo)
        retriever = h.retriever()
        with h._lock:  # the embedding model is shared; one query at a time per repo
            plan = plan_change(request, retriever, max_files=max_files)
        out = self._base(h, retriever.store)
        out.update(plan.to_dict())
        return out

    # -- git history (askrepo.history, askrepo.blame) -----------------------------------------
    def search_history(
        self,
        query: Annotated[
            str,
            Field(
                description="What to look for in commit messages: a question, words or "
                "identifiers (at most 20,000 characters)."
            ),
        ],
        k: Annotated[int, Field(description="How many commits to return, 1-20 (capped).")] = 8,
        repo: Repo = None,
    ) -> dict[str, Any]:
        from .history import HistoryIndex

        _limit_str("query", query, MAX_QUERY_CHARS)
        k = at_least("k", k, 1, MAX_K)
        h = self.pick(repo)
        r = h.retriever()
        with h._lock:  # shares the repo's embedding model
            idx = HistoryIndex.open(h.root, r.store.model_id, r.embedder)
            res = idx.search(query, k)
        out = self._base(h, r.store)
        data = res.to_dict()
        for hit in data["hits"]:
            hit["body"] = _cut(hit["body"][:4000])[0]
        out.update(data)
        if not data["hits"]:
            out["note"] = "No commit matches — try other words, or search_code for the code"
        return out

    def why_lines(
        self,
        path: FilePath,
        start_line: Annotated[int, Field(description="The first line to explain (1-based).")],
        end_line: Annotated[
            int | None,
            Field(description="The last line (1-based, inclusive); null: start_line alone."),
        ] = None,
        repo: Repo = None,
    ) -> dict[str, Any]:
        from .blame import why

        _limit_str("path", path)
        h = self.pick(repo)
        store = h.read_store()
        res = why(
            h.root,
            path,
            start_line,
            end_line,
            allowed=set(store.files()),
            model=store.model_id,
        )
        out = self._base(h, store)
        out.update(res.to_dict())
        return out

    def index_status(
        self,
        repo: Annotated[
            str | None,
            Field(
                description="Repo path or directory name. Left out with several repos served: "
                "the status of each."
            ),
        ] = None,
    ) -> dict[str, Any]:
        if (repo is None or not repo.strip()) and len(self.repos) > 1:  # "" as left out
            return {"repos": [self._status(h) for h in self.repos]}
        return self._status(self.pick(repo))

    @staticmethod
    def _status(h: RepoHandle) -> dict[str, Any]:
        from .refresh import status

        store = h.store()
        with h._lock:  # status() refreshes the store: never during a search
            st = status(store)
        f = st.freshness
        out = {"commit": store.meta().commit, **st.to_dict()}
        out.update(
            embedded=f"{st.embedded:,} / {st.chunk_count:,} chunks",
            embedded_chunks=st.embedded,
            worktree_changed=f.stale,
            head_moved=bool(f.indexed_commit and f.head_commit != f.indexed_commit),
            hint=(
                f"stale: {f.changed_files} file(s) changed — search_code refreshes a few "
                f"changed files itself; else run `askrepo index {shell_arg(h.root)}`"
                if f.stale
                else "fresh"
            ),
        )
        return out


# ----------------------------------------------------------------------------------------------
# MCP wiring


TOOL_NAMES = (
    "search_code",
    "grep_code",
    "find_symbol",
    "find_callers",
    "get_file_context",
    "read_file",
    "list_files",
    "index_status",
    "verify_citation",
    "plan_change",
    "search_history",
    "why_lines",
)


def _as_tool(fn: Callable[..., dict[str, Any]]) -> Callable[..., Any]:
    """Wrap a Service method: JSON text + structured content; failures become tool errors."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent

    @functools.wraps(fn)
    def tool(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            data = fn(*args, **kwargs)
        except AskrepoError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # one bad call must not take the server down
            log.exception("tool %s failed", fn.__name__)
            raise ToolError(f"internal error: {type(exc).__name__}: {exc}") from None
        text = json.dumps(data, ensure_ascii=False)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )

    return tool


def invalid_arguments(tool: str, errors: list[dict[str, Any]]) -> str:
    """One line for arguments that do not fit a tool's schema (pydantic's ``errors()``), in
    place of pydantic's multi-line report with its documentation links.

    >>> invalid_arguments("find_symbol", [{"loc": ("name",), "type": "missing"}])
    "Invalid arguments for find_symbol: `name` is required — see the tool's input schema"
    >>> invalid_arguments("search_code", [{"loc": ("k",), "type": "int_parsing",
    ...                                    "msg": "Input should be a valid integer"}])[:71]
    'Invalid arguments for search_code: `k`: input should be a valid integer'
    """
    said = []
    for err in errors[:5]:
        field = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        if err.get("type") == "missing":
            said.append(f"`{field}` is required")
        else:
            msg = str(err.get("msg", "is not valid"))
            said.append(f"`{field}`: {msg[:1].lower()}{msg[1:]}")
    return f"Invalid arguments for {tool}: {'; '.join(said)} — see the tool's input schema"


def build_server(service: Service) -> Any:
    """An MCPServer exposing the service's tools (all read-only)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
    from pydantic import ValidationError

    from . import __version__

    class Server(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(invalid_arguments(name, exc.__cause__.errors())) from None
                raise

    server = Server(name="askrepo", instructions=INSTRUCTIONS, version=__version__)
    ro = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    for name in TOOL_NAMES:
        method = getattr(service, name)
        server.add_tool(
            _as_tool(method),
            name=name,
            description=_DESCRIPTIONS[name],
            annotations=ro,
            structured_output=False,  # the wrapper builds the CallToolResult itself
        )
    return server


_REPO = " `repo`: the repo path or its basename (only needed when several repos are served)."
_DESCRIPTIONS = {
    "search_code": (
        "Search the indexed code by meaning and keywords (hybrid semantic + BM25, exact symbol "
        "names boosted). Returns ranked chunks with path, start_line..end_line, symbol and text. "
        "Tests and docs are excluded unless the query is about them or include_tests/"
        "include_docs is true. mode: hybrid | dense | fts; expand=true adds callees; "
        "files=true ranks files instead (for a pasted bug report or stack trace: which files "
        "to change), each {rank, path, score, best: {start_line, end_line, symbol}, chunks}. With "
        "several repos served and no `repo`, searches all of them: one fused ranking, each hit "
        "with its `repo`." + _REPO
    ),
    "grep_code": (
        "Exact search with ripgrep: `pattern` is a ripgrep (Rust) regex matched per line, no "
        "look-around (literal=true: plain text). `path` is a regex on the repo-relative path, "
        "`lang` a language (python, "
        "py, ts, go, ...). Results are ranked: code before tests/docs, definitions first, "
        "whole-word and code (not comments) before the rest, dense clusters first. "
        "Each match has path, 1-based line and column, and the line text." + _REPO
    ),
    "find_symbol": (
        "Where a function, class or method is defined: exact qualified name ('Command.main'), "
        "else by last part ('main' finds 'Command.main'); a module/package path as qualifier "
        "('pkg.module.Class', 'crate::mod::Type') picks the definition in that place. "
        "Returns path and line range." + _REPO
    ),
    "find_callers": (
        "Who calls a function or method ('parse_args', 'Command.main', 'Foo::bar'): the indexed "
        "chunks whose code calls it (tree-sitter call edges, not comments or strings), each "
        "{path, start_line, end_line, symbol, kind, file_class, certain, calls: [{line, text}]}. "
        "certain=false: another definition shares the name and the call does not show which "
        "one is meant (`others` counts them). A name imported from outside the repository is "
        "not a call of the repository's. Tests included unless include_tests=false." + _REPO
    ),
    "get_file_context": (
        "Numbered lines around `line` of an indexed file (`before`/`after` lines, default 20); "
        "the target line is marked with '>'. At most 400 lines / 64 KiB." + _REPO
    ),
    "read_file": (
        "Numbered lines start_line..end_line (1-based, inclusive) of an indexed file; at most "
        "400 lines / 64 KiB per call — when `truncated`, continue at next_start_line." + _REPO
    ),
    "list_files": (
        "The indexed files (path, language, class, size), sorted, paged with offset/limit; "
        "`pattern` is a glob on the repo-relative path ('*.py', 'src/*/models/*')." + _REPO
    ),
    "search_history": (
        "Search the git history (needs `askrepo index --history`): commits ranked by meaning "
        "and keywords of their messages, each with sha, date, author, subject, body, files, "
        "and the definitions it touched as path:start-end at HEAD when they still exist. "
        "Use for why/when/who questions." + _REPO
    ),
    "why_lines": (
        "Why are these lines like this: git blame (moves/copies followed, whitespace ignored, "
        ".git-blame-ignore-revs skipped) of `path` start_line..end_line → the newest commit "
        "behind them, its full message, and the other definitions it touched." + _REPO
    ),
    "index_status": (
        "The index of a repo: commit, model, chunk and file counts, `embedded: N / M chunks` "
        "(semantic search covers the embedded part; full-text covers all), when it was built, "
        "and `stale` with the number of changed files since." + _REPO
    ),
    "verify_citation": (
        "Whether a citation 'path:start-end[@commit]' still holds in the working tree: status "
        "valid | moved (moved_to gives the new path:lines) | changed | gone. The cited lines are "
        "read from @commit with git (default: the indexed commit); `hash` (from an answer's "
        "citation) may replace the commit. Returns hashes and line numbers, no code." + _REPO
    ),
    "plan_change": (
        "Plan a code change ('add a --color option to echo'): the files and functions it "
        "touches, ranked, each with path, start_line..end_line and why (defines X / named in "
        "the request / calls X), the callers that may break (may_break) and the tests that "
        "exercise them (tests). Deterministic, from search plus the index's call edges; "
        "max_files (default 6) caps the files." + _REPO
    ),
}


def _mcp_refresh_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("ASKREPO_MCP_REFRESH_SECONDS") or 5))
    except ValueError:
        return 5.0


def repos_from(args_repos: list[str] | None, env: str | None, cwd: Path) -> list[Path]:
    """--repo values, else ASKREPO_MCP_REPO (os.pathsep-separated), else the git top-level."""
    raw = args_repos or [p for p in (env or "").split(os.pathsep) if p.strip()]
    if not raw:
        from .ingest import git_toplevel

        return [(git_toplevel(cwd) or cwd).resolve()]
    out: list[Path] = []
    for r in raw:
        p = Path(r).expanduser().resolve()
        if not p.is_dir():
            raise UsageError(f"{r} is not a directory — pass --repo PATH of an indexed repository")
        if p not in out:
            out.append(p)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="askrepo-mcp",
        description="Read-only MCP server (stdio) over askrepo indexes.",
    )
    parser.add_argument(
        "--repo",
        action="append",
        metavar="PATH",
        help="repository to serve (repeatable; default: $ASKREPO_MCP_REPO, else the git "
        "top-level of the current directory)",
    )
    parser.add_argument("--model", help="embedding model of the index (default: the index's)")
    args = parser.parse_args(argv)
    try:
        import mcp  # noqa: F401
    except ImportError:
        print(
            'askrepo-mcp needs the MCP SDK: pip install "askrepo[mcp]"',
            file=sys.stderr,
        )
        sys.exit(2)
    try:
        repos = repos_from(args.repo, os.environ.get("ASKREPO_MCP_REPO"), Path.cwd())
        service = Service(repos, args.model)
    except AskrepoError as exc:
        print(f"askrepo-mcp: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    for h in service.repos:  # say early (on stderr) when a repo has no index yet
        try:
            h.store()
        except AskrepoError as exc:
            print(f"askrepo-mcp: warning: {exc}", file=sys.stderr)
    build_server(service).run("stdio")


if __name__ == "__main__":
    main()
