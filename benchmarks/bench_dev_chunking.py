"""Chunking A/B on the dev benchmark (run by hand, not a test).

    PYTHONPATH=CHECKOUT .venv/bin/python benchmarks/bench_dev_chunking.py \
        [--projects penlight,zig-crypto,capacitor-ios,spdlog] [--mode fts] [--corpora DIR]

Indexes each project of eval/dev (fetched by benchmarks/fetch_dev_corpora.sh) with the
askrepo found on PYTHONPATH (so two checkouts can be compared on the same queries) into a
temporary ASKREPO_HOME, with the deterministic fake embedder, and searches every query in
``--mode fts`` (the fake vectors carry no meaning, so only lexical and symbol evidence count:
this measures what the chunks themselves give, not the embedding model). The query files are
always this checkout's eval/dev.

Two scores per category, by the rank of the first of the top 10 results that hits a relevant
target (a whole file, or a line span):

- ``overlap``: the result shares at least one line with the target. A 150-line text window
  that contains the target counts, so coarse chunks are credited for precision they lack.
- ``precise``: at least half of the result's lines are inside the target: the result is
  mostly *about* the target, as a citation should be.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def _fake_embedder():
    spec = importlib.util.spec_from_file_location("_bench_fakes", HERE / "tests" / "fakes.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod.FakeEmbedder


def hits_target(h, t, precise: bool) -> bool:
    if isinstance(t, str):
        return h.path == t
    if h.path != t["path"]:
        return False
    overlap = min(h.end_line, t["end_line"]) - max(h.start_line, t["start_line"]) + 1
    if overlap <= 0:
        return False
    return not precise or overlap >= 0.5 * (h.end_line - h.start_line + 1)


def first_rank(hits, targets, precise: bool) -> int | None:
    return next((h.rank for h in hits if any(hits_target(h, t, precise) for t in targets)), None)


def scores(ranks: list[int | None]) -> tuple[float, float]:
    """(hit@5, MRR@10)"""
    n = len(ranks) or 1
    return (
        sum(1 for r in ranks if r and r <= 5) / n,
        sum(1 / r for r in ranks if r) / n,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--projects", default="penlight,zig-crypto,capacitor-ios,spdlog")
    ap.add_argument("--mode", default="fts")
    ap.add_argument("--corpora", default=os.environ.get("ASKREPO_CORPORA", "/work/.corpora"))
    args = ap.parse_args()
    os.environ["ASKREPO_HOME"] = tempfile.mkdtemp(prefix="askrepo-bench-")
    import askrepo
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever, SearchOptions

    fake = _fake_embedder()
    print(f"askrepo from {Path(askrepo.__file__).parent}, mode {args.mode}", file=sys.stderr)
    rows: dict[str, list[tuple[int | None, int | None]]] = {}
    for p in args.projects.split(","):
        root = Path(args.corpora) / "dev" / p
        if not root.is_dir():
            sys.exit(f"no corpus at {root}: run benchmarks/fetch_dev_corpora.sh first")
        index_repo(root, embedder=fake())
        r = Retriever.open(root, embedder=fake())
        queries = json.loads((HERE / "eval" / "dev" / f"{p}.json").read_text())
        for q in queries:
            hits = r.search(q["query"], SearchOptions(k=10, mode=args.mode)).hits
            ranks = (first_rank(hits, q["relevant"], False), first_rank(hits, q["relevant"], True))
            rows.setdefault(q["category"], []).append(ranks)
    print("| category | n | overlap hit@5 | overlap MRR@10 | precise hit@5 | precise MRR@10 |")
    print("|---|---:|---:|---:|---:|---:|")
    for cat, rs in sorted(rows.items()):
        o = scores([a for a, _ in rs])
        pr = scores([b for _, b in rs])
        print(f"| {cat} | {len(rs)} | {o[0]:.2f} | {o[1]:.2f} | {pr[0]:.2f} | {pr[1]:.2f} |")


if __name__ == "__main__":
    main()
