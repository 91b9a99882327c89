"""``askrepo search|ask --repo A --repo B``: several repositories, one fused ranking.

Called by ``cli.search`` and ``cli_ask.ask`` when ``--repo`` is given more than once; the fusion
itself is ``askrepo.multirepo`` (library).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any


def _roots(repos: list[Path]) -> list[Path]:
    from .cli import default_repo

    out: list[Path] = []
    for r in repos:
        root = default_repo(r)
        if root not in out:
            out.append(root)
    return out


def search_repos(
    repos: list[Path], query: str, opts: Any, *, model: str | None, json_out: bool, explain: bool
) -> None:
    from rich.markup import escape
    from rich.table import Table

    from .cli import err, out, print_snippet
    from .errors import shell_arg
    from .multirepo import check_freshness, freshness_fields, search_many
    from .retriever import Retriever

    retrievers = [(str(root), Retriever.open(root, model=model)) for root in _roots(repos)]
    result = search_many([(name, r.search) for name, r in retrievers], query, opts)
    fresh = check_freshness((name, r.store) for name, r in retrievers)
    for f in fresh:
        if f.stale:
            err.print(
                f"[yellow]note:[/] {escape(f.repo)} changed since it was indexed — "
                f"run `askrepo index {shell_arg(f.repo)}` to refresh",
                highlight=False,
                soft_wrap=True,
            )
    if json_out:
        data = result.to_dict()
        data.update(freshness_fields(fresh))
        print(json.dumps(data, ensure_ascii=False))
        return
    if not result.hits:
        out.print(f"No results for {escape(repr(query))}.")
        return
    t = Table(box=None, header_style="bold")
    for col, just in (("#", "right"), ("repo", "left"), ("location", "left"), ("symbol", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    t.add_column("score", justify="right")
    if explain:
        t.add_column("repo rank", justify="right")
    for rh in result.hits:
        h = rh.hit
        names = (Path(rh.repo).name, h.location, h.symbol or f"({h.kind})")
        row = [str(h.rank), *(escape(x) for x in names)]
        row.append(f"{h.score:.4f}")
        if explain:
            row.append(str(rh.repo_rank))
        t.add_row(*row)
    out.print(t)
    if explain:
        out.print(
            f"[dim]{len(retrievers)} repos fused by rank (1/(60+rank in repo)) · filters: "
            f"{', '.join(result.filters) or 'none'} · {result.elapsed_ms:.0f} ms[/]"
        )
    for rh in result.hits:
        print_snippet(rh.hit, escape(f"{Path(rh.repo).name}: {rh.hit.location}"))


def ask_retriever(repos: list[Path]) -> Any:
    """A ``MultiRetriever`` over the repositories (for ``answer.ask``)."""
    from .multirepo import MultiRetriever
    from .retriever import Retriever

    return MultiRetriever([(str(root), Retriever.open(root)) for root in _roots(repos)])


def with_repos(answer: Any, retriever: Any) -> dict[str, Any]:
    """``Answer.to_dict()`` with the repo of each citation and retrieved hit."""
    data = answer.to_dict()
    for item in data["citations"] + data["retrieved"]:
        item["repo"] = retriever.repo_of(item["path"], item["start_line"], item["end_line"])
    return data


def absolute_paths(answer: Any, retriever: Any) -> Any:
    """A copy of the answer whose citation and hit paths are absolute (several repos)."""

    def where(x: Any) -> str:
        repo = retriever.repo_of(x.path, x.start_line, x.end_line)
        return str(Path(repo) / x.path) if repo else x.path

    return dataclasses.replace(
        answer,
        citations=[dataclasses.replace(c, path=where(c)) for c in answer.citations],
        retrieved=[dataclasses.replace(h, path=where(h)) for h in answer.retrieved],
    )
