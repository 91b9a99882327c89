"""``askrepo plan``: which files and functions a change touches, with evidence, and what may break.

Registered by askrepo.cli as ``app.command("plan")(friendly(plan))``. The plan itself is
deterministic (retrieval + call edges); prose from a model is added on top when Ollama or an
OpenAI-compatible server is available (never from the 135M embedded model).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer

PROSE_HINT = (
    "for a prose plan on top, start Ollama (`ollama serve`) or set ASKREPO_OPENAI_BASE_URL "
    "to an OpenAI-compatible server"
)


def plan(
    request: Annotated[
        str,
        typer.Argument(
            help='The change, e.g. "add a --color option to echo"; - reads it from stdin.'
        ),
    ],
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
    ] = None,
    backend: Annotated[
        str,
        typer.Option(
            help="Model for the prose on top: auto (Ollama, else an OpenAI-compatible server "
            "at ASKREPO_OPENAI_BASE_URL, else none) | ollama | openai | none. Env: ASKREPO_BACKEND."
        ),
    ] = "auto",
    model: Annotated[
        str | None, typer.Option("--model", help="Model name for the prose (env ASKREPO_LLM).")
    ] = None,
    files: Annotated[
        int, typer.Option("--files", min=1, max=20, help="Files to list (at most).")
    ] = 6,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Plan a change: ranked files and functions to touch, each with path:lines and why
    (defines X / calls X / tests X), the callers that may break, and the tests to update."""
    from .cli import default_repo, err, out, text_arg
    from .plan import plan_change
    from .retriever import Retriever

    request = text_arg(request, "change")
    root = default_repo(repo)
    retriever = Retriever.open(root)
    llm, note = pick_llm(backend, model)
    result = plan_change(request, retriever, llm=llm, max_files=files)  # bad input fails here
    if note and not json_out:
        err.print(f"[dim]note: {note}[/]", highlight=False, soft_wrap=True)
    if note:
        result.notes.append(note)
    if json_out:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    render(out, result, retriever.store.repo)


def pick_llm(backend: str, model: str | None) -> tuple[Any, str | None]:
    """The LLM for the prose, or None with a note saying why there is none."""
    from .errors import AskrepoError
    from .llm import choose_backend

    name = (backend or "auto").strip().lower()
    if name == "auto":
        name = (os.environ.get("ASKREPO_BACKEND") or "auto").strip().lower()
    if name == "none":
        return None, None
    if name == "embedded":
        return None, f"the 135M embedded model does not write plans; {PROSE_HINT}"
    if name == "auto":
        try:
            llm = choose_backend("auto", model)
        except AskrepoError as exc:
            return None, f"no model for prose ({exc}); {PROSE_HINT}"
        if llm.name == "embedded":
            return None, f"deterministic plan only; {PROSE_HINT}"
        return llm, None
    return choose_backend(name, model), None  # explicit: its errors are the user's to see


def _link(root: Path, path: str, label: str) -> Any:
    from rich.style import Style
    from rich.text import Text

    uri = (Path(root) / path).resolve().as_uri()
    return Text(label, style=Style(link=uri, color="cyan"))


def _item_rows(table: Any, root: Path, items: list[Any]) -> None:
    from rich.text import Text  # not markup: a path or name such as `[id].py` is shown as is

    for it in items:
        ref = f"[{it.n}]" if it.n else ""
        table.add_row(Text(ref), _link(root, it.path, it.location),
                      Text(it.symbol or f"({it.kind})"), Text("; ".join(it.why)))  # fmt: skip


def _table(title: str) -> Any:
    from rich.table import Table
    from rich.text import Text

    t = Table(box=None, header_style="bold", title=Text(title, style="table.title"),
              title_justify="left", pad_edge=False)  # fmt: skip
    t.add_column("", justify="right", style="dim")
    t.add_column("location", no_wrap=True)
    t.add_column("symbol")
    t.add_column("why", style="dim")
    return t


def render(console: Any, result: Any, root: Path) -> None:
    from rich.markdown import Markdown
    from rich.text import Text

    head = f"Plan: {result.request}"
    if result.commit:
        head += f"  (commit {result.commit[:12]})"
    console.print(Text(head, style="bold"))
    if result.prose:
        console.print()
        console.print(
            Text(
                f"Written by {result.backend} · {result.model} from the evidence below "
                "(check it against the evidence):",
                style="dim",
            )
        )
        console.print(Markdown(result.prose))
    console.print()
    if not result.files:
        for n in result.notes:
            console.print(Text(n, style="yellow"))
        return
    for f in result.files:
        t = _table(f"{f.rank}. {f.path}")
        _item_rows(t, root, f.items)
        console.print(t, highlight=False)
    if result.may_break:
        console.print()
        t = _table("May break (callers of the functions above)")
        _item_rows(t, root, result.may_break)
        console.print(t, highlight=False)
    if result.tests:
        console.print()
        t = _table("Tests to run or update")
        _item_rows(t, root, result.tests)
        console.print(t, highlight=False)
    secs = result.timings_ms.get("total", 0.0) / 1000
    console.print(Text(f"{secs:.1f} s", style="dim"))
