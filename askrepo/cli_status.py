"""``askrepo status``: how complete and how fresh an index is.

Registered by askrepo.cli as ``app.command("status")(friendly(status_cmd))``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def status_cmd(
    path: Annotated[
        Path | None, typer.Argument(help="Repository (default: current git repo).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Embedding model of the index.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show an index: files, chunks embedded so far, and whether files changed since."""
    from rich.markup import escape
    from rich.table import Table

    from .cli import default_repo, out
    from .refresh import status
    from .store import open_index

    root = default_repo(path)
    st = status(open_index(root, model))
    if json_out:
        print(json.dumps(st.to_dict(), ensure_ascii=False))
        return
    f = st.freshness
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_row("repository", escape(st.repo))
    t.add_row("model", f"{st.model} ({st.model_id})")
    t.add_row(
        "indexed", f"{st.indexed_at}" + (f" at {f.indexed_commit[:12]}" if f.indexed_commit else "")
    )
    t.add_row("files", f"{st.file_count:,}")
    done = (
        ""
        if st.fully_embedded
        else " — search uses full text for the rest; run `askrepo index` to finish"
    )
    t.add_row("embedded", f"{st.embedded:,} / {st.chunk_count:,} chunks{done}")
    if st.full_text == "lancedb":
        t.add_row(
            "full text",
            "LanceDB's BM25 (index built by an older askrepo) — run `askrepo index` to build "
            "askrepo's own (a symbol's name weighs more; faster)",
        )
    if f.stale:
        names = escape(", ".join(f.changed[:5]) + (" …" if len(f.changed) > 5 else ""))
        t.add_row(
            "stale",
            f"[yellow]yes[/]: {f.changed_files} file{'s' * (f.changed_files != 1)} changed "
            f"({names}) — `askrepo index` or search with --refresh"
            if f.changed_files
            else f"[yellow]unknown[/] ({escape(f.error or '')})",
        )
    else:
        t.add_row("stale", "no")
    if f.head_commit and f.head_commit != f.indexed_commit:
        t.add_row("HEAD", f"{f.head_commit[:12]} (moved since indexing)")
    t.add_row("checked", f"{f.method} in {f.checked_ms:.0f} ms")
    t.add_row("index", escape(st.index_path))
    out.print(t, highlight=False)
