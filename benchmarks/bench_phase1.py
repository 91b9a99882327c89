"""Phase 1 of a first index (walk, chunk, store, full text; no vectors), A/B against an older
commit in the same run (by hand, not a test).

    .venv/bin/python benchmarks/bench_phase1.py --corpus /work/.final/Django-5.1.4 \\
        [--ref 81ef7b1] [--rounds 2]

Each run is a fresh worker process with a fresh ASKREPO_HOME: ``index_repo(CORPUS,
embed=False)`` (a first index, searchable at its end), then the same after appending a line
to one file (``--touch``, a path inside the corpus; default: the largest ``.py`` file). The
code at ``--ref`` (``git archive`` into a temporary directory) and the working tree alternate
``--rounds`` times, so both see the same machine load. Prints each run's seconds, its
``timings_s`` stages and peak RSS, then the median per side and the ratio new/old. The
corpus is restored after each run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import refcode  # noqa: E402

WORKER = r"""
import json, resource, sys, time
from pathlib import Path
import askrepo
from askrepo.indexer import index_repo
root, touch = Path(sys.argv[1]), Path(sys.argv[2])
t = time.perf_counter(); s = index_repo(root, embed=False); first = time.perf_counter() - t
text = touch.read_text()
try:
    touch.write_text(text + "\n# touched\n")
    t = time.perf_counter(); index_repo(root, embed=False); again = time.perf_counter() - t
finally:
    touch.write_text(text)
print(json.dumps({"first": first, "again": again, "chunks": s.chunks_total,
                  "timings": s.timings_s, "code": askrepo.__file__,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--ref", default="81ef7b1", help="commit to compare against")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--touch", type=Path, help="file edited for the re-index (in the corpus)")
    args = ap.parse_args()
    corpus = args.corpus.resolve()
    touch = args.touch or max(corpus.rglob("*.py"), key=lambda p: p.stat().st_size)

    with tempfile.TemporaryDirectory(prefix="askrepo-ref-") as old:
        refcode.extract(args.ref, old)
        results: dict[str, list[dict]] = {args.ref: [], "working tree": []}
        for _ in range(args.rounds):
            for name, path in ((args.ref, old), ("working tree", str(ROOT))):
                with tempfile.TemporaryDirectory(prefix="askrepo-p1-") as home:
                    env = dict(os.environ, ASKREPO_HOME=home)
                    env.setdefault("ORT_DISABLE_TELEMETRY", "1")
                    r = refcode.run_worker(WORKER, [str(corpus), str(touch)], path, env)
                results[name].append(r)
                stages = " ".join(f"{k} {v:.1f}" for k, v in r["timings"].items() if v)
                print(
                    f"  {name:14s} first {r['first']:6.1f} s  again {r['again']:5.1f} s  "
                    f"{r['chunks']} chunks  rss {r['rss_mb']:.0f} MB  ({stages})",
                    flush=True,
                )
    med = {n: statistics.median(x["first"] for x in rs) for n, rs in results.items()}
    again = {n: statistics.median(x["again"] for x in rs) for n, rs in results.items()}
    for n in results:
        print(f"{n:14s} median first index {med[n]:.1f} s, re-index after an edit {again[n]:.1f} s")
    print(
        f"ratio working tree / {args.ref}: first {med['working tree'] / med[args.ref]:.2f}, "
        f"re-index {again['working tree'] / again[args.ref]:.2f}"
    )


if __name__ == "__main__":
    main()
