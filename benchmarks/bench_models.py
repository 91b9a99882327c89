"""Embedding speed of the selectable models on the same code chunks (run by hand, not a test).

    .venv/bin/python benchmarks/bench_models.py [--models minilm,bge-small] [--n 500]
        [--repeats 3]

Chunks: ``bench_embed.collect_chunks`` (functions and methods of installed packages). Each
model embeds all of them with ``embed_documents`` (what an index run calls), the models
interleaved per repeat so that load from other processes hits them alike; prints each model's
median seconds, chunks per second and the ratio to the first model. Model loading is not
timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

from bench_embed import collect_chunks  # noqa: E402

from askrepo.embedder import load_embedder  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="minilm,bge-small")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    texts = collect_chunks(args.n)
    models = {name: load_embedder(name) for name in names}
    for m in models.values():
        m.embed_documents(texts[:8])  # warm up
    secs: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.repeats):
        for name, model in models.items():
            t = time.perf_counter()
            model.embed_documents(texts)
            secs[name].append(time.perf_counter() - t)
    base = statistics.median(secs[names[0]])
    print(f"{len(texts)} chunks, median of {args.repeats}, load average {os.getloadavg()[0]:.1f}")
    for name in names:
        med = statistics.median(secs[name])
        print(
            f"{name:12s} {med:7.2f} s  {len(texts) / med:6.1f} chunks/s  "
            f"ratio {med / base:.2f}  ({models[name].model_id})"
        )


if __name__ == "__main__":
    main()
