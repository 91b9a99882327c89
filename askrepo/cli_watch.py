"""``askrepo watch``: keep an index fresh while you work (one status line; Ctrl-C stops).

Registered by askrepo.cli as ``app.command("watch")(friendly(watch_cmd))``; the loop is
``askrepo.watch.watch_index``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def watch_cmd(
    path: Annotated[
        Path | None, typer.Argument(help="Repository (default: current git repo).")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Embedding model of the index.")] = None,
) -> None:
    """Re-index changed files as they change (debounced; ignores what the index ignores)."""
    from rich.text import Text

    from .cli import default_repo, err
    from .watch import watch_index

    root = default_repo(path)
    try:
        if err.is_terminal:
            from rich.live import Live

            with Live(Text("starting…"), console=err, auto_refresh=False) as live:
                watch_index(
                    root, model=model, on_status=lambda s: live.update(Text(s.line()), refresh=True)
                )
        else:  # a log: one line per check
            watch_index(
                root, model=model, on_status=lambda s: print(s.line(), file=err.file, flush=True)
            )
    except KeyboardInterrupt:
        pass
    err.print("[dim]stopped watching[/]")
