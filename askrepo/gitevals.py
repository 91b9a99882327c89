"""``askrepo eval --from-git``: a labelled set from a repository's own commits, and its scores.

Each kept commit becomes one question: the query is its subject plus the first paragraph of its
body; the gold answer is the source files (not tests, docs or config) it changed and the
definitions in them it touched, located at HEAD. This measures *change localization from a
description*: given what a developer said they changed, does search put the code they changed
first? Its bias: commit messages can quote the names they change (a function, a file), which
makes lexical search look better than it does on questions written without the code at hand;
every report also gives the scores of the questions that quote no such name.

Selection rules (documented in docs/history.md): non-merge commits reachable from HEAD, newest
first; dropped: no message, reverts (and the commits they revert), bot and version/dependency
bumps (``gitlog.skip_reason``), formatting-only (by message, or no change once whitespace is
ignored), pure renames, commits touching no source file or more than three, and labels whose
files are not in the index any more.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .datatypes import last_part
from .errors import UsageError, at_least

DEFAULT_N = 200
MAX_SOURCE_FILES = 3
QUERY_CHARS = 600
SEARCH_K = 20  # chunk hits per query; file metrics aggregate them, NDCG reads the top 10
DEFAULT_CONFIGS = ("dense", "fts", "hybrid", "hybrid+scope")
BASELINE = "hybrid+scope"
CATEGORY = "history"


_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,64})")


@dataclass(frozen=True)
class Target:
    path: str
    start_line: int | None = None
    end_line: int | None = None
    symbol: str | None = None


@dataclass
class GitCase:
    id: str  # short sha
    commit: str
    date: str
    query: str
    relevant: list[Target]
    names_quoted: bool  # the query names a gold file stem or touched symbol

    def to_eval(self) -> dict[str, Any]:
        """The eval-format record (``relevant``: a path, or a span at HEAD)."""
        rel: list[Any] = []
        for t in self.relevant:
            if t.start_line is None:
                rel.append(t.path)
            else:
                item: dict[str, Any] = {
                    "path": t.path,
                    "start_line": t.start_line,
                    "end_line": t.end_line,
                }
                if t.symbol:
                    item["symbol"] = t.symbol
                rel.append(item)
        return {
            "id": self.id,
            "query": self.query,
            "relevant": rel,
            "secondary": [],
            "category": CATEGORY,
            "commit": self.commit,
            "date": self.date,
            "names_quoted": self.names_quoted,
        }

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(t.path for t in self.relevant))


# ---------------------------------------------------------------------------------------------
# Pure rules


def query_of(subject: str, body: str) -> str:
    """Subject plus the first paragraph of the body (trailers such as Signed-off-by dropped)."""
    para = re.split(r"\n\s*\n", body.strip(), maxsplit=1)[0] if body.strip() else ""
    lines = [ln for ln in para.split("\n") if not re.match(r"^[\w-]+-by: |^Change-Id: ", ln)]
    para = " ".join(ln.strip() for ln in lines if ln.strip())
    text = subject.strip() if not para else f"{subject.strip()}\n{para}"
    return text[:QUERY_CHARS]


def quotes_names(query: str, paths: Sequence[str], symbols: Sequence[str]) -> bool:
    """Whether the query names a gold file's stem or a touched symbol (3+ characters), as a
    whole word, case-insensitively: the lexical shortcut a commit message can give."""
    names = set()
    for p in paths:
        stem = p.rsplit("/", 1)[-1].split(".", 1)[0]
        names.add(stem)
    for s in symbols:
        names.add(last_part(s))
    low = query.lower()
    for name in names:
        if len(name) >= 3 and re.search(
            r"(?<![A-Za-z0-9_])" + re.escape(name.lower()) + r"(?![A-Za-z0-9_])", low
        ):
            return True
    return False


def is_source(path: str) -> bool:
    """A file that counts as gold: code (not test, doc or config) in a known language."""
    from .datatypes import CODE
    from .ingest import classify, detect_language

    lang = detect_language(path)
    dirs = {d.lower() for d in path.split("/")[:-1]}
    if dirs & {"docs", "doc", "documentation"}:  # docs/conf.py, doc examples
        return False
    return lang is not None and classify(path, lang) == CODE


# ---------------------------------------------------------------------------------------------
# Building the set


@dataclass
class GitSet:
    repo: str
    head: str
    cases: list[GitCase]
    scanned: int
    dropped: dict[str, int]

    def records(self) -> list[dict[str, Any]]:
        return [c.to_eval() for c in self.cases]


def _whitespace_only(root: Path, sha: str, parent: str | None, paths: Sequence[str]) -> bool:
    if parent is None:
        return False
    from .gitlog import _env

    proc = subprocess.run(
        ["git", "diff", "--quiet", "-w", "--ignore-blank-lines", "-M", parent, sha, "--", *paths],
        cwd=root,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return proc.returncode == 0


def build_set(
    root: Path,
    indexed: set[str],
    *,
    n: int = DEFAULT_N,
    since: str | None = None,
    scan: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> GitSet:
    """Up to ``n`` cases from the newest commits (at most ``scan`` looked at, default 25 × n)."""
    from .gitlog import (
        BlobReader,
        head,
        is_revert,
        looks_like_formatting,
        read_commits,
        require_repo,
        rev_list,
        skip_reason,
        touched_definitions,
    )
    from .history import head_definitions
    from .secrets import redact

    at_least("--n", n, 1)
    top = require_repo(root)
    shas = rev_list(top, scan or max(25 * n, 2_000), since)
    if not shas:
        raise UsageError(f"No commits{' since ' + since if since else ''} in {top}")
    dropped: Counter[str] = Counter()
    cases: list[GitCase] = []
    forward: dict[str, str] = {}  # path at an older commit -> path at HEAD
    defs_cache: dict[str, dict[str, tuple[int, int]] | None] = {}
    reverted: set[str] = set()
    scanned = 0
    with BlobReader(top) as blobs:
        for c in read_commits(top, shas):
            scanned += 1
            if progress and scanned % 50 == 0:
                progress(f"{scanned} commits read, {len(cases)} kept")
            reason = _drop_reason(c, skip_reason, is_revert, looks_like_formatting)
            if reason == "revert":  # the reverted commit's change is not in HEAD either
                reverted.update(_REVERTS.findall(c.message))
            elif reason is None and any(c.sha.startswith(r) for r in reverted):
                reason = "reverted"
            src = [f for f in c.files if is_source(f.path)]
            if reason is None:
                if not src:
                    reason = "no-source-files"
                elif len(src) > MAX_SOURCE_FILES:
                    reason = "too-many-files"
            if reason is None:
                kept = [f for f in src if f.status != "D"]
                parent = c.parents[0] if c.parents else None
                if not kept:
                    reason = "files-gone"
                elif all(f.status == "R" and not f.hunks for f in src):
                    reason = "rename-only"
                elif _whitespace_only(top, c.sha, parent, [f.path for f in src]):
                    reason = "formatting"
            if reason is None:
                at_head = {f.path: forward.get(f.path, f.path) for f in kept}
                alive = [f for f in kept if at_head[f.path] in indexed]
                if not alive:
                    reason = "files-gone"
            if reason is None:
                touched = [(p, s) for p, s in touched_definitions(c, blobs)]
                targets: list[Target] = []
                symbols: list[str] = []
                for f in alive:
                    now = at_head[f.path]
                    if now not in defs_cache:
                        defs_cache[now] = head_definitions(top, now)
                    spans = defs_cache[now] or {}
                    mine = [s for p, s in touched if p == f.path and s in spans]
                    symbols += [s for p, s in touched if p == f.path]
                    if mine:
                        targets += [Target(now, *spans[s], symbol=s) for s in mine]
                    else:
                        targets.append(Target(now))
                query = redact(query_of(c.subject, c.body))[0]
                cases.append(
                    GitCase(
                        id=c.sha[:10],
                        commit=c.sha,
                        date=c.date,
                        query=query,
                        relevant=targets,
                        names_quoted=quotes_names(query, [t.path for t in targets], symbols),
                    )
                )
            else:
                dropped[reason] += 1
            for f in c.files:  # older commits name these files by their old paths
                if f.status == "R" and f.old_path:
                    forward[f.old_path] = forward.get(f.path, f.path)
            if len(cases) >= n:
                break
    return GitSet(str(top), head(top), cases, scanned, dict(dropped.most_common()))


def _drop_reason(c: Any, skip_reason: Any, is_revert: Any, looks_like_formatting: Any) -> str:
    if not c.message.strip():
        return "no-message"
    if is_revert(c):
        return "revert"
    why = skip_reason(c)
    if why:
        return why
    if looks_like_formatting(c):
        return "formatting"
    return None  # type: ignore[return-value]


def save_set(gitset: GitSet, path: Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(gitset.records(), ensure_ascii=False, indent=1) + "\n", "utf-8")


def load_set(path: Path) -> list[GitCase]:
    """Read a set written by :func:`save_set` (or any file in the same eval format)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise UsageError(
            f"No eval set at {path} — build one with `askrepo eval --from-git`"
        ) from None
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON ({exc}) — rebuild it with --from-git") from None
    if not isinstance(data, list):
        raise UsageError(f"{path} must hold a JSON list of {{query, relevant}} records")
    cases = []
    for i, rec in enumerate(data, 1):
        if not isinstance(rec, dict) or not isinstance(rec.get("query"), str):
            raise UsageError(f"{path}: record {i} needs a 'query' string")
        targets = []
        for r in rec.get("relevant") or []:
            if isinstance(r, str):
                targets.append(Target(r))
            elif isinstance(r, dict) and r.get("path"):
                targets.append(
                    Target(r["path"], r.get("start_line"), r.get("end_line"), r.get("symbol"))
                )
        if not targets:
            raise UsageError(f"{path}: record {i} has no relevant location")
        cases.append(
            GitCase(
                id=str(rec.get("id") or f"q{i}"),
                commit=str(rec.get("commit") or ""),
                date=str(rec.get("date") or ""),
                query=rec["query"],
                relevant=targets,
                names_quoted=bool(rec.get("names_quoted", False)),
            )
        )
    return cases


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class CaseResult:
    id: str
    file_rank: int | None
    ndcg10: float
    top_files: list[str]


