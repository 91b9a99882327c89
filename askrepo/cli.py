"""The ``askrepo`` command line. Thin: parse options, call the library, print.

Library exceptions (``AskrepoError``) become one red line on stderr and a non-zero exit code.
Heavy modules (lancedb, fastembed, tree-sitter) are imported inside the commands.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from click import ClickException
from rich.console import Console
from rich.markup import escape

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

app = typer.Typer(
    name="askrepo",
    help="Ask questions about a code base; get answers with exact path:line citations. "
    "Fully offline: local embeddings, local index, local model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # paragraphs reflow to the terminal, not at source newlines
)


class SafeConsole(Console):
    """A rich Console that shows the control characters of repository text (a file's ESC
    sequences, a stray CSI or BEL) as visible ``\\x1b`` escapes instead of sending them to the
    terminal, where they could recolour, retitle or clear it. Styles rich adds itself are
    rendered from ``Segment.style``, so they are untouched."""

    def _render_buffer(self, buffer: Any) -> str:
        from rich.segment import Segment

        def visible(text: str) -> str:
            return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)

        return super()._render_buffer(
            seg
            if seg.control or not _CONTROL.search(seg.text)
            else Segment(visible(seg.text), seg.style)
            for seg in buffer
        )


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but "\t" and "\n"
out = SafeConsole()
err = SafeConsole(stderr=True)


def fail(message: str, code: int = 1) -> None:
    # plain text: a path such as `/tmp/[red]repo` or `[id].py` is shown as is, not as markup
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


# What Ctrl-C means for each command (only `index` writes anything).
_INTERRUPTED = {
    "index": "Interrupted — nothing was committed; the previous index is still usable.",
}


def friendly(fn):
    """Turn library errors, bad ASKREPO_* values, OS and index errors and Ctrl-C into one-line
    messages with a non-zero exit code. ASKREPO_DEBUG=1 re-raises unexpected errors (with
    their traceback) for a bug report."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        from . import config
        from .errors import AskrepoError

        try:
            config.validate()
            if fn.__name__ == "index":
                config.check_home(write=True)
            return fn(*args, **kwargs)
        except AskrepoError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail(_INTERRUPTED.get(fn.__name__, "Interrupted."), 130)
        except BrokenPipeError:
            raise typer.Exit(0) from None
        except (typer.Exit, typer.Abort, ClickException):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
            if os.environ.get("ASKREPO_DEBUG", "").strip() not in ("", "0"):
                raise
            fail(unexpected_error_message(exc), 1)

    return wrapper


def unexpected_error_message(exc: BaseException) -> str:
    """One line for an exception that is not an AskrepoError (pure; see ``friendly``)."""
    from . import config

    detail = " ".join(str(exc).split())[:300] or type(exc).__name__
    module = type(exc).__module__ or ""
    if module.startswith(("lance", "pyarrow")) or "lance" in detail.lower():
        return (
            f"The index could not be read ({type(exc).__name__}: {detail}) — it may be damaged; "
            "run `askrepo index --rebuild`"
        )
    if isinstance(exc, OSError):
        where = exc.filename or ""
        try:
            in_home = bool(where) and Path(where).resolve().is_relative_to(config.home().resolve())
        except (OSError, ValueError):
            in_home = False
        hint = (
            "set ASKREPO_HOME to a writable directory"
            if in_home
            else "check that the path exists and is readable"
        )
        what = f"{exc.strerror or detail}" + (f": {where}" if where else "")
        return f"{what} — {hint}"
    return (
        f"Unexpected error ({type(exc).__name__}: {detail}) — this is a bug in askrepo; "
        "re-run with ASKREPO_DEBUG=1 for the traceback and report it"
    )


