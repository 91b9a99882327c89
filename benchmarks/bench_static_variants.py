"""Recipe variants of minilm-static (weighting, dimensions, truncation), run by hand.

    PYTHONPATH=. ASKREPO_MODELS=... .venv/bin/python benchmarks/bench_static_variants.py \
        [--corpora /work/.corpora]

Runs the MiniLM teacher pass once (cached in the temp dir of the run), then builds one table
per variant in memory and scores it like benchmarks/bench_static.py: click 8.4.1 on
eval/click.json (hit@5, MRR at k=5) and the dev projects axios and kramdown (NDCG@10, hit@5),
for dense and hybrid+scope. The first variant is the shipped recipe.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "benchmarks"))

# (dims, weighting, max tokens)
VARIANTS = [
    (256, "sif1e-4", 512),  # shipped
    (256, "none", 512),
    (256, "sif1e-3", 512),
    (256, "log-rank", 512),
    (384, "sif1e-4", 512),
    (256, "sif1e-4", 100_000),
]


def main() -> None:
    import bench_static
    from tokenizers import Tokenizer

    from askrepo import embedder as emb
    from askrepo import static_embed as se
    from askrepo.evaluate import hit_at, load_queries, parse_config, reciprocal_rank
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever

    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=os.environ.get("ASKREPO_CORPORA", "/work/.corpora"))
    corpora = Path(ap.parse_args().corpora)
    teacher = emb.converted_model_dir(emb.MODELS["minilm-fp32"])
    tok_file = str(teacher / se.TOKENIZER_FILE)
    vocab = Tokenizer.from_file(tok_file).get_vocab(with_added_tokens=True)
    ids = se.kept_tokens(vocab)
    vectors = se.token_outputs(teacher, ids)
    n = len(ids)
    weights = {
        "none": np.ones(n),
        "sif1e-4": se.sif_weights(n, 1e-4),
        "sif1e-3": se.sif_weights(n, 1e-3),
        "log-rank": np.log1p(np.arange(1, n + 1)),
    }

    class Variant(se.StaticEmbedder):
        def __init__(self, matrix: np.ndarray, model_id: str, max_tokens: int) -> None:
            self.spec = type("Spec", (), {"max_tokens": max_tokens})()
            self.model_id, self.dim, self.matrix = model_id, matrix.shape[1], matrix
            self._tok = Tokenizer.from_file(tok_file)
            self._tok.no_padding()
            self._tok.no_truncation()

    click = corpora / "static" / "click-8.4.1"
    cq = [q for q in load_queries(HERE / "eval" / "click.json") if not q.absent]
    for dims, weighting, max_tokens in VARIANTS:
        projected, _ = se.pca(vectors, dims)
        matrix = np.zeros((max(vocab.values()) + 1, dims), dtype=np.float32)
        matrix[ids] = projected * weights[weighting][:, None]
        e = Variant(matrix, f"variant-{dims}-{weighting}-{max_tokens}", max_tokens)
        row = {}
        with tempfile.TemporaryDirectory() as home:
            os.environ["ASKREPO_HOME"] = home
            index_repo(click, embedder=e, rebuild=True)
            retr = Retriever.open(click, model=e.model_id, embedder=e)
            for c in ("dense", "hybrid+scope"):
                opts = parse_config(c).options(5)
                hits = [list(retr.search(q.question, opts).hits) for q in cq]
                row[f"click {c} hit@5"] = np.mean(
                    [hit_at(h, q.expected, 5) for h, q in zip(hits, cq, strict=True)]
                )
                row[f"click {c} mrr"] = np.mean(
                    [reciprocal_rank(h, q.expected, 5) for h, q in zip(hits, cq, strict=True)]
                )
            for proj in ("axios", "kramdown"):
                root = corpora / "dev" / proj
                index_repo(root, embedder=e, rebuild=True)
                retr = Retriever.open(root, model=e.model_id, embedder=e)
                qfile = HERE / "eval" / "dev" / f"{proj}.json"
                for c, v in bench_static.eval_dev(
                    root, qfile, ["dense", "hybrid+scope"], retr
                ).items():
                    row[f"{proj} {c} ndcg@10"] = v["ndcg@10"]
                    row[f"{proj} {c} hit@5"] = v["hit@5"]
        print(
            dims, weighting, max_tokens, json.dumps({k: round(float(v), 3) for k, v in row.items()})
        )


if __name__ == "__main__":
    main()
