"""``askrepo token create|list|revoke``: bearer tokens for ``askrepo serve`` (askrepo.tokens).

Registered by askrepo.cli with ``app.add_typer(token_app, name="token")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

token_app = typer.Typer(
    help="Bearer tokens for `askrepo serve` (needed when it listens beyond loopback).",
    no_args_is_help=True,
)


def _friendly(fn):
    from .cli import friendly

    return friendly(fn)


@token_app.command("create")
def create(
    repo: Annotated[
        list[Path] | None,
        typer.Option("--repo", help="Limit the token to this repository (repeatable)."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="A label, e.g. the user.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Create a token and print it once (only its hash is stored)."""

    @_friendly
    def run() -> None:
        from .cli import err
        from .tokens import TokenStore

        store = TokenStore()
        info, token = store.create(name, repo or None)
        if json_out:
            print(json.dumps({**info.to_dict(), "token": token}, ensure_ascii=False))
            return
        print(token)
        scope = ", ".join(info.repos) if info.repos else "every served repository"
        err.print(
            f"[dim]token {info.id} ({info.name}) for {scope} — shown only now; send it as "
            f"`Authorization: Bearer <token>`. Stored hash: {store.path}[/]",
            highlight=False,
            soft_wrap=True,
        )

    run()


@token_app.command("list")
def list_tokens(
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """List tokens (id, name, repositories, created, revoked) — never the tokens themselves."""

    @_friendly
    def run() -> None:
        from rich.table import Table

        from .cli import out
        from .tokens import TokenStore

        tokens = TokenStore().list()
        if json_out:
            print(json.dumps({"tokens": [t.to_dict() for t in tokens]}, ensure_ascii=False))
            return
        if not tokens:
            out.print("No tokens — create one with `askrepo token create`.")
            return
        t = Table(box=None, header_style="bold")
        for col in ("id", "name", "repos", "created", "revoked"):
            t.add_column(col)
        for tok in tokens:
            t.add_row(
                tok.id,
                tok.name,
                ", ".join(tok.repos) if tok.repos else "all",
                tok.created_at,
                tok.revoked_at or "",
            )
        out.print(t)

    run()


@token_app.command("revoke")
def revoke(
    which: Annotated[str, typer.Argument(help="The token's id or name.")],
) -> None:
    """Revoke a token; a running server refuses it from its next request on."""

    @_friendly
    def run() -> None:
        from .cli import out
        from .tokens import TokenStore

        info = TokenStore().revoke(which)
        out.print(f"revoked token {info.id} ({info.name})")

    run()
