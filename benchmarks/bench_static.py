"""minilm vs minilm-static: index speed and retrieval quality, same run (run by hand).

    PYTHONPATH=. ASKREPO_MODELS=... .venv/bin/python benchmarks/bench_static.py \
        [--corpora /work/.corpora] [--dev rich,axios,kramdown] [--skip-self] [--json OUT]

Corpora (each indexed from scratch once per model, into a temporary ASKREPO_HOME):

- click 8.4.1 (``$CORPORA/static/click-8.4.1``; get it with
  ``pip download --no-deps --no-binary :all: click==8.4.1`` and unpack it there), scored with
  ``askrepo eval`` (hit@1, hit@5, MRR, k=5) on eval/click.json;
- this checkout, scored with ``askrepo eval`` on its own eval/queries.json;
- the dev-benchmark projects named by ``--dev`` (``$CORPORA/dev/<name>``, fetched by
  benchmarks/fetch_dev_corpora.sh), scored on eval/dev/<name>.json: NDCG@10
  (askrepo.metrics.ndcg_at_k: relevant gain 1, secondary 0.5), hit@5 and MRR@10 of the first
  result covering a relevant target.

Speed per corpus and model: chunks/s of the embedding calls alone (the indexer's ``embed``
timing) and of the whole index run (wall clock, model load excluded and reported apart). The
model order alternates between corpora. Both models are loaded (and minilm-static distilled,
if needed) before anything is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent.parent
MODELS = ("minilm", "minilm-static")
CONFIGS = ("dense", "hybrid+scope")  # --configs adds e.g. fts+scope (no vectors at all)


def index(root: Path, model: str, home: Path) -> dict:
    from askrepo.indexer import index_repo

    os.environ["ASKREPO_HOME"] = str(home)
    os.environ["ASKREPO_MODEL"] = model
    t0 = time.perf_counter()
    s = index_repo(root, model=model, rebuild=True)
    wall = time.perf_counter() - t0
    load = s.timings_s.get("load_model", 0.0)
    embed = s.timings_s.get("embed", 0.0)
    n = s.chunks_total
    return {
        "chunks": n,
        "wall_s": round(wall - load, 2),
        "load_model_s": round(load, 2),
        "embed_s": round(embed, 2),
        "embed_chunks_per_s": round(n / embed, 1) if embed else None,
        "index_chunks_per_s": round(n / (wall - load), 1),
    }


def eval_askrepo(root: Path, queries: Path, configs: list[str]) -> dict:
    from askrepo.evaluate import load_queries, run_eval

    rep = run_eval(root, load_queries(queries), configs, 5, queries_file=str(queries))
    out = {}
    for c in rep.configs:
        out[c.name] = {
            "n": c.n,
            "hit@1": c.hit_at_1,
            "hit@5": c.hit_at_k,
            "mrr": c.mrr,
            "hits5": sorted(r.id for r in c.queries if not r.absent and r.hit_at_k),
        }
    return out


def _target(t) -> SimpleNamespace:
    if isinstance(t, str):
        return SimpleNamespace(path=t, start_line=None, end_line=None)
    return SimpleNamespace(path=t["path"], start_line=t["start_line"], end_line=t["end_line"])


def eval_dev(root: Path, queries: Path, configs: list[str], retr=None) -> dict:
    from askrepo import metrics
    from askrepo.evaluate import parse_config
    from askrepo.retriever import Retriever

    qs = json.loads(queries.read_text("utf-8"))
    retr = retr or Retriever.open(root)
    out = {}
    for name in configs:
        opts = parse_config(name).options(10)
        ndcg, hit5, rr = [], [], []
        for q in qs:
            hits = list(retr.search(q["query"], opts).hits)[:10]
            rel = [_target(t) for t in q["relevant"]]
            sec = [_target(t) for t in q.get("secondary", [])]
            ndcg.append(metrics.ndcg_at_k(hits, rel, 10, sec))
            first = next(
                (i for i, h in enumerate(hits, 1) if any(metrics.covers(h, t) for t in rel)), None
            )
            hit5.append(first is not None and first <= 5)
            rr.append(1.0 / first if first else 0.0)
        n = len(qs)
        out[name] = {
            "n": n,
            "ndcg@10": sum(ndcg) / n,
            "hit@5": sum(hit5) / n,
            "mrr@10": sum(rr) / n,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default=os.environ.get("ASKREPO_CORPORA", "/work/.corpora"))
    ap.add_argument("--dev", default="rich,axios,kramdown")
    ap.add_argument("--skip-self", action="store_true")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    corpora = Path(args.corpora)

    from askrepo.embedder import load_embedder

    t0 = time.perf_counter()
    models = [m for m in args.models.split(",") if m]
    configs = [c for c in args.configs.split(",") if c]
    for m in models:
        load_embedder(m, progress=lambda msg: print(msg, file=sys.stderr))
    print(f"models ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)

    jobs = [("click", corpora / "static" / "click-8.4.1", HERE / "eval" / "click.json", "askrepo")]
    if not args.skip_self:
        jobs.append(("askrepo", HERE, HERE / "eval" / "queries.json", "askrepo"))
    for name in filter(None, args.dev.split(",")):
        jobs.append((name, corpora / "dev" / name, HERE / "eval" / "dev" / f"{name}.json", "dev"))

    results: dict = {"load_avg_start": os.getloadavg(), "corpora": {}}
    with tempfile.TemporaryDirectory(prefix="bench-static-") as tmp:
        for j, (name, root, queries, kind) in enumerate(jobs):
            if not root.is_dir():
                print(f"skip {name}: {root} is missing", file=sys.stderr)
                continue
            per = results["corpora"][name] = {}
            order = models if j % 2 == 0 else models[::-1]
            for model in order:
                home = Path(tmp) / f"{name}-{model}"
                speed = index(root, model, home)
                score = (eval_askrepo if kind == "askrepo" else eval_dev)(root, queries, configs)
                per[model] = {"speed": speed, "quality": score}
                print(name, model, json.dumps(speed), file=sys.stderr)
                for c, v in score.items():
                    brief = {k: round(x, 3) if isinstance(x, float) else x for k, x in v.items()}
                    brief.pop("hits5", None)
                    print(f"  {c}: {brief}", file=sys.stderr)
    results["load_avg_end"] = os.getloadavg()
    text = json.dumps(results, indent=1)
    if args.json_out:
        Path(args.json_out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
