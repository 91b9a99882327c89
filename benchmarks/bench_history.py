"""The history index without its embedding time, A/B against an older commit in the same run
(by hand, not a test).

    .venv/bin/python benchmarks/bench_history.py --repo /tmp/clickgit [--ref caa892e] \\
        [--rounds 2] [--behind 20]

``--repo`` is a git work tree with a long history (a clone of a fetched repository; it is
cloned again into a temporary directory, never changed). Each run is a fresh worker process
with a fresh ASKREPO_HOME and a stub embedder (constant unit vectors, no model), so what is
timed is git, reading, redaction, LanceDB writes and the full-text index: ``index_history`` of
the clone reset ``--behind`` commits back (a first index), then again at its real HEAD (an
update adding those commits), then ``--searches`` full-text searches (``mode="fts"``) over a
fixed list of questions (median ms; each search also reads the hit rows from LanceDB). The
code at ``--ref`` (``git archive``) and the working tree alternate ``--rounds`` times.
Prints each run's seconds and its ``timings_s`` stages, then medians and ratios new/old.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import refcode  # noqa: E402

QUERIES = [
    "fix the shell completion for zsh",
    "deprecate the old parameter",
    "prompt for a password twice",
    "windows console encoding",
    "type hints for decorators",
    "release version bump changelog",
    "option default value shown in help",
    "environment variable prefix",
]

WORKER = r"""
import json, statistics, subprocess, sys, time
from pathlib import Path
import numpy as np
import askrepo
from askrepo.history import HistoryIndex, index_history

class Stub:
    model_id, dim = "bench-stub", 384
    def embed_documents(self, texts):
        return np.full((len(texts), 384), 384 ** -0.5, dtype=np.float32)
    def embed_query(self, text):
        return np.full(384, 384 ** -0.5, dtype=np.float32)

root, behind, searches = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
queries = json.loads(sys.argv[4])
head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                      check=True).stdout.strip()
subprocess.run(["git", "reset", "-q", "--hard", f"HEAD~{behind}"], cwd=root, check=True)
t = time.perf_counter(); s1 = index_history(root, embedder=Stub()); first = time.perf_counter() - t
subprocess.run(["git", "reset", "-q", "--hard", head], cwd=root, check=True)
t = time.perf_counter(); s2 = index_history(root, embedder=Stub()); update = time.perf_counter() - t
idx = HistoryIndex.open(root, embedder=Stub())
idx.search(queries[0], mode="fts")  # open the table and the full-text index once
ms = []
for i in range(searches):
    t = time.perf_counter(); idx.search(queries[i % len(queries)], k=8, mode="fts")
    ms.append((time.perf_counter() - t) * 1000)
print(json.dumps({"first": first, "update": update, "search_ms": statistics.median(ms),
                  "commits": s2.commits_indexed, "added": s2.commits_added,
                  "timings": s1.timings_s, "timings_update": s2.timings_s,
                  "code": askrepo.__file__}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--ref", default="caa892e", help="commit to compare against")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--behind", type=int, default=20, help="commits the update adds")
    ap.add_argument("--searches", type=int, default=40)
    args = ap.parse_args()
    import json

    with tempfile.TemporaryDirectory(prefix="askrepo-ref-") as old:
        refcode.extract(args.ref, old)
        results: dict[str, list[dict]] = {args.ref: [], "working tree": []}
        for _ in range(args.rounds):
            for name, path in ((args.ref, old), ("working tree", str(ROOT))):
                with tempfile.TemporaryDirectory(prefix="askrepo-hist-") as tmp:
                    clone = Path(tmp) / "repo"
                    subprocess.run(
                        ["git", "clone", "-q", str(args.repo.resolve()), str(clone)], check=True
                    )
                    env = dict(os.environ, ASKREPO_HOME=str(Path(tmp) / "home"))
                    env.setdefault("ORT_DISABLE_TELEMETRY", "1")
                    argv = [str(clone), str(args.behind), str(args.searches), json.dumps(QUERIES)]
                    r = refcode.run_worker(WORKER, argv, path, env)
                results[name].append(r)
                stages = " ".join(f"{k} {v:.1f}" for k, v in r["timings"].items() if v)
                print(
                    f"  {name:14s} first {r['first']:6.2f} s  update (+{r['added']}) "
                    f"{r['update']:5.2f} s  fts search {r['search_ms']:6.2f} ms  "
                    f"{r['commits']} commits  ({stages})",
                    flush=True,
                )
    for key, unit in (("first", "s"), ("update", "s"), ("search_ms", "ms")):
        med = {n: statistics.median(x[key] for x in rs) for n, rs in results.items()}
        print(
            f"{key:9s} median: {args.ref} {med[args.ref]:.2f} {unit}, working tree "
            f"{med['working tree']:.2f} {unit}, ratio {med['working tree'] / med[args.ref]:.2f}"
        )


if __name__ == "__main__":
    main()
