"""Embedding speed and int8 quality on real code (run by hand, not a test).

    .venv/bin/python benchmarks/bench_embed.py [--n 500] [--repeats 3] [--batch-size 32]

Chunks: functions and methods (``ast``) of a few installed packages (click, rich, typer,
pathspec, ...). Speed: fp32 vs int8, length-sorted batches (``embed_documents``) vs input order
(fastembed directly), median of ``--repeats`` runs, the runs of all four interleaved so that load
from other processes hits them alike. Quality: cosine fp32 vs int8 per chunk, and agreement of
the top-5 neighbours for natural-language queries and for chunks used as queries.
Prints a Markdown report (paste into docs/models.md).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from askrepo.embedder import FastembedEmbedder, load_embedder  # noqa: E402

PACKAGES = ["click", "rich", "typer", "pathspec", "markdown_it", "httpx", "anyio", "jsonschema"]
QUERIES = [
    "parse command line options and arguments",
    "how do I read a config file",
    "print colored text to the terminal",
    "match file paths against gitignore patterns",
    "render a table with borders",
    "handle a timeout when sending an HTTP request",
    "validate a JSON document against a schema",
    "prompt the user for a password",
    "format a traceback of an exception",
    "run tasks concurrently and wait for all of them",
]


def collect_chunks(n: int) -> list[str]:
    """Up to ``n`` function/method sources (3-200 lines) from PACKAGES, deterministic order."""
    chunks: list[str] = []
    per_package = max(1, n // len(PACKAGES) + 1)
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        taken = 0
        for path in sorted(root.rglob("*.py")):
            source = path.read_text(encoding="utf-8", errors="replace")
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if not 3 <= (node.end_lineno or 0) - node.lineno + 1 <= 200:
                    continue
                text = ast.get_source_segment(source, node)
                if text:
                    chunks.append(f"# {path.relative_to(root.parent)}\n{text}")
                    taken += 1
                if taken >= per_package:
                    break
            if taken >= per_package:
                break
    return chunks[:n]


def unsorted_embed(model: FastembedEmbedder, texts: list[str], batch_size: int) -> np.ndarray:
    """Batches in input order (what fastembed does on its own)."""
    return np.asarray(list(model._model.embed(texts, batch_size=batch_size)), dtype=np.float32)


def top_k(queries: np.ndarray, docs: np.ndarray, k: int, exclude_self: bool = False) -> np.ndarray:
    scores = queries @ docs.T
    if exclude_self:
        np.fill_diagonal(scores, -np.inf)
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a, b, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    texts = collect_chunks(args.n)
    models = {"fp32": load_embedder("minilm-fp32"), "int8": load_embedder("minilm-int8")}
    tokenizer = models["fp32"]._model.model.tokenizer
    # real tokens after truncation at 256 (the tokenizer also pads to the longest in the batch)
    tokens = [sum(e.attention_mask) for e in tokenizer.encode_batch(texts)]

    # warm-up (first-run allocations), then interleaved timed runs
    for model in models.values():
        model.embed_documents(texts[:64], batch_size=args.batch_size)
    runs: dict[tuple[str, str], list[float]] = {
        (m, s): [] for m in models for s in ("sorted", "unsorted")
    }
    cpu_runs: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    for _ in range(args.repeats):
        for (name, how), times in runs.items():
            model = models[name]
            start, cpu_start = time.perf_counter(), time.process_time()
            if how == "sorted":
                model.embed_documents(texts, batch_size=args.batch_size)
            else:
                unsorted_embed(model, texts, args.batch_size)
            times.append(time.perf_counter() - start)
            cpu_runs[(name, how)].append(time.process_time() - cpu_start)
    median = {key: statistics.median(times) for key, times in runs.items()}
    cpu = {key: statistics.median(times) for key, times in cpu_runs.items()}

    vec = {
        name: model.embed_documents(texts, batch_size=args.batch_size)
        for name, model in models.items()
    }
    cos = np.sum(vec["fp32"] * vec["int8"], axis=1)
    q = {name: np.stack([model.embed_query(t) for t in QUERIES]) for name, model in models.items()}
    q_overlap = overlap(top_k(q["fp32"], vec["fp32"], 5), top_k(q["int8"], vec["int8"], 5))
    probe = np.arange(0, len(texts), max(1, len(texts) // 50))
    d_overlap = overlap(
        top_k(vec["fp32"][probe], vec["fp32"], 6)[:, 1:],
        top_k(vec["int8"][probe], vec["int8"], 6)[:, 1:],
    )
    # int8 quantises activations per batch: a text alone vs inside a batch differs slightly
    alone = np.stack([models["int8"].embed_query(texts[i]) for i in probe])
    batch_drift = np.sum(alone * vec["int8"][probe], axis=1)

    print(f"## Embedding benchmark ({len(texts)} code chunks, batch size {args.batch_size})\n")
    print(
        f"`{' '.join(['.venv/bin/python', *sys.argv])}` — {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end, median of "
        f"{args.repeats} interleaved runs.\n"
    )
    print(
        f"Tokens per chunk (truncated at 256): median {int(np.median(tokens))}, "
        f"mean {np.mean(tokens):.0f}, {np.mean(np.array(tokens) >= 256):.0%} truncated.\n"
    )
    print("| model | batching | median wall s | texts/s | median CPU s |")
    print("|---|---|---:|---:|---:|")
    for (name, how), secs in median.items():
        print(f"| {name} | {how} | {secs:.2f} | {len(texts) / secs:.0f} | {cpu[(name, how)]:.2f} |")
    print()
    for how in ("sorted", "unsorted"):
        print(
            f"- int8 speed-up over fp32 ({how}): wall "
            f"{median[('fp32', how)] / median[('int8', how)]:.2f}x, CPU "
            f"{cpu[('fp32', how)] / cpu[('int8', how)]:.2f}x"
        )
    for name in models:
        print(
            f"- length-sorting speed-up ({name}): "
            f"{median[(name, 'unsorted')] / median[(name, 'sorted')]:.2f}x"
        )
    print(f"- cosine fp32 vs int8 per chunk: mean {cos.mean():.4f}, min {cos.min():.4f}")
    print(
        f"- top-5 agreement fp32 vs int8, {len(QUERIES)} natural-language queries: {q_overlap:.0%}"
    )
    print(f"- top-5 agreement fp32 vs int8, {len(probe)} chunks as queries: {d_overlap:.0%}")
    print(
        f"- int8 same text alone vs in a batch: cosine mean {batch_drift.mean():.4f}, "
        f"min {batch_drift.min():.4f}"
    )


if __name__ == "__main__":
    main()
