"""Phase-2 cost of piece vectors (run by hand, not a test).

    .venv/bin/python benchmarks/bench_pieces.py --repo /work/.corpora/dev/rich [--repo ...] \\
        [--sample 600] [--rounds 3]

For each --repo (an existing index of the default model; ``askrepo index REPO`` first): a
deterministic sample of its chunks; the texts phase 2 embeds without pieces (one per chunk)
and with them (one per chunk plus ``indexer.piece_texts``); both embedded with the real
default model in length-bucketed batches as the indexer does, alternating A/B/A/B so machine
load hits both alike. Prints chunks, pieces per chunk, median seconds of each and the ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def main() -> None:
    from askrepo.embedder import load_embedder, model_spec
    from askrepo.indexer import EMBED_BATCH, ENCODE_BATCH, embed_batches, embed_text, piece_texts
    from askrepo.store import MAX_PIECES, open_index

    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", required=True)
    ap.add_argument("--sample", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    spec = model_spec(None)
    model = load_embedder(None)

    def embed(texts: list[str]) -> float:
        t = time.perf_counter()
        for idx in embed_batches(texts, EMBED_BATCH):
            model.embed_documents([texts[i] for i in idx], batch_size=ENCODE_BATCH)
        return time.perf_counter() - t

    for repo in args.repo:
        store = open_index(Path(repo))
        chunks = [c for _, c, _ in store.where("true", limit=store.meta().chunk_count)]
        random.Random(0).shuffle(chunks)
        chunks = chunks[: args.sample]
        enrich = store.meta().enrich
        own = [embed_text(c, enrich) for c in chunks]
        per = [piece_texts(c, enrich, spec.piece_chars, MAX_PIECES) for c in chunks]
        extra = [p for ps in per for p in ps]
        a, b = [], []
        for _ in range(args.rounds):
            a.append(embed(own))
            b.append(embed(own + extra))
        ma, mb = statistics.median(a), statistics.median(b)
        long = sum(bool(ps) for ps in per)
        print(
            f"{Path(repo).name:20s} chunks {len(chunks):5d}  with pieces {long:4d}  "
            f"pieces {len(extra):5d} ({len(extra) / len(chunks):.2f}/chunk)  "
            f"embed {ma:6.1f} s -> {mb:6.1f} s  ratio {mb / ma:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
