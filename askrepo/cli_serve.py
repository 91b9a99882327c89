"""``askrepo serve``: the web page, JSON API and MCP endpoint (askrepo.serve) in one process.

Registered by askrepo.cli as ``app.command("serve")(friendly(serve))``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def serve(
    repo: Annotated[
        list[Path] | None,
        typer.Option(
            "--repo",
            help="Repository to serve (repeatable; default: git top-level of the current dir).",
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option(help="Address to listen on. Beyond loopback, tokens are required."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    require_token: Annotated[
        bool,
        typer.Option("--require-token", help="Ask for a token on loopback too."),
    ] = False,
    backend: Annotated[
        str,
        typer.Option(
            help="`ask` backend: auto | ollama | openai | embedded | none (ASKREPO_BACKEND; "
            "auto without a server answers from the evidence card)."
        ),
    ] = "auto",
    llm: Annotated[
        str | None, typer.Option("--llm", help="Ollama model or .gguf path for `ask`.")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Embedding model of the indexes (default: each index's).")
    ] = None,
    max_concurrent: Annotated[
        int, typer.Option(help="Requests in flight per token (or local user); more wait.")
    ] = 8,
    no_refresh: Annotated[
        bool, typer.Option("--no-refresh", help="Hide the web page's re-index button.")
    ] = False,
) -> None:
    """Serve a web page, a JSON API (/api/…) and MCP over streamable HTTP (/mcp).

    On 127.0.0.1 no token is needed and pages of other sites cannot call it; on any other
    address every request needs `Authorization: Bearer <token>` (see `askrepo token create`).
    """
    from .cli import default_repo, err
    from .errors import AskrepoError, UsageError
    from .serve import ServeSettings, make_server

    for module in ("uvicorn", "starlette", "jinja2", "pygments", "mcp"):
        try:
            __import__(module)
        except ImportError:
            raise UsageError(
                f'askrepo serve needs {module}: pip install "askrepo[serve]"'
            ) from None

    roots: list[Path] = []
    for r in repo or [None]:
        root = default_repo(r)
        if not root.is_dir():
            raise UsageError(f"{r} is not a directory — pass --repo PATH of an indexed repository")
        if root not in roots:
            roots.append(root)
    if not 0 < port < 65536:
        raise UsageError(f"--port {port} is not a TCP port — pass 1..65535")
    settings = ServeSettings(
        repos=roots,
        host=host,
        port=port,
        require_token=require_token,
        model=model,
        backend=backend,
        llm_model=llm,
        max_concurrent=max(1, max_concurrent),
        allow_refresh=not no_refresh,
    )
    server = make_server(settings)
    state = server.config.app.state
    for h in state.service.repos:  # say early when a repo has no index yet
        try:
            h.store()
        except AskrepoError as exc:
            err.print(f"[yellow]warning:[/] {exc}", highlight=False, soft_wrap=True)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    names = ", ".join(state.names.values())
    auth = "tokens required" if settings.tokens_required else "loopback only, no token needed"
    err.print(
        f"askrepo serving {names}\n  web  {url}/\n  api  {url}/api/  (docs/api.md)\n"
        f"  mcp  {url}/mcp   ({auth}) — Ctrl-C to stop",
        highlight=False,
    )
    try:
        server.run()
    except OSError as exc:  # e.g. the port is taken
        raise UsageError(
            f"Cannot listen on {host}:{port} ({exc.strerror or exc}) — pick another --port"
        ) from None
    if not server.started:
        raise UsageError(f"Cannot listen on {host}:{port} — is the port taken? Pick another --port")
