"""``askrepo ask``: a grounded answer with clickable ``path:start-end`` sources.

Registered by askrepo.cli as ``app.command("ask")(friendly(ask))``; AskrepoError propagates to
that wrapper, which prints one red line and exits with the error's code.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer


def ask(
    question: Annotated[
        str,
        typer.Argument(help="A question about the indexed code base; - reads it from stdin."),
    ],
    repo: Annotated[
        list[Path] | None,
        typer.Option(
            "--repo",
            help="Repository root (repeatable: search all, fused by rank; "
            "default: git top-level of the current dir).",
        ),
    ] = None,
    backend: Annotated[
        str,
        typer.Option(
            help="auto (Ollama if it serves the model, else an OpenAI-compatible server at "
            "ASKREPO_OPENAI_BASE_URL, else the evidence card alone) | ollama | openai | embedded "
            "(the card + one or two sentences by the tiny built-in model) | none (the card "
            "alone). Env: ASKREPO_BACKEND."
        ),
    ] = "auto",
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Ollama model (default qwen3:14b; env ASKREPO_LLM), or a .gguf path for the "
            "embedded backend.",
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("-k", "--k", help="Snippets to retrieve and show the model (ASKREPO_TOPK)."),
    ] = None,
    hyde: Annotated[
        bool,
        typer.Option(
            "--hyde",
            envvar="ASKREPO_HYDE",
            help="Also search with a hypothetical code snippet from the LLM (ASKREPO_HYDE=1).",
        ),
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help="Also list retrieved snippets the answer did not cite."
        ),
    ] = False,
    refresh: Annotated[
        bool,
        typer.Option(
            "--refresh",
            help="Re-index changed files first when there are few (ASKREPO_REFRESH_MAX_FILES, "
            "default 20). ASKREPO_AUTO_REFRESH=1 always does.",
        ),
    ] = False,
) -> None:
    """Answer QUESTION from the indexed code, citing exact path:start-end ranges.

    The answer starts from the evidence (the best definitions, their key lines and how they
    call each other); a model's prose, when a model is used, is laid on top and its claims are
    checked against the cited lines. Identifiers the question names that exist nowhere in the
    index are reported as absent without asking the model.
    """
    from .answer import ask as ask_question
    from .cli import default_repo, err, freshen, out, stale_note, text_arg
    from .freshness import check_store
    from .llm import choose_backend
    from .retriever import Retriever

    question = text_arg(question, "question")
    multi = repo is not None and len(repo) > 1
    root = default_repo(repo[0] if repo else None)
    fresh = None
    if multi:  # several repositories: askrepo.multirepo (see cli_multi)
        from .cli_multi import ask_retriever

        retriever = ask_retriever(repo)
    else:
        retriever = Retriever.open(root)
        fresh = freshen(retriever, check_store(retriever.store), refresh)
    llm = choose_backend(backend, model, fallback="none")
    note = getattr(llm, "note", None)

    if note and llm.name != "none":  # stderr, so --json output stays one object
        err.print(
            f"[yellow]note:[/] {note}; answering with the embedded model.",
            highlight=False,
            soft_wrap=True,
        )
    changed = fresh.changed if fresh is not None and fresh.stale else []
    if json_out:
        answer = ask_question(question, retriever, llm, k=k, hyde=hyde, changed=changed)
        if multi:
            from .cli_multi import with_repos

            print(json.dumps(with_repos(answer, retriever), ensure_ascii=False))
            return
        stale_note(fresh, root)
        data = {"repo": str(retriever.store.repo), **answer.to_dict(), **fresh.to_dict()}
        print(json.dumps(data, ensure_ascii=False))
        return
    if out.is_terminal and llm.name != "none":
        with _LiveAnswer(out, llm) as live:
            answer = ask_question(
                question, retriever, llm, k=k, hyde=hyde, stream=live.add, changed=changed
            )
    else:
        answer = ask_question(question, retriever, llm, k=k, hyde=hyde, changed=changed)
    if multi:
        from .cli_multi import absolute_paths

        _render(out, absolute_paths(answer, retriever), Path("/"), llm, verbose=verbose)
        return
    _render(out, answer, retriever.store.repo, llm, verbose=verbose)
    stale_note(fresh, root)


class _LiveAnswer:
    """Shows the answer as it streams (the last lines that fit), then gets out of the way."""

    def __init__(self, console: Any, llm: Any):
        self.console = console
        self.label = f"{llm.name} · {llm.model}"
        self.text = ""
        self.started = time.perf_counter()
        self.live: Any = None

    def __rich__(self) -> Any:
        from rich.spinner import Spinner
        from rich.text import Text

        if not self.text.strip():
            secs = time.perf_counter() - self.started
            return Spinner("dots", Text(f" searching and reading with {self.label} ({secs:.0f} s)"))
        height = max(3, self.console.size.height - 2)
        lines = self.text.splitlines()[-height:]
        return Text("\n".join(lines))

    def add(self, piece: str) -> None:
        self.text += piece

    def __enter__(self) -> _LiveAnswer:
        from rich.live import Live

        self.live = Live(self, console=self.console, transient=True, refresh_per_second=8)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(*exc)


def short_symbol(symbol: str | None, limit: int = 30) -> str:
    """A qualified symbol for a table cell: its leading qualifiers dropped (``…``) while it is
    longer than ``limit``, the last part always kept.

    >>> short_symbol("spdlog.details.v_formatter.format")
    '…details.v_formatter.format'
    """
    parts = (symbol or "").split(".")
    cut = 0
    while cut < len(parts) - 1 and len(".".join(parts[cut:])) + (1 if cut else 0) > limit:
        cut += 1
    return ("…" if cut else "") + ".".join(parts[cut:])


def _locations_table(
    console: Any, title: str, first: str, locations: list[str], symbols: list[str]
) -> Any:
    """A table of numbered locations and their symbols. The location is what a reader follows:
    as wide as the widest while that leaves the symbol column room, else it folds, never cut
    (``cli.fit_columns``)."""
    from rich.table import Table

    from askrepo.cli import fit_columns

    t = Table(box=None, header_style="bold", title=title, title_justify="left")
    t.add_column(first, justify="right", no_wrap=True)
    spare = console.width - max(len(first), 4) - 6  # the first column ("[10]"), 2 x 3 padding
    loc, sym, _ = fit_columns(locations, symbols, spare)
    t.add_column("location", overflow="fold", min_width=loc, max_width=loc)
    t.add_column("symbol", overflow="fold", min_width=sym, max_width=sym)
    return t


def _link(root: Path, path: str, label: str, kind: str | None = None) -> Any:
    """A clickable file location; a cited commit (``kind == "commit"``, path = its short sha)
    is plain text: there is no file to open."""
    from rich.style import Style
    from rich.text import Text

    if kind == "commit":
        return Text(label, style=Style(color="magenta"))
    uri = (Path(root) / path).resolve().as_uri()
    return Text(label, style=Style(link=uri, color="cyan"))


def _render(console: Any, answer: Any, root: Path, llm: Any, *, verbose: bool) -> None:
    from rich.markdown import Markdown
    from rich.rule import Rule
    from rich.text import Text

    from .claims import Claim, mark_unsupported
    from .llm import PROSE_HINT

    if answer.not_in_code:
        shown = answer.not_in_code[:6]
        names = ", ".join(f"`{n}`" for n in shown)
        if len(answer.not_in_code) > len(shown):
            names += f" and {len(answer.not_in_code) - len(shown)} more"
        console.print(
            Text(
                f"Not in the code base: {names} (named in the question as context; no definition "
                "and no occurrence in the index). The answer comes from the rest of the question.",
                style="yellow",
            )
        )
    if answer.evidence and answer.answer != answer.evidence:  # a model's prose, then the card
        claims = [Claim(c["text"], c["citations"], c["names"], c["unsupported"])
                  for c in answer.claims]  # fmt: skip
        console.print(Markdown(mark_unsupported(answer.answer, claims)))
        console.print()
        console.print(Rule("Evidence from the index", align="left", style="dim"))
        console.print(Markdown(answer.evidence))
    else:
        console.print(Markdown(answer.answer))
    console.print()
    if answer.citations:
        cites = sorted(answer.citations, key=lambda c: c.n)
        names = [short_symbol(c.symbol) for c in cites]
        t = _locations_table(console, "Sources", "#", [c.location for c in cites], names)
        for c, name in zip(cites, names, strict=True):
            kind = getattr(c, "kind", None)
            t.add_row(f"[{c.n}]", _link(root, c.path, c.location, kind), Text(name))
        console.print(t, highlight=False)
    if answer.invalid_citations:
        nums = ", ".join(f"[{n}]" for n in answer.invalid_citations)
        console.print(f"[dim]Removed citations of snippets that were never shown: {nums}[/]")

    cited = {(c.path, c.start_line) for c in answer.citations}
    uncited = [h for h in answer.retrieved if (h.path, h.start_line) not in cited]
    commits = [h for h in uncited if h.kind == "commit"]
    if commits and not (verbose or not answer.citations):
        # a why/when question: the commits the history index found, which the card (code
        # only) does not read; listed so they are not lost without a model
        from rich.markup import escape
        from rich.table import Table

        t = Table(
            box=None,
            header_style="bold",
            title="Commits found (the card reads code only; `git show SHA` reads one)",
            title_justify="left",
        )
        for col in ("rank", "commit", "date", "subject"):
            t.add_column(col, no_wrap=col != "subject", overflow="fold")
        for h in commits:
            sha = (getattr(h, "sha", "") or h.path)[:7]
            when = (getattr(h, "date", "") or "")[:10]
            t.add_row(str(h.rank), sha, when, escape(getattr(h, "subject", "") or ""))
        console.print(t, highlight=False)
    if uncited and (verbose or not answer.citations):
        names = [short_symbol(h.symbol) or f"({h.kind})" for h in uncited]
        locations = [h.location for h in uncited]
        t = _locations_table(console, "Retrieved, not cited", "rank", locations, names)
        for h, name in zip(uncited, names, strict=True):
            t.add_row(str(h.rank), _link(root, h.path, h.location, h.kind), Text(name))
        console.print(t, highlight=False)

    secs = answer.timings_ms.get("total", 0.0) / 1000
    if answer.refused:
        who = "Answered from the index alone (no model was asked)"
    elif answer.backend == "none":
        who = f"Answered from the index alone, no model · {secs:.1f} s — {PROSE_HINT}"
        console.print(Text(who, style="dim"))
        return
    else:
        who = f"Answered by {answer.backend} · {answer.model}"
        quality = getattr(llm, "quality_note", None)
        if quality:
            who += f" — {quality}"
    console.print(Text(f"{who} · {secs:.1f} s", style="dim"))