def text_arg(value: str, what: str) -> str:
    """A QUESTION / QUERY argument, or standard input when it is ``-`` (a pasted issue or
    stack trace: ``askrepo search --files - < issue.txt``)."""
    from .errors import UsageError

    if value != "-":
        return value
    text = sys.stdin.read()
    if not text.strip():
        raise UsageError(
            f"Nothing on standard input for the {what} — pipe it in "
            f"(`askrepo search --files - < issue.txt`) or pass it as an argument"
        )
    return text.strip()


def default_repo(repo: Path | None) -> Path:
    """--repo, else the git top-level of the current directory, else the current directory."""
    from .ingest import git_toplevel

    if repo is not None:
        return repo.expanduser().resolve()
    return (git_toplevel(Path.cwd()) or Path.cwd()).resolve()


RepoOpt = Annotated[
    Path | None,
    typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
]
RefreshOpt = Annotated[
    bool,
    typer.Option(
        "--refresh",
        help="Re-index changed files first when there are few (ASKREPO_REFRESH_MAX_FILES, "
        "default 20). ASKREPO_AUTO_REFRESH=1 always does.",
    ),
]


def freshen(retriever: Any, fresh: Any, refresh: bool) -> Any:
    """With --refresh (or ASKREPO_AUTO_REFRESH=1), re-index a few changed files before
    searching; returns the freshness to report. Notes go to stderr."""
    from .config import auto_refresh
    from .refresh import refresh_changed

    if not fresh.stale or not (refresh or auto_refresh()):
        return fresh
    emb = retriever.embedder if fresh.changed_files else None
    res = refresh_changed(retriever.store, embedder=emb, before=fresh)
    if res.refreshed:
        n = res.changed_files
        err.print(f"[dim]refreshed {n} changed file{'s' * (n != 1)} before searching[/]")
    elif res.note:
        note(res.note)
    return res.freshness


def note(message: str) -> None:
    """A one-line note on stderr (``message`` is plain text, not rich markup)."""
    err.print(f"[yellow]note:[/] {escape(message)}", highlight=False, soft_wrap=True)


def plural(n: int, word: str) -> str:
    """``3 files``, ``1 file``."""
    return f"{n} {word}{'s' * (n != 1)}"


def stale_note(fresh: Any, root: Path) -> None:
    """One line on stderr when the index is behind the files on disk."""
    from .errors import shell_arg

    if not fresh.stale:
        return
    n = fresh.changed_files
    what = f"{plural(n, 'file')} changed" if n else "the files may have changed"
    note(
        f"{what} since indexing — results may be out of date; "
        f"run `askrepo index {shell_arg(root)}` or search with --refresh"
    )


# ----------------------------------------------------------------------------------------------
# index


@app.command()
@friendly
def index(
    path: Annotated[
        Path | None, typer.Argument(help="Repository to index (default: current git repo).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Embedding model: minilm (default, embedded), minilm-fp32, minilm-int8, "
            "bge-small (better for --mode dense), jina-code (needs a one-time download). "
            "Env: ASKREPO_MODEL.",
        ),
    ] = None,
    rebuild: Annotated[
        bool, typer.Option("--rebuild", help="Rebuild from scratch (e.g. after damage).")
    ] = False,
    contextual: Annotated[
        bool,
        typer.Option(
            "--contextual",
            envvar="ASKREPO_CONTEXTUAL",
            help="Add a one-line LLM summary to every chunk, stored and embedded with it "
            "(slow; uses the `ask` backend; ASKREPO_CONTEXTUAL=1).",
        ),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Also index the git history (commit messages, touched "
            "definitions) for `search --history`, `why` and `ask`.",
        ),
    ] = False,
    history_depth: Annotated[
        int | None, typer.Option(help="With --history: the newest N commits (default 5000).")
    ] = None,
) -> None:
    """Index a repository: walk (respecting .gitignore), chunk by AST, embed, store.

    Re-running only re-embeds files whose content changed. \
An interrupted run leaves the previous index usable.
    """
    from .indexer import index_repo

    root = default_repo(path)
    llm = None
    if contextual:
        from .llm import choose_backend

        llm = choose_backend(os.environ.get("ASKREPO_BACKEND", "auto"))
    prog = _IndexProgress(enabled=not json_out and err.is_terminal)
    try:
        with prog:
            summary = index_repo(
                root,
                model=model,
                rebuild=rebuild,
                progress=prog,
                contextual=llm,
                notify=None if json_out else note,  # why the whole index is rebuilt
            )
    except KeyboardInterrupt:
        _interrupted(root, model, prog.searchable)
    if not json_out:
        _print_index_summary(summary)
    hist = None
    if history:  # askrepo.cli_history
        from .cli_history import index_history_cmd

        try:
            hist = index_history_cmd(
                root, model=model, depth=history_depth, rebuild=rebuild, json_out=json_out
            )
        except KeyboardInterrupt:
            fail(
                "Interrupted while reading the history: the code index above is up to date; "
                "the history index was not changed — run `askrepo index --history` again.",
                130,
            )
    if json_out:  # one object; the history run's summary under "history"
        from .freshness import check_store
        from .store import open_index

        d = summary.to_dict()
        d.update(check_store(open_index(root, model)).to_dict())
        if hist is not None:
            d["history"] = hist.to_dict()
        print(json.dumps(d, ensure_ascii=False))


