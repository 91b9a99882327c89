"""``askrepo callers NAME``: the indexed code that calls a function or method, with the lines.

Registered by askrepo.cli as ``app.command("callers")(friendly(callers))``. Exit 1 when nothing
in the index calls the name (like ``grep`` with no match).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape


def callers(
    name: Annotated[
        str,
        typer.Argument(help="A function or method: parse_args, Command.main, Foo::bar."),
    ],
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
    ] = None,
    include_tests: Annotated[
        bool,
        typer.Option("--include-tests/--exclude-tests", help="Callers in test files too."),
    ] = True,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The indexed code that calls NAME (from tree-sitter's call edges), each call's line.

    Certain callers first; with other definitions of the same name, a call that does not show
    which one it means is listed as possible."""
    from .callers import find_callers
    from .cli import default_repo, out
    from .freshness import check_store
    from .store import open_index

    store = open_index(default_repo(repo))
    res = find_callers(store, name, include_tests=include_tests)
    if json_out:
        print(json.dumps({**res.to_dict(), **check_store(store).to_dict()}, ensure_ascii=False))
        if not res.callers:
            raise typer.Exit(1)
        return
    for d in res.definitions:
        out.print(
            f"[bold]{escape(d.symbol or res.name)}[/] ({d.kind}) defined at "
            f"[cyan]{escape(d.path)}:{d.start_line}-{d.end_line}[/]",
            highlight=False,
            soft_wrap=True,
        )
    shown_possible = False
    for c in res.callers:
        if not c.certain and not shown_possible and res.definitions:
            out.print("[dim]possible callers (the call does not show which definition):[/]")
            shown_possible = True
        tag = "  [dim](test)[/]" if c.file_class == "test" else ""
        out.print(
            f"[cyan]{escape(c.location)}[/] {escape(c.symbol or '')}{tag}",
            highlight=False,
            soft_wrap=True,
        )
        for s in c.calls:
            out.print(f"    [green]{s.line}[/]: {escape(s.text)}", highlight=False, soft_wrap=True)
    if res.note:
        out.print(f"[dim]{escape(res.note)}[/]", highlight=False, soft_wrap=True)
    if res.truncated:
        out.print("[yellow]note:[/] more callers than shown; narrow with a qualified name")
    if not res.callers:
        raise typer.Exit(1)
