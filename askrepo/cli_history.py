"""CLI for git history: ``index --history``, ``search --history``, ``why``, ``eval --from-git``.

``why`` is registered by ``askrepo.cli``; the others are options of existing commands that
hand over to the functions here. Library errors become one line through ``cli.friendly``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape


def _consoles() -> tuple[Any, Any]:
    from askrepo.cli import err, out

    return out, err


# ---------------------------------------------------------------------------------------------
# index --history


def index_history_cmd(
    root: Path, *, model: str | None, depth: int | None, rebuild: bool, json_out: bool
) -> Any:
    """Index the history; print its summary (unless ``json_out``: the caller prints it inside
    the index run's JSON object). Returns the summary."""
    from askrepo.cli import _IndexProgress
    from askrepo.history import index_history

    out, err = _consoles()
    with _IndexProgress(enabled=not json_out and err.is_terminal) as prog:
        s = index_history(root, model=model, depth=depth, rebuild=rebuild, progress=prog)
    if json_out:
        return s
    from rich.table import Table

    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_row("history", f"{s.commits_indexed} commits indexed (HEAD {s.head[:10]})")
    t.add_row(
        "this run",
        f"{s.commits_added} added, {s.commits_removed} removed, "
        f"{s.commits_seen} non-merge commits within the last {s.depth}",
    )
    if s.skipped:
        t.add_row("skipped", ", ".join(f"{n} {why}" for why, n in s.skipped.items()))
    if s.redactions:
        t.add_row("secrets", f"{s.redactions} redacted from messages")
    t.add_row("time", " · ".join(f"{k} {v:.2f}s" for k, v in s.timings_s.items()))
    if s.rebuilt:
        t.add_row("rebuilt", s.rebuilt)
    out.print(t)
    return s


# ---------------------------------------------------------------------------------------------
# search --history


def search_history_cmd(
    query: str, root: Path, *, k: int, mode: str, model: str | None, json_out: bool
) -> None:
    from askrepo.cli import note, plural
    from askrepo.errors import shell_arg
    from askrepo.history import search_history

    out, _ = _consoles()
    res = search_history(root, query, k=k, model=model, mode=mode)
    if res.stale:
        n = res.new_commits
        what = f"{plural(n, 'commit')} since" if n else "HEAD moved since"
        note(
            f"{what} the history index was built — run `askrepo index --history {shell_arg(root)}` "
            f"to add {'them' if n else 'the new history'}"
        )
    if json_out:
        print(json.dumps(res.to_dict(), ensure_ascii=False))
        return
    if not res.hits:
        out.print(f"No commits match {escape(repr(query))} ({res.commits_indexed} indexed).")
        return
    for h in res.hits:
        out.print(
            f"[bold cyan]{h.rank}. {h.short}[/] [dim]{h.date[:10]} {escape(h.author)}[/]  "
            f"{escape(h.subject)}",
            highlight=False,
            soft_wrap=True,
        )
        live = [d for d in h.defs if d.location]
        for d in live[:6]:
            out.print(
                f"     [green]{escape(d.location)}[/] [dim]{escape(d.symbol or '')}[/]",
                highlight=False,
            )
        if len(live) > 6:
            out.print(f"     [dim]… {len(live) - 6} more definitions[/]")
        if not live and h.files:
            more = f" (+{len(h.files) - 4})" if len(h.files) > 4 else ""
            files = escape(", ".join(h.files[:4]))
            out.print(f"     [dim]files: {files}{more}[/]", highlight=False)


# ---------------------------------------------------------------------------------------------
# why


def why(
    location: Annotated[
        str, typer.Argument(help="PATH:LINE or PATH:START-END (relative to the repo or cwd).")
    ],
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Which commit introduced or last meaningfully changed these lines, and why.

    git blame with moves/copies followed and whitespace ignored (revisions in
    .git-blame-ignore-revs are skipped); prints the newest commit's message and the other
    definitions it touched (at HEAD).
    """
    from askrepo.blame import parse_location
    from askrepo.blame import why as why_lines
    from askrepo.cli import default_repo

    out, _ = _consoles()
    path, start, end = parse_location(location)
    root = default_repo(repo)
    rel = _repo_relative(root, path)
    res = why_lines(root, rel, start, end)
    if json_out:
        print(json.dumps(res.to_dict(), ensure_ascii=False))
        return
    span = f"{res.path}:{res.start_line}" + (
        f"-{res.end_line}" if res.end_line != res.start_line else ""
    )
    if res.commit is None:
        out.print(f"{escape(span)}: not committed yet (only in the working tree).")
        return
    c = res.commit
    out.print(
        f"[bold cyan]{c.sha[:10]}[/] [dim]{c.date[:10]} {escape(c.author)}[/]  "
        f"[bold]{escape(c.subject)}[/]",
        highlight=False,
        soft_wrap=True,
    )
    where = f" (then {c.path_then})" if c.path_then != res.path else ""
    out.print(f"[dim]last meaningful change to {escape(span + where)}[/]", highlight=False)
    body = res.message.split("\n", 1)[1].strip() if "\n" in res.message else ""
    if body:
        out.print()
        out.print(escape(body), highlight=False, soft_wrap=True)
    for d in res.touched_here[:4]:
        loc, sym = escape(d["location"] or ""), escape(d["symbol"] or "")
        out.print(f"in [green]{loc}[/] [dim]{sym}[/]", highlight=False)
    if res.touched_elsewhere:
        out.print("\n[bold]it also touched[/]")
        for d in res.touched_elsewhere[:12]:
            loc = escape(d["location"] or f"{d['path']} (gone)")
            out.print(f"  [green]{loc}[/] [dim]{escape(d['symbol'] or '')}[/]", highlight=False)
    elif res.files and len(res.files) > 1:
        out.print(f"\n[bold]files in that commit:[/] {escape(', '.join(res.files[:10]))}")
    others = [x for x in res.commits if x.sha != c.sha]
    if others:
        out.print("\n[dim]other commits in these lines:[/]")
        for x in others[:5]:
            out.print(
                f"  [dim]{x.sha[:10]} {x.date[:10]} ({len(x.lines)} lines) {escape(x.subject)}[/]",
                highlight=False,
            )
    if res.uncommitted_lines:
        out.print(f"[yellow]note:[/] {len(res.uncommitted_lines)} line(s) are not committed yet")


def _repo_relative(root: Path, path: str) -> str:
    """A path given on the command line, relative to the cwd or the repo, as repo-relative."""
    p = Path(path).expanduser()
    if p.is_absolute() or (Path.cwd() / p).exists():
        full = (Path.cwd() / p).resolve()
        try:
            return full.relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            from askrepo.errors import UsageError

            raise UsageError(f"{path} is outside the repository {root}") from None
    return path


# ---------------------------------------------------------------------------------------------
# eval --from-git


def eval_from_git_cmd(
    root: Path,
    *,
    n: int,
    since: str | None,
    configs: list[str] | None,
    set_in: Path | None,
    set_out: Path | None,
    json_out: bool,
) -> None:
    from askrepo.cli import SafeConsole as Console
    from askrepo.gitevals import DEFAULT_CONFIGS, default_set_path, run_git_eval

    err = Console(stderr=True)
    if set_in is None and set_out is None:
        set_out = default_set_path(root)
    with err.status("evaluating…") as status:
        report = run_git_eval(
            root,
            n=n,
            since=since,
            configs=configs or list(DEFAULT_CONFIGS),
            set_in=set_in,
            set_out=set_out,
            progress=lambda msg: status.update(msg),
        )
    if json_out:
        print(json.dumps(report.to_dict(), ensure_ascii=False))
        return
    print_git_report(report, Console())


def print_git_report(report: Any, console: Any) -> None:
    from rich import box
    from rich.table import Table

    head = (report.head or "?")[:10]
    console.print(
        f"[bold]{report.repo}[/] @ {head}: {report.cases} questions from commits"
        + (f" ({report.scanned} read)" if report.scanned else "")
        + f"; index {report.chunk_count} chunks, model {report.model_id}"
    )
    if report.dropped:
        console.print(
            "[dim]dropped: " + ", ".join(f"{n} {k}" for k, n in report.dropped.items()) + "[/]"
        )
    t = Table(
        title="Change localization from commit messages (files ranked by rank_files)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
    )
    t.add_column("config", no_wrap=True)
    for col in ("file@1", "file@5", "MRR", "NDCG@10", "unquoted n", "file@5", "NDCG@10", "p50ms"):
        t.add_column(col, justify="right", no_wrap=True)
    for c in report.configs:
        t.add_row(
            c.name + (" *" if c.name == report.baseline else ""),
            f"{c.file_hit_at_1:.2f}",
            f"{c.file_hit_at_5:.2f}",
            f"{c.file_mrr:.2f}",
            f"{c.ndcg_at_10:.2f}",
            str(c.unquoted_n),
            "–" if c.unquoted_file_hit_at_5 is None else f"{c.unquoted_file_hit_at_5:.2f}",
            "–" if c.unquoted_ndcg_at_10 is None else f"{c.unquoted_ndcg_at_10:.2f}",
            f"{c.latency_p50_ms:.0f}",
        )
    console.print(t)
    for row in report.comparisons:
        one, five = row["file@1"], row["file@5"]
        console.print(
            f"[dim]{row['config']} vs {row['baseline']}: file@1 {one['other_only']} won / "
            f"{one['base_only']} lost (p={one['p']:.3g}), file@5 {five['other_only']} won / "
            f"{five['base_only']} lost (p={five['p']:.3g}) — exact McNemar[/]"
        )
    console.print(
        "[dim]* baseline (what `askrepo search` does). unquoted: the questions whose message "
        "names no gold file stem or touched symbol.[/]"
    )
    if report.set_file:
        console.print(f"[dim]set: {report.set_file} (re-run with --from-git --queries FILE)[/]")