def _interrupted(root: Path, model: str | None, searchable: bool) -> None:
    """Ctrl-C during `index`: say what is committed (phase 1 and the embedded batches)."""
    if not searchable:
        fail("Interrupted — nothing was committed; the previous index is still usable.", 130)
    from .store import open_index

    try:
        done, total = open_index(root, model).embedding_progress()
    except Exception:
        fail("Interrupted while embedding — run `askrepo index` again to finish.", 130)
    fail(
        f"Interrupted while embedding: the index is searchable (embedded: {done:,} / "
        f"{total:,} chunks) — run `askrepo index` again to embed the rest.",
        130,
    )


class _IndexProgress:
    """Rich progress on stderr: files chunked, then (phase 2) chunks embedded with rate + ETA."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.progress = None
        self.tasks: dict[str, Any] = {}
        self.started: float | None = None
        self.searchable = False  # phase 1 committed

    def __enter__(self):
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            )
            self.progress.start()
        return self

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "phase1":
            self.searchable = True
            if self.progress is not None and total:
                self.progress.console.print(
                    f"[green]searchable now[/] ({total:,} chunks: full-text, symbols, grep); "
                    "embedding the rest — Ctrl-C keeps what is done",
                    highlight=False,
                )
            return
        if self.progress is None:
            return
        labels = {
            "walk": "walking files",
            "chunk": "files (chunk + full text)",
            "embed": "embedding",
            "reuse": "vectors reused",
            "fts": "full-text index",
        }
        task = self.tasks.get(stage)
        if task is None:
            task = self.progress.add_task(labels.get(stage, stage), total=None, rate="")
            self.tasks[stage] = task
        fields: dict[str, Any] = {}
        if stage == "embed":
            if self.started is None:
                self.started = time.monotonic()
            elif done:
                rate = done / max(time.monotonic() - self.started, 1e-6)
                fields["rate"] = f"{rate:.0f} chunks/s"
        self.progress.update(
            task, completed=done, total=total if total and total > 0 else None, **fields
        )

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def _print_index_summary(s: Any) -> None:
    from rich.table import Table

    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_row("repository", escape(s.repo))
    t.add_row(
        "files",
        f"{s.files_total} indexed ({s.files_indexed} new/changed, {s.files_unchanged} "
        f"unchanged, {s.files_removed} removed)",
    )
    if s.skipped:
        t.add_row("skipped", escape(", ".join(f"{n} {why}" for why, n in s.skipped.items())))
    langs = ", ".join(f"{lang} {n}" for lang, n in list(s.chunks_by_language.items())[:8])
    run = f"{s.chunks_embedded} embedded"
    if s.chunks_reused:
        run += f", {s.chunks_reused} reused (same text)"
    t.add_row("chunks", f"{s.chunks_total} ({run} this run) — {langs}")
    if s.chunks_with_vectors < s.chunks_total:
        t.add_row(
            "embedded",
            f"{s.chunks_with_vectors:,} / {s.chunks_total:,} chunks — run again to finish",
        )
    if s.redactions:
        t.add_row("secrets", f"{s.redactions} redacted before embedding and storage")
    stages = " · ".join(f"{k} {v:.2f}s" for k, v in s.timings_s.items())
    rate = f" · {s.embed_rate:.0f} chunks/s" if s.embed_rate else ""
    t.add_row("time", stages + rate)
    t.add_row("model", f"{s.model} ({s.model_id})")
    t.add_row("index", escape(s.index_path))
    if s.rebuilt:
        t.add_row("rebuilt", escape(s.rebuilt))
    if s.pieces_missing:
        t.add_row(
            "note",
            "built before piece vectors of long chunks; `askrepo index --rebuild` adds them "
            "(better natural-language search)",
        )
    out.print(t)


# ----------------------------------------------------------------------------------------------
# search


@app.command()
@friendly
def search(
    query: Annotated[
        str,
        typer.Argument(help="A question or an identifier; - reads it (e.g. an issue) from stdin."),
    ],
    repo: Annotated[
        list[Path] | None,
        typer.Option(
            "--repo",
            help="Repository root (repeatable: results fused by rank; "
            "default: git top-level of the current dir).",
        ),
    ] = None,
    k: Annotated[int, typer.Option("-k", "--k", help="Number of results.")] = 8,
    mode: Annotated[str, typer.Option(help="dense | fts | hybrid")] = "hybrid",
    include_tests: Annotated[
        bool | None,
        typer.Option(
            "--include-tests/--exclude-tests",
            help="Force tests in/out (default: auto from the question; ASKREPO_EXCLUDE_TESTS).",
            show_default=False,
        ),
    ] = None,
    include_docs: Annotated[
        bool | None,
        typer.Option(
            "--include-docs/--exclude-docs",
            help="Force docs in/out (default: auto from the question; ASKREPO_EXCLUDE_DOCS).",
            show_default=False,
        ),
    ] = None,
    expand: Annotated[
        bool, typer.Option("--expand", help="Add definitions the hits call, and callers.")
    ] = False,
    expand_depth: Annotated[int, typer.Option(help="Call-graph levels for --expand.")] = 2,
    max_per_file: Annotated[
        int | None,
        typer.Option(
            help="At most this many hits per file (default: no cap; each further hit "
            "of a file counts 0.95x less)."
        ),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show dense/FTS ranks, fused score, filters.")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    model: Annotated[str | None, typer.Option(help="Embedding model of the index.")] = None,
    refresh: RefreshOpt = False,
    history: Annotated[
        bool, typer.Option("--history", help="Search commit messages instead of code.")
    ] = False,
    files: Annotated[
        bool,
        typer.Option("--files", help="Rank files, not chunks (e.g. for a pasted bug report)."),
    ] = False,
) -> None:
    """Retrieve the code most relevant to QUERY (no LLM): hybrid dense + full-text with RRF."""
    from .freshness import check_store
    from .retriever import Retriever, SearchOptions

    query = text_arg(query, "query")
    if history:  # askrepo.cli_history
        from .cli_history import search_history_cmd
        from .errors import UsageError

        code_only = {
            "--files": files,
            "--expand": expand,
            "--include-tests/--exclude-tests": include_tests is not None,
            "--include-docs/--exclude-docs": include_docs is not None,
            "--max-per-file": max_per_file is not None,
            "--explain": explain,
            "--refresh": refresh,
            "several --repo": bool(repo and len(repo) > 1),
        }
        given = [flag for flag, on in code_only.items() if on]
        if given:
            one = len(given) == 1
            raise UsageError(
                f"{', '.join(given)} {'applies' if one else 'apply'} to code search, not to "
                f"--history (commits) — drop {'it' if one else 'them'}, or search code without "
                "--history"
            )

        root = default_repo(repo[0] if repo else None)
        search_history_cmd(query, root, k=k, mode=mode, model=model, json_out=json_out)
        return
    if max_per_file is not None and max_per_file < 1:
        from .errors import UsageError

        raise UsageError(
            f"--max-per-file must be at least 1 (got {max_per_file}) — omit it for no cap"
        )
    opts = SearchOptions(
        k=k,
        mode=mode,
        include_tests=include_tests,
        include_docs=include_docs,
        expand=expand,
        expand_depth=expand_depth,
        max_per_file=max_per_file,
    )
    if repo and len(repo) > 1:  # several repositories: askrepo.multirepo fuses their rankings
        from .cli_multi import search_repos

        return search_repos(repo, query, opts, model=model, json_out=json_out, explain=explain)
    root = default_repo(repo[0] if repo else None)
    retriever = Retriever.open(root, model=model)
    # Importing LanceDB takes over a second; load the embedding model and check the work tree
    # for changes meanwhile (native loading and file I/O overlap the import in two threads).
    import threading

    warm = threading.Thread(target=retriever.store.warm, daemon=True)
    warm.start()
    if mode != "fts":
        _ = retriever.embedder
    fresh = check_store(retriever.store)
    warm.join()
    fresh = freshen(retriever, fresh, refresh)
    result = retriever.search_files(query, opts) if files else retriever.search(query, opts)
    result.stale, result.freshness = fresh.stale, fresh.to_dict()
    stale_note(fresh, root)
    if json_out:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    if files:
        print_files(result, explain=explain)
        return
    print_hits(result, explain=explain)


def print_files(result: Any, explain: bool = False) -> None:
    from rich.table import Table

    if not result.files:
        out.print(f"No results for {escape(repr(result.query))}.")
        return
    t = Table(box=None, header_style="bold")
    # the path is the answer: it keeps its width (folding only past the terminal's); the best
    # chunk's symbol is cut instead. Every column has a minimum width, or a narrow terminal
    # would drop the rank and the score altogether.
    widest = max(len(f.path) for f in result.files)
    t.add_column("#", justify="right", no_wrap=True, min_width=2)
    t.add_column("file", overflow="fold", min_width=min(widest, 60))
    t.add_column("score", justify="right", no_wrap=True, min_width=6)
    t.add_column("best", no_wrap=True, overflow="ellipsis", min_width=12)
    for f in result.files:
        b = f.best
        best = f"{b['start_line']}-{b['end_line']}" + (f" {b['symbol']}" if b["symbol"] else "")
        t.add_row(str(f.rank), escape(f.path), f"{f.score:.4f}", escape(best))
    out.print(t)
    if explain:  # the notes of the search, and which tests voted for which file
        notes = ", ".join(result.filters) or "none"
        out.print(f"[dim]filters: {escape(notes)} · {result.elapsed_ms:.0f} ms[/]")


SYMBOL_MIN = 24  # a narrower symbol column folds a name such as Logger.pushProcessor


def fit_columns(
    locations: list[str], symbols: list[str], spare: int, floor: int = 1
) -> tuple[int, int, bool]:
    """Widths of a table's location and symbol columns sharing ``spare`` columns, and whether
    the symbol column got ``SYMBOL_MIN`` (or its widest symbol). The location keeps its width
    while that leaves the symbol that much; past that it folds, down to 20 (never cut: it is
    the citation), and the symbol folds in what is left (at least ``floor``). A column is never
    narrower than its header ("symbo / l" above a 5-letter name).

    >>> fit_columns(["src/a.py:1-9"], ["f"], 80)
    (12, 6, True)
    >>> fit_columns(["x" * 58], ["Logger.pushProcessor"], 65)
    (45, 20, True)
    >>> fit_columns(["x" * 58], ["Logger.pushProcessor"], 37)
    (20, 17, False)
    """
    widest = max([len("location"), *(len(loc) for loc in locations)])
    names = max([len("symbol"), *(len(s) for s in symbols)])
    loc = min(widest, max(20, spare - min(names, SYMBOL_MIN)))
    sym = min(names, max(floor, spare - loc))
    return loc, sym, sym >= min(names, SYMBOL_MIN)


def _explain_note(h: Any) -> str:
    """Where a hit came from, for ``search --explain``."""
    note = f"expanded from {h.expanded_from}" if h.expanded_from else h.file_class
    if h.sources.get("infile"):
        note += f", #{h.sources['infile']} in the best file"
    if h.sources.get("feedback"):
        note += f", #{h.sources['feedback']} by the first hits' words"
    if h.sources.get("prose"):
        note += f", #{h.sources['prose']} by the report's prose"
    if h.sources.get("title"):
        note += f", #{h.sources['title']} by the report's title"
    if h.sources.get("delegate"):
        note += f", moved up from #{h.sources['delegate']}: the thin wrapper below calls it"
    if h.sources.get("member"):
        note += f", the definition's #{h.sources['member']} largest member"
    if h.sources.get("evidence"):
        note += (
            f", moved up from #{h.sources['evidence']}: the question's terms are in its"
            " name, signature and doc"
        )
    return note


def print_hits(result: Any, *, explain: bool = False, preview_lines: int = 6) -> None:
    from rich.table import Table

    if not result.hits:
        out.print(f"No results for {escape(repr(result.query))}.")
        return
    t = Table(box=None, header_style="bold")
    t.add_column("#", justify="right", no_wrap=True)
    locations = [h.location for h in result.hits]
    names = [h.symbol or f"({h.kind})" for h in result.hits]

    def layout(others: tuple[int, ...]) -> tuple[int, int, bool]:
        spare = out.width - sum(others) - 2 * (len(others) + 2)  # 2 of padding per column
        return fit_columns(locations, names, spare, floor=8)

    base = (len(str(result.hits[-1].rank)), 6) + ((5, 5) if explain else ())
    loc, sym, roomy = layout(base + (12,) if explain else base)
    # --explain on a narrow terminal: the notes go under the table rather than fold the symbols
    note_column = explain and roomy
    if explain and not note_column:
        loc, sym, _ = layout(base)
    t.add_column("location", overflow="fold", min_width=loc, max_width=loc)
    t.add_column("symbol", overflow="fold", min_width=sym, max_width=sym)
    t.add_column("score", justify="right", no_wrap=True)
    if explain:
        t.add_column("dense", justify="right", no_wrap=True)
        t.add_column("fts", justify="right", no_wrap=True)
    if note_column:
        t.add_column("note", min_width=12)  # wraps at its spaces
    notes = [_explain_note(h) for h in result.hits] if explain else []
    for i, h in enumerate(result.hits):
        row = [str(h.rank), escape(h.location), escape(names[i])]
        row.append(f"{h.score:.4f}")
        if explain:
            d, f = h.sources.get("dense"), h.sources.get("fts")
            row += [str(d) if d else "-", str(f) if f else "-"]
        if note_column:
            row.append(escape(notes[i]))
        t.add_row(*row)
    out.print(t)
    if explain and not note_column:
        width = len(str(result.hits[-1].rank))
        for h, note in zip(result.hits, notes, strict=True):
            out.print(f"[dim]{h.rank:>{width}}: {escape(note)}[/]", highlight=False)
    if explain:
        out.print(
            f"[dim]mode {result.mode} · RRF k=60 · filters: "
            f"{', '.join(result.filters) or 'none'} · {result.elapsed_ms:.0f} ms[/]"
        )
    for h in result.hits:
        print_snippet(h, escape(h.location), preview_lines)


def print_snippet(h: Any, title: str, preview_lines: int = 6) -> None:
    """One hit under ``title`` (already markup-escaped): its first ``preview_lines`` lines with
    line numbers, and how many more there are."""
    from rich.syntax import Syntax

    lines = h.text.split("\n")
    out.print(f"\n[bold cyan]{h.rank}. {title}[/] [dim]{escape(h.symbol or '')}[/]")
    out.print(
        Syntax(
            "\n".join(lines[:preview_lines]),
            h.language or "text",
            line_numbers=True,
            start_line=h.start_line,
            word_wrap=False,
            theme="ansi_dark",
        )
    )
    if len(lines) > preview_lines:
        more = len(lines) - preview_lines
        out.print(f"[dim]   … {more} more line{'s' if more != 1 else ''}[/]")


# ----------------------------------------------------------------------------------------------
# grep


@app.command()
@friendly
def grep(
    pattern: Annotated[str, typer.Argument(help="Regular expression (or text with --literal).")],
    repo: RepoOpt = None,
    literal: Annotated[bool, typer.Option("--literal", "-F", help="Match text exactly.")] = False,
    path: Annotated[str | None, typer.Option(help="Only paths matching this regex.")] = None,
    lang: Annotated[str | None, typer.Option(help="Only this language (python, go, ...).")] = None,
    ignore_case: Annotated[bool, typer.Option("--ignore-case", "-i")] = False,
    limit: Annotated[int, typer.Option(help="At most this many matching lines.")] = 20,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Exact search over the indexed files, definitions and code first (like ripgrep)."""
    from .freshness import check_store
    from .grep import grep_index
    from .store import open_index

    store = open_index(default_repo(repo))
    started = time.perf_counter()
    res = grep_index(
        store,
        pattern,
        literal=literal,
        path=path,
        lang=lang,
        limit=limit,
        case_sensitive=not ignore_case,
    )
    if json_out:
        took = {"repo": str(store.repo), "elapsed_ms": (time.perf_counter() - started) * 1000}
        data = {**took, **res.to_dict(), **check_store(store).to_dict()}
        data["elapsed_ms"] = round(data["elapsed_ms"], 2)
        print(json.dumps(data, ensure_ascii=False))
        return
    for m in res.matches:  # code and paths are text, not rich markup: `tuple[str, int]`
        out.print(
            f"[cyan]{escape(m.path)}[/]:[green]{m.line}[/]: {escape(m.text.strip())}",
            highlight=False,
            soft_wrap=True,
        )
    if res.note:
        err.print(f"[dim]{escape(res.note)}[/]")
    if res.truncated and res.matches:
        more = res.total_matches - len(res.matches)
        many = f"{more} more matching lines" if more > 0 else "more matching lines"
        err.print(f"[dim]… {many} (raise --limit, now {limit}, or narrow with --path)[/]")
    if res.timed_out:
        err.print("[yellow]note:[/] the pattern timed out; results are partial")
    if not res.matches:
        out.print(f"No match for {escape(repr(pattern))} in {res.files_searched} files.")
        raise typer.Exit(1)


# ----------------------------------------------------------------------------------------------
# ask / eval live in their own modules; registered here.


def _register_optional() -> None:
    from .cli_ask import ask
    from .cli_callers import callers
    from .cli_eval import eval_cmd
    from .cli_history import why
    from .cli_plan import plan
    from .cli_serve import serve
    from .cli_status import status_cmd
    from .cli_token import token_app
    from .cli_verify import verify
    from .cli_watch import watch_cmd

    app.command("ask")(friendly(ask))
    app.command("callers")(friendly(callers))
    app.command("eval")(friendly(eval_cmd))
    app.command("plan")(friendly(plan))
    app.command("verify")(friendly(verify))
    app.command("why")(friendly(why))
    app.command("status")(friendly(status_cmd))
    app.command("watch")(friendly(watch_cmd))
    app.command("serve")(friendly(serve))
    app.add_typer(token_app, name="token")


_register_optional()


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # e.g. `askrepo search … | head`
        sys.stderr.close()


if __name__ == "__main__":
    main()
