"""Search latency of the ranking stages, A/B against an older commit in the same run (by hand).

    .venv/bin/python benchmarks/bench_ranking.py [--ref bce6f16] [--queries 60] [--rounds 3]

Builds (once) the same corpus and hashed-vector index as ``bench_search.py`` (~20k chunks of
installed libraries, stored vectors pseudo-random, queries embedded by the real model), then
times hybrid ``Retriever.search`` (k=8) in fresh worker processes that alternate between the
code at ``--ref`` (extracted with ``git archive`` into a temporary directory) and the working
tree, ``--rounds`` times each, so both see the same machine load. Prints the median and p95 of
every round and the median over rounds; the ratio new/old is the figure to quote on a loaded
machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

WORKER = r"""
import json, statistics, sys, time
from pathlib import Path
from askrepo.retriever import Retriever, SearchOptions
corpus, queries = Path(sys.argv[1]), json.loads(sys.argv[2])
r = Retriever.open(corpus)
opts = SearchOptions(k=8, mode="hybrid")
r.search("warm up the model and the table", opts)
r.search("load the in-memory mirror", opts)
times = []
for q in queries:
    t0 = time.perf_counter()
    r.search(q, opts)
    times.append((time.perf_counter() - t0) * 1000)
times.sort()
p95 = times[max(1, -(-95 * len(times) // 100)) - 1]
import askrepo
print(json.dumps({"median": statistics.median(times), "p95": p95, "code": askrepo.__file__}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", default="bce6f16", help="commit to compare against")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/askrepo-bench"))
    args = ap.parse_args()

    import bench_search as bs
    import refcode

    os.environ["ASKREPO_HOME"] = str(args.work / "home-hashed")
    os.environ.setdefault("ASKREPO_MODELS", str(ROOT / ".cache" / "models"))
    corpus = bs.build_corpus(args.work / "corpus", [x for x in bs.DEFAULT_LIBS.split(",")])
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever

    summary = index_repo(corpus, embedder=bs.HashedEmbedder())
    store = Retriever.open(corpus).store
    idents = bs.identifier_queries(store, max(0, args.queries - len(bs.QUESTIONS)))
    queries = (bs.QUESTIONS + idents)[: args.queries]
    print(f"{summary.chunks_total} chunks; {len(queries)} queries; hybrid k=8", flush=True)

    with tempfile.TemporaryDirectory(prefix="askrepo-ref-") as old:
        refcode.extract(args.ref, old)
        results: dict[str, list[dict[str, float]]] = {args.ref: [], "working tree": []}
        env = dict(os.environ)
        # Older code that does not know the `lexical` field of meta.json (before session 20,
        # an unknown field read as a damaged index) gets a copy of the index without it, so
        # it searches with LanceDB's full text as it did.
        ref_home = Path(old) / "home"
        shutil.copytree(os.environ["ASKREPO_HOME"], ref_home)
        knows = "lexical:" in (Path(old) / "askrepo" / "store.py").read_text("utf-8")
        for meta_file in [] if knows else ref_home.glob("indexes/*/*/meta.json"):
            raw = json.loads(meta_file.read_text("utf-8"))
            raw.pop("lexical", None)
            meta_file.write_text(json.dumps(raw), "utf-8")
        homes = {args.ref: str(ref_home), "working tree": os.environ["ASKREPO_HOME"]}
        for _ in range(args.rounds):
            for name, path in ((args.ref, old), ("working tree", str(ROOT))):
                env["ASKREPO_HOME"] = homes[name]
                r = refcode.run_worker(WORKER, [str(corpus), json.dumps(queries)], path, env)
                results[name].append(r)
                print(f"  {name:14s} median {r['median']:6.1f} ms  p95 {r['p95']:6.1f} ms")
    med = {n: statistics.median(r["median"] for r in rs) for n, rs in results.items()}
    p95 = {n: statistics.median(r["p95"] for r in rs) for n, rs in results.items()}
    for n in results:
        print(f"{n:14s} median of rounds: p50 {med[n]:.1f} ms, p95 {p95[n]:.1f} ms")
    print(f"ratio working tree / {args.ref}: p50 {med['working tree'] / med[args.ref]:.2f}")


if __name__ == "__main__":
    main()
