"""`askrepo eval`: retrieval metrics per search configuration (registered by askrepo.cli)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:  # pragma: no cover
    from askrepo.evaluate import EvalReport

DEFAULT_CONFIG_LIST = "dense,fts,hybrid,hybrid+scope,hybrid+scope+expand,hybrid+scope+rerank"


def eval_cmd(
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
    ] = None,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            "-q",
            help="Question file: askrepo JSON list or click-eval JSONL "
            "(default: REPO/eval/queries.json).",
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, help="Cut-off for @k metrics.")] = 5,
    configs: Annotated[
        str,
        typer.Option(
            "--configs",
            "-c",
            help="Comma-separated configurations, e.g. dense,fts,hybrid+scope,"
            "hybrid+scope@noenrich (see docs/eval.md).",
        ),
    ] = DEFAULT_CONFIG_LIST,
    baseline: Annotated[
        str | None,
        typer.Option(help="Configuration the others are compared to (default: hybrid+scope)."),
    ] = None,
    with_llm: Annotated[
        bool, typer.Option("--with-llm", help="Also evaluate hybrid+scope+hyde (needs an LLM).")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    from_git: Annotated[
        bool,
        typer.Option(
            "--from-git",
            help="Build the questions from the repo's own commits (message -> changed files; "
            "see docs/history.md); with --queries, re-score a saved set.",
        ),
    ] = False,
    n: Annotated[int, typer.Option("--n", help="With --from-git: at most N questions.")] = 200,
    since: Annotated[
        str | None, typer.Option(help="With --from-git: only commits since DATE (git syntax).")
    ] = None,
    out_file: Annotated[
        Path | None, typer.Option("--out", help="With --from-git: where to save the set.")
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            "-m",
            help="Benchmark manifest: a JSON list of {name, repo, queries, language}; runs every "
            "repository (each indexed) and pools the questions (see docs/eval.md).",
        ),
    ] = None,
) -> None:
    """Measure retrieval quality (hit@k, MRR, NDCG@10, file hit@k) of each search configuration."""
    from askrepo.cli import SafeConsole as Console
    from askrepo.cli import default_repo
    from askrepo.evaluate import load_queries, run_eval

    if manifest is not None:
        _suite(manifest, configs, k, baseline, json_out)
        return
    root = default_repo(repo)
    if from_git:  # askrepo.cli_history / askrepo.gitevals
        from askrepo.cli_history import eval_from_git_cmd

        names = [c.strip() for c in configs.split(",") if c.strip()]
        eval_from_git_cmd(
            root,
            n=n,
            since=since,
            configs=None if configs == DEFAULT_CONFIG_LIST else names,
            set_in=queries,
            set_out=out_file,
            json_out=json_out,
        )
        return
    qfile = (queries or root / "eval" / "queries.json").resolve()
    qs = load_queries(qfile)
    names = [c.strip() for c in configs.split(",") if c.strip()]
    err = Console(stderr=True)
    _warn_unreachable(root, qs, err)
    with err.status("evaluating…") as status:
        report = run_eval(
            root,
            qs,
            names,
            k,
            baseline=baseline,
            with_llm=with_llm,
            queries_file=str(qfile),
            progress=lambda msg: status.update(msg),
        )
    if json_out:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
        return
    print_report(report, Console())


def _warn_unreachable(root: Path, qs: list[Any], err: Any) -> None:
    """Say on stderr which gold paths are no indexed file (each such question is a sure miss)."""
    from askrepo.errors import AskrepoError
    from askrepo.evaluate import unreachable_targets
    from askrepo.store import open_index

    try:
        indexed = set(open_index(root).files())
    except AskrepoError:
        return  # no index yet: run_eval says how to make one
    lines = unreachable_targets(qs, indexed)
    for line in lines[:10]:
        err.print(f"[yellow]warning:[/] {line}", highlight=False, soft_wrap=True)
    if len(lines) > 10:
        err.print(f"[yellow]warning:[/] … and {len(lines) - 10} more", highlight=False)


def _suite(manifest: Path, configs: str, k: int, baseline: str | None, json_out: bool) -> None:
    from askrepo.cli import SafeConsole as Console
    from askrepo.evaluate import load_manifest, run_suite

    entries = load_manifest(manifest)
    names = [c.strip() for c in configs.split(",") if c.strip()]
    err = Console(stderr=True)
    with err.status("evaluating…") as status:
        report = run_suite(
            entries,
            names,
            k,
            baseline=baseline,
            manifest=str(manifest),
            progress=lambda msg: status.update(msg),
        )
    if json_out:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
        return
    print_suite(report, Console())


def _metrics_table(title: str, rows, k: int):  # noqa: ANN001, ANN202 - rich objects
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    t.add_column("config", no_wrap=True)
    for col in ("n", "nDCG@10", "hit@1", f"hit@{k}", "file@1", "file@5", "fileMRR", "p50ms"):
        t.add_column(col, justify="right", no_wrap=True)
    for name, c in rows:
        if c.status != "ok":
            t.add_row(name, "[yellow]skipped[/]")
            continue
        t.add_row(
            name,
            str(c.n),
            _fmt(c.ndcg_at_10, pct=False),
            _fmt(c.hit_at_1),
            _fmt(c.hit_at_k),
            _fmt(c.file_hit_at_1),
            _fmt(c.file_hit_at_5),
            _fmt(c.file_mrr, pct=False),
            _ms(c.latency_p50_ms),
        )
    return t


def _breakdown(title: str, configs, attr: str):  # noqa: ANN001, ANN202 - rich objects
    """nDCG@10 per config (rows) and per language / category (columns)."""
    from rich import box
    from rich.table import Table

    ok = [c for c in configs if c.status == "ok"]
    keys = sorted({key for c in ok for key in getattr(c, attr)})
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    t.add_column("config", no_wrap=True)
    for key in keys:
        n = max(getattr(c, attr)[key].get("n", 0) for c in ok)
        t.add_column(f"{key} ({n})", justify="right", no_wrap=True)
    for c in ok:
        cells = getattr(c, attr)
        t.add_row(c.name, *[_fmt(cells.get(key, {}).get("ndcg_at_10"), pct=False) for key in keys])
    return t


def print_suite(report, console) -> None:  # noqa: ANN001 - SuiteReport, rich Console
    """Pooled metrics, per-repository nDCG, per-language and per-category nDCG, McNemar."""
    k = report.k
    n = sum(r.n_answerable for r in report.repos)
    console.print(f"[bold]{report.manifest}[/]: {len(report.repos)} repositories, {n} questions")
    for m in report.missing:
        console.print(f"[yellow]not evaluated:[/] {m['name']}: {m['reason']}")
    console.print(_metrics_table("All questions (pooled)", [(c.name, c) for c in report.pooled], k))
    console.print(_breakdown("nDCG@10 per language", report.pooled, "by_language"))
    console.print(_breakdown("nDCG@10 per category", report.pooled, "by_tag"))
    rows = []
    for r in report.repos:
        for c in r.configs:
            rows.append((f"{Path(r.repo).name} {c.name}", c))
    console.print(_metrics_table("Per repository", rows, k))
    pairs = {(p.b, p.metric): p for p in report.comparisons if p.a == report.baseline}
    for c in report.pooled:
        p = pairs.get((c.name, "hit@k"))
        if p is not None:
            console.print(
                f"McNemar hit@{k} {report.baseline} vs {c.name}: base only {p.a_only}, "
                f"other only {p.b_only}, p = {p.p_value:.3g}"
            )


def _fmt(x: float | None, pct: bool = True) -> str:
    if x is None:
        return "–"
    return f"{x:.0%}" if pct else f"{x:.2f}"


def _sym_n(report: EvalReport) -> int:
    return max((c.symbol_n for c in report.configs), default=0)


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.0f}"


def print_report(report: EvalReport, console) -> None:  # noqa: ANN001 - rich Console
    """Render the metrics table, the McNemar table vs the baseline and the absent summary."""
    from rich import box
    from rich.table import Table

    k = report.k
    console.print(
        f"[bold]{report.repo}[/]  {report.n_answerable} answerable + {report.n_absent} absent "
        f"questions  ({report.queries_file})  index: {report.index.get('chunk_count', '?')} "
        f"chunks, model {report.index.get('model_id', '?')}"
    )
    t = Table(
        title=f"Retrieval, k={k} (ranking metrics over answerable questions)",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
    )
    t.add_column("config", no_wrap=True)
    cols = ("hit@1", f"hit@{k}", f"rec@{k}", "MRR", "nDCG@10", "file@5", f"sym@{k}", "t/d")
    for col in (*cols, "p50ms", "p95ms"):
        t.add_column(col, justify="right", no_wrap=True)
    for c in report.configs:
        if c.status != "ok":
            t.add_row(c.name, "[yellow]skipped[/]")
            continue
        t.add_row(
            c.name + (" *" if c.name == report.baseline else ""),
            _fmt(c.hit_at_1),
            _fmt(c.hit_at_k),
            _fmt(c.recall_at_k),
            _fmt(c.mrr, pct=False),
            _fmt(c.ndcg_at_10, pct=False),
            _fmt(c.file_hit_at_5),
            _fmt(c.symbol_hit_at_k),
            _fmt(c.wasted_share),
            _ms(c.latency_p50_ms),
            _ms(c.latency_p95_ms),
        )
    console.print(t)
    console.print(
        f"[dim]* baseline. rec = recall, sym = symbol-hit (n={_sym_n(report)}), t/d = "
        "share of result slots taken by tests/docs on questions not about them.[/]"
    )
    for c in report.configs:
        if c.status != "ok":
            console.print(f"[yellow]{c.name} skipped:[/] {c.reason}")
        elif c.mean_returned is not None and c.mean_returned > k:
            console.print(
                f"{c.name} returns {c.mean_returned:.1f} hits on average (expansion appends "
                f"after the top {k}); a hit anywhere in them: {_fmt(c.hit_in_returned)}"
            )

    m = Table(
        title=f"Paired vs {report.baseline}: exact McNemar",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
        caption="base: questions only the baseline hits; other: only this config hits",
    )
    m.add_column("config", no_wrap=True)
    for col in (f"base@{k}", f"other@{k}", f"p@{k}", "base@1", "other@1", "p@1"):
        m.add_column(col, justify="right", no_wrap=True)
    pairs = {(p.b, p.metric): p for p in report.comparisons if p.a == report.baseline}
    for c in report.configs:
        pk, p1 = pairs.get((c.name, "hit@k")), pairs.get((c.name, "hit@1"))
        if pk is None or p1 is None:
            continue
        m.add_row(
            c.name,
            str(pk.a_only),
            str(pk.b_only),
            f"{pk.p_value:.3g}",
            str(p1.a_only),
            str(p1.b_only),
            f"{p1.p_value:.3g}",
        )
    console.print(m)

    ids = report.identifiers
    console.print(
        f"`ask` refusal rule (a named identifier missing from the index): refuses "
        f"{ids.absent_refused}/{ids.absent_n} absent questions "
        f"({ids.absent_with_identifier} of them name an identifier) and "
        f"{ids.answerable_refused}/{ids.answerable_n} answerable ones (wrongly)."
    )
