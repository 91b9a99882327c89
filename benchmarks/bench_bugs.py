"""Bug-report localisation benchmark: a pasted issue text -> the files its fix changed (run by
hand, not a test).

    python benchmarks/bench_bugs.py --git-dir DIR --cases eval/bugs/PROJECT.json \
        --texts PROJECT.texts.json --worktree /tmp/wt/PROJECT [--at REV] [--ablate STAGE]
        [--kind bug|feature|all] [--out rows.json] [--limit N]

``--cases`` (committed, eval/bugs/): one row per GitHub issue whose fix is named in the
project's changelog — ``issue``, ``url``, ``commit`` (the commit that added the changelog
entry), ``parent`` (the code the report was written against) and ``gold`` (the source files
that commit changed which exist at ``parent``). ``--texts`` (not committed: third-party text)
holds each issue's title and opening post, ``{"found": [{"issue", "title", "description",
"kind"}]}``; eval/bugs/README.md says how to download them.

For each case, oldest first, the worktree is checked out at ``parent`` and indexed
(incrementally, so each step re-embeds only what changed; ``--at HEAD`` indexes one commit
for all cases instead: a quick loop for comparing code changes on one index), then the query
— title, a blank line, description, as a user would paste it — goes to
``Retriever.search_files`` (the ``search --files`` path) and, as the baseline in the same
run, to whole-file BM25 over the same files (the code files in the index: what the default
scope searches). A case counts at the rank of the first gold file. Prints one line per case
and Acc@1, Acc@5, MRR (over 10) for both; ``--ablate STAGE`` (repeatable) also ranks each
case with that ranking stage off (paired, same index). ``ASKREPO_HOME`` chooses where the
index lives.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from askrepo.identifiers import split_identifier  # noqa: E402
from askrepo.indexer import index_repo  # noqa: E402
from askrepo.retriever import Retriever, SearchOptions  # noqa: E402

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def tokens(text: str) -> list[str]:
    """Identifier parts, lowercased (``getFileName`` -> get, file, name), 2+ characters."""
    out = []
    for w in _WORD.findall(text):
        out.extend(p for p in (split_identifier(w) or [w.lower()]) if len(p) >= 2)
    return out


def bm25_files(query: str, docs: dict[str, list[str]], k1: float = 1.2, b: float = 0.75):
    """Paths by whole-file BM25 of ``query`` (Okapi; idf ``ln(1 + (N - df + .5)/(df + .5))``)."""
    n = len(docs)
    avg = sum(len(d) for d in docs.values()) / max(1, n)
    df: Counter[str] = Counter()
    tf = {p: Counter(d) for p, d in docs.items()}
    for c in tf.values():
        df.update(c.keys())
    q = set(tokens(query))
    scores = {}
    for p, c in tf.items():
        length = len(docs[p])
        s = 0.0
        for t in q:
            f = c.get(t, 0)
            if f:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / avg))
        scores[p] = s
    return sorted(scores, key=lambda p: (-scores[p], p))


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def first_rank(paths: list[str], gold: set[str], k: int = 10) -> int | None:
    return next((i for i, p in enumerate(paths[:k], 1) if p in gold), None)


def summary(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {
        "acc@1": sum(r == 1 for r in ranks) / n,
        "acc@5": sum(r is not None and r <= 5 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True, type=Path)
    ap.add_argument("--cases", required=True, type=Path)
    ap.add_argument("--texts", required=True, type=Path)
    ap.add_argument("--worktree", required=True, type=Path)
    ap.add_argument("--kind", choices=["bug", "feature", "all"], default="all")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument(
        "--at",
        metavar="REV",
        help="index the repository once at REV (e.g. HEAD) instead of at each case's parent; "
        "only the gold files that exist there count, cases with none are left out",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument(
        "--ablate",
        action="append",
        default=[],
        help="also rank with this ranking stage off (askrepo eval's -STAGE), per case",
    )
    args = ap.parse_args()

    texts = {t["issue"]: t for t in json.loads(args.texts.read_text("utf-8"))["found"]}
    cases = [c for c in json.loads(args.cases.read_text("utf-8")) if c["issue"] in texts]
    if args.kind != "all":
        cases = [c for c in cases if texts[c["issue"]].get("kind") == args.kind]
    cases.sort(key=lambda c: c["time"])
    if args.limit:
        cases = cases[: args.limit]
    wt = args.worktree
    fresh = not (wt / ".git").exists()  # cloned without a checkout: check out even at HEAD
    if fresh:
        wt.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", "--shared", "--no-checkout", str(args.git_dir), str(wt))
    rows = []
    r = None
    tokenized: dict[str, list[str]] = {}  # file content hash -> BM25 tokens
    for c in cases:
        rev = args.at or c["parent"]
        head = git("rev-parse", "HEAD", cwd=wt).strip()
        if fresh or head != git("rev-parse", rev, cwd=wt).strip():
            fresh = False
            git("checkout", "-q", "-f", rev, cwd=wt)
            git("clean", "-q", "-f", "-d", "-x", cwd=wt)
            r = None
        if r is None:  # the index changed (or this is the first case): update it, reopen
            index_repo(wt)
            r = Retriever.open(wt)
        t = texts[c["issue"]]
        query = f"{t['title']}\n\n{t['description']}".strip()
        ours = [f.path for f in r.search_files(query, SearchOptions(k=10)).files]
        ablated = {
            stage: [
                f.path for f in r.search_files(query, SearchOptions(k=10, disabled=(stage,))).files
            ]
            for stage in args.ablate
        }
        code = {p: f for p, f in r.store.files().items() if f.file_class == "code"}
        for p, f in code.items():
            if f.sha not in tokenized:
                tokenized[f.sha] = tokens((wt / p).read_text("utf-8", errors="replace"))
        docs = {p: tokenized[f.sha] for p, f in code.items()}
        base = bm25_files(query, docs)
        gold = set(c["gold"]) & set(code)
        if not gold:  # said, so a case that drops out is not missed silently
            print(f"#{c['issue']}  skipped: none of {c['gold']} is an indexed code file here")
            continue
        row = {
            "issue": c["issue"],
            "kind": t.get("kind"),
            "gold": sorted(gold),
            "ours": first_rank(ours, gold),
            "bm25": first_rank(base, gold),
            "top": ours[:10],
            "bm25_top": base[:10],
            **{f"-{stage}": first_rank(paths, gold) for stage, paths in ablated.items()},
            "code_files": len(code),
        }
        rows.append(row)
        print(
            f"#{c['issue']:<5} ours {row['ours']!s:>4}  bm25 {row['bm25']!s:>4}  "
            f"gold {','.join(row['gold'])}  top {ours[:1]}",
            flush=True,
        )
    out = {
        "cases": len(rows),
        "ours": summary([r["ours"] for r in rows]),
        "bm25": summary([r["bm25"] for r in rows]),
        **{f"-{stage}": summary([r[f"-{stage}"] for r in rows]) for stage in args.ablate},
    }
    print(json.dumps(out))
    if args.out:
        args.out.write_text(json.dumps({"summary": out, "rows": rows}, indent=1), "utf-8")


if __name__ == "__main__":
    main()
