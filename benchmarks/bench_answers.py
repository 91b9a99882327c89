"""Answer-quality benchmark for `askrepo ask` (run by hand, not a test).

    python benchmarks/bench_answers.py --repo DIR --queries FILE [FILE ...] --backend NAME
        [--k 8] [--limit N] [--tag TAG] [--out results.json]

The repository must be indexed (`askrepo index DIR`). Query files are `askrepo eval` files
(eval/*.json) or the shared JSONL format; questions with the same id are taken once.
``--backend`` is any name `askrepo.llm.choose_backend` accepts (none, embedded, ollama, openai,
auto). Every question goes through `askrepo.answer.ask` in one process (the embedding model
and LLM are loaded once, by a warm-up question that is not counted).

Per answer:
- cited-gold@1: the answer's first citation covers a gold location (same file, overlapping
  lines; or the gold symbol) — `askrepo.evaluate.is_hit`; cited-gold@any: any citation does;
  retrieval@1 (the baseline, same run): the first retrieved hit does;
- unsupported claims: claims naming something their cited code does not show
  (`askrepo.claims`), per answer;
- prose ratio: share of the answer's non-empty lines outside code fences;
- absent refused / answerable wrongly refused;
- latency: wall time of `ask` (retrieval + card + generation), p50 / p95.

Prints one markdown table row per backend and writes per-question results with --out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from askrepo.answer import ask  # noqa: E402
from askrepo.evaluate import is_hit, load_queries, percentile  # noqa: E402
from askrepo.llm import choose_backend  # noqa: E402
from askrepo.retriever import Retriever  # noqa: E402


def prose_ratio(text: str) -> float:
    """Share of non-empty lines outside ``` / ~~~ fences (fence lines count as code)."""
    inside = False
    prose = total = 0
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            inside = not inside
            total += 1
            continue
        if not s:
            continue
        total += 1
        prose += not inside
    return prose / total if total else 0.0


def load(files: list[str], tag: str | None, limit: int | None) -> list:
    seen: dict[str, object] = {}
    for f in files:
        for q in load_queries(Path(f)):
            wanted = tag is None or tag in q.tags or (tag == "absent" and q.absent)
            if wanted and q.id not in seen:
                seen[q.id] = q
    qs = list(seen.values())
    return qs[:limit] if limit else qs


def run(args: argparse.Namespace) -> dict:
    queries = load(args.queries, args.tag, args.limit)
    retriever = Retriever.open(Path(args.repo))
    llm = choose_backend(args.backend, args.model, fallback="none")
    ask("How is this code organised?", retriever, llm, k=args.k)  # warm-up: load the models
    rows = []
    for q in queries:
        t0 = time.perf_counter()
        ans = ask(q.question, retriever, llm, k=args.k)
        secs = time.perf_counter() - t0
        cites = ans.citations
        claims = ans.claims
        row = {
            "id": q.id,
            "absent": q.absent,
            "refused": ans.refused,
            "gold@1": bool(cites) and any(is_hit(cites[0], e) for e in q.expected),
            "retrieval@1": bool(ans.retrieved)
            and any(is_hit(ans.retrieved[0], e) for e in q.expected),
            "gold@any": any(is_hit(c, e) for c in cites for e in q.expected),
            "first": cites[0].location if cites else None,
            "claims": len(claims),
            "unsupported": sum(1 for c in claims if c["unsupported"]),
            "unsupported_names": [n for c in claims for n in c["unsupported"]],
            "prose": prose_ratio(ans.answer),
            "secs": round(secs, 2),
            "answer": ans.answer,
        }
        rows.append(row)
        mark = "ok " if row["gold@1"] else ("abs" if q.absent else "-- ")
        print(
            f"{mark} {q.id:40s} {secs:6.1f}s unsup={row['unsupported']} first={row['first']}",
            file=sys.stderr,
            flush=True,
        )
    answerable = [r for r in rows if not r["absent"]]
    absent = [r for r in rows if r["absent"]]
    lat = [r["secs"] for r in rows]
    n = max(1, len(answerable))
    summary = {
        "backend": llm.name,
        "model": llm.model,
        "repo": str(args.repo),
        "questions": len(rows),
        "answerable": len(answerable),
        "absent": len(absent),
        "retrieval_hit_at_1": sum(r["retrieval@1"] for r in answerable) / n,
        "cited_gold_at_1": sum(r["gold@1"] for r in answerable) / n,
        "cited_gold_at_any": sum(r["gold@any"] for r in answerable) / n,
        "unsupported_per_answer": statistics.mean(r["unsupported"] for r in rows) if rows else 0,
        "answers_with_unsupported": sum(1 for r in rows if r["unsupported"]),
        "prose_ratio": statistics.mean(r["prose"] for r in rows) if rows else 0,
        "absent_refused": sum(r["refused"] for r in absent),
        "wrongly_refused": sum(r["refused"] for r in answerable),
        "p50_s": percentile(lat, 50),
        "p95_s": percentile(lat, 95),
    }
    return {"summary": summary, "rows": rows}


def table_row(s: dict, label: str) -> str:
    return (
        f"| {label} | {s['backend']} | {s['answerable']} | {s['retrieval_hit_at_1']:.0%} | "
        f"{s['cited_gold_at_1']:.0%} | {s['cited_gold_at_any']:.0%} | "
        f"{s['unsupported_per_answer']:.2f} | {s['prose_ratio']:.0%} | "
        f"{s['absent_refused']}/{s['absent']} | {s['wrongly_refused']}/{s['answerable']} | "
        f"{s['p50_s']:.1f} s |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--queries", nargs="+", required=True)
    ap.add_argument("--backend", default="none")
    ap.add_argument("--model", default=None)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--tag", default=None, help="only questions with this tag (e.g. shared)")
    ap.add_argument("--label", default=None, help="first column of the table row")
    ap.add_argument("--out", default=None, help="write per-question results (JSON)")
    args = ap.parse_args()
    result = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
    print(json.dumps(result["summary"]))
    print(table_row(result["summary"], args.label or Path(args.repo).name))


if __name__ == "__main__":
    main()