@dataclass
class ConfigScore:
    name: str
    n: int
    file_hit_at_1: float
    file_hit_at_5: float
    file_mrr: float
    ndcg_at_10: float
    unquoted_n: int  # questions that quote no gold name
    unquoted_file_hit_at_5: float | None
    unquoted_ndcg_at_10: float | None
    latency_p50_ms: float
    results: list[CaseResult] = field(default_factory=list, repr=False)

    def to_dict(self, with_results: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_results:
            d.pop("results")
        return d


@dataclass
class GitEvalReport:
    repo: str
    head: str | None
    index_commit: str | None
    model_id: str
    chunk_count: int
    set_file: str | None
    cases: int
    scanned: int | None
    dropped: dict[str, int]
    configs: list[ConfigScore]
    baseline: str
    comparisons: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["configs"] = [c.to_dict(with_results=True) for c in self.configs]
        return d


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def score_config(retriever: Any, cases: Sequence[GitCase], name: str) -> ConfigScore:
    """File hit@1/@5 and MRR over files ranked by ``files.rank_files`` and the ``testvotes``
    stage (``Retriever.test_votes``), and chunk NDCG@10."""
    from .evaluate import parse_config, percentile
    from .files import rank_files
    from .metrics import file_hit_at, file_reciprocal_rank, ndcg_at_k
    from .retriever import file_pool

    spec = parse_config(name)
    if spec.rerank or spec.hyde or spec.expand or spec.variant is not None:
        raise UsageError(
            f"Configuration {name!r} is not supported by --from-git — use combinations of "
            "dense/fts/hybrid with +scope, +nosymbol, +nopieces and -STAGE"
        )
    # files ranked as search --files ranks them (its pool; NDCG reads the top 10 of it)
    opts = file_pool(spec.options(SEARCH_K), SEARCH_K)
    results: list[CaseResult] = []
    hit1: list[float] = []
    hit5: list[float] = []
    rr: list[float] = []
    nd: list[float] = []
    un_hit5: list[float] = []
    un_nd: list[float] = []
    lat: list[float] = []
    for case in cases:
        t0 = time.perf_counter()
        hits = retriever.search(case.query, opts).hits
        # the tests that match vote, as in search --files (``-testvotes`` switches it off)
        files = retriever.test_votes(case.query, opts, rank_files(hits))
        lat.append((time.perf_counter() - t0) * 1000)
        file_targets = [Target(p) for p in case.files]
        h1 = float(file_hit_at(files, file_targets, 1))
        h5 = float(file_hit_at(files, file_targets, 5))
        n10 = ndcg_at_k(hits[:10], case.relevant, k=10)
        hit1.append(h1)
        hit5.append(h5)
        rr.append(file_reciprocal_rank(files, file_targets))
        nd.append(n10)
        if not case.names_quoted:
            un_hit5.append(h5)
            un_nd.append(n10)
        from .metrics import file_rank

        results.append(
            CaseResult(
                id=case.id,
                file_rank=file_rank(files, file_targets),
                ndcg10=round(n10, 4),
                top_files=[f.path for f in files[:5]],
            )
        )
    return ConfigScore(
        name=name,
        n=len(cases),
        file_hit_at_1=round(_mean(hit1), 4),
        file_hit_at_5=round(_mean(hit5), 4),
        file_mrr=round(_mean(rr), 4),
        ndcg_at_10=round(_mean(nd), 4),
        unquoted_n=len(un_hit5),
        unquoted_file_hit_at_5=round(_mean(un_hit5), 4) if un_hit5 else None,
        unquoted_ndcg_at_10=round(_mean(un_nd), 4) if un_nd else None,
        latency_p50_ms=round(percentile(lat, 50) or 0.0, 1),
        results=results,
    )


def run_git_eval(
    root: Path,
    *,
    n: int = DEFAULT_N,
    since: str | None = None,
    configs: Sequence[str] = DEFAULT_CONFIGS,
    set_in: Path | None = None,
    set_out: Path | None = None,
    model: str | None = None,
    retriever: Any = None,
    progress: Callable[[str], None] | None = None,
) -> GitEvalReport:
    """Build (or load, with ``set_in``) the set, save it (``set_out``), score each config."""
    from .retriever import Retriever

    retriever = retriever or Retriever.open(root, model)
    store = retriever.store
    meta = store.meta()
    scanned: int | None = None
    dropped: dict[str, int] = {}
    head: str | None = None
    if set_in is not None:
        cases = load_set(set_in)
        from .gitlog import head as git_head

        try:
            head = git_head(Path(root))
        except UsageError:
            head = None
    else:
        gitset = build_set(Path(root), set(store.files()), n=n, since=since, progress=progress)
        cases, scanned, dropped, head = gitset.cases, gitset.scanned, gitset.dropped, gitset.head
        if not cases:
            why = ", ".join(f"{v} {k}" for k, v in dropped.items()) or "none"
            raise UsageError(
                f"No usable commits among the {scanned} read (dropped: {why}) — "
                "try a larger --n or an earlier --since"
            )
        if set_out is not None:
            save_set(gitset, set_out)
    scores = []
    for name in configs:
        if progress:
            progress(f"scoring {name} on {len(cases)} commits")
        scores.append(score_config(retriever, cases, name))
    names = [c.name for c in scores]
    baseline = BASELINE if BASELINE in names else names[0]
    return GitEvalReport(
        repo=str(store.repo),
        head=head,
        index_commit=meta.commit,
        model_id=meta.model_id,
        chunk_count=meta.chunk_count,
        set_file=str(set_in or set_out) if (set_in or set_out) else None,
        cases=len(cases),
        scanned=scanned,
        dropped=dropped,
        configs=scores,
        baseline=baseline,
        comparisons=compare_to(scores, baseline),
    )


def compare_to(scores: Sequence[ConfigScore], baseline: str) -> list[dict[str, Any]]:
    """Exact McNemar of each config against the baseline on file hit@1 and file hit@5, over the
    same questions: ``base_only`` / ``other_only`` count the questions only one of them hits."""
    from .evaluate import mcnemar_exact

    base = next((c for c in scores if c.name == baseline), None)
    if base is None:
        return []
    out = []
    for c in scores:
        if c.name == baseline:
            continue
        row: dict[str, Any] = {"config": c.name, "baseline": baseline}
        for k in (1, 5):
            a = [r.file_rank is not None and r.file_rank <= k for r in base.results]
            b = [r.file_rank is not None and r.file_rank <= k for r in c.results]
            a_only = sum(x and not y for x, y in zip(a, b, strict=True))
            b_only = sum(y and not x for x, y in zip(a, b, strict=True))
            row[f"file@{k}"] = {
                "base_only": a_only,
                "other_only": b_only,
                "p": round(mcnemar_exact(a_only, b_only), 4),
            }
        out.append(row)
    return out


def default_set_path(repo: Path) -> Path:
    """Where a built set is saved unless --out says otherwise: beside the index, outside the
    repository (so the set never changes the files it is scored on)."""
    from .store import repo_dir

    return repo_dir(Path(repo).resolve()) / "eval-from-git.json"
