"""Search latency benchmark (run by hand, not a test).

    .venv/bin/python benchmarks/bench_search.py [--libs numpy,rich,...] [--queries 60]
        [--runs 7] [--write docs/benchmarks.md]

1. Copies several installed libraries (site-packages) into a temporary corpus directory and
   indexes it into a benchmark ASKREPO_HOME (kept between runs, so a re-run only re-checks).
   By default the *stored* chunk vectors are hashed pseudo-random unit vectors labelled with
   the real model's id (``--vectors hashed``): embedding 20k chunks with the real model takes
   ~30 min on 2 shared cores, and search latency does not depend on the vectors' values
   (LanceDB scans the vectors brute force; no ANN index is built). Queries are always embedded
   with the real model. ``--vectors real`` embeds the chunks with the real model instead.
2. Library-level latency: ``Retriever.search`` per mode (dense, fts, hybrid, hybrid + expand),
   after one warm-up query, over N queries (natural-language questions plus identifiers taken
   from the index); median and nearest-rank p95, process start and model load excluded.
3. CLI cold start: wall time of ``askrepo search QUERY --repo CORPUS`` as a fresh process,
   median of several runs, next to ``python -c pass`` measured in the same way.

With --write, the "## Search" section of the given markdown file is replaced (other sections,
e.g. "## Index", are left alone).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIBS = "onnx,pydantic,hypothesis,rich,lancedb,mcp,typer,click,jinja2,httpx,anyio"
QUESTIONS = [
    "how are command line options parsed",
    "where is the configuration file loaded",
    "how does the progress bar render",
    "where are colors converted to ANSI escape codes",
    "how is a JSON schema generated for a model",
    "where are validation errors formatted",
    "how does the table layout compute column widths",
    "how is an array reshaped",
    "where is the random number generator seeded",
    "how does shrinking of failing examples work",
    "where are HTTP requests retried",
    "how are tensors serialized to protobuf",
    "where is the markdown renderer",
    "how does the database connect to object storage",
    "how are vectors searched with a filter",
    "where is the logging handler configured",
    "how are environment variables read",
    "how is text wrapped to the terminal width",
    "where are unicode characters measured for display width",
    "how does the server handle a tool call request",
    "how are dates parsed from strings",
    "where is the cache invalidated",
    "how are type annotations inspected at runtime",
    "how is a temporary file created and cleaned up",
    "where does the library detect the operating system",
]


def nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    import math

    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def site_packages() -> Path:
    import rich

    return Path(rich.__file__).resolve().parent.parent


def build_corpus(dest: Path, libs: list[str]) -> Path:
    """Copy the libraries' .py/.pyi/.md/.rst files into ``dest`` (once) and git-init it."""
    marker = dest / ".corpus-libs"
    if marker.exists() and marker.read_text() == ",".join(libs):
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    sp = site_packages()
    for lib in libs:
        src = sp / lib
        if not src.is_dir():
            raise SystemExit(f"{lib} is not installed in {sp}")
        shutil.copytree(
            src,
            dest / lib,
            ignore=lambda d, names: [
                n
                for n in names
                if not (Path(d, n).is_dir() or n.endswith((".py", ".pyi", ".md", ".rst")))
                or n == "__pycache__"
            ],
        )
    marker.write_text(",".join(libs))
    return dest


class HashedEmbedder:
    """Deterministic pseudo-random unit vectors per text, under the real model's id and dim."""

    def __init__(self) -> None:
        from askrepo.embedder import model_spec

        spec = model_spec(None)
        self.model_id, self.dim = spec.model_id, spec.dim
        self.spec = spec  # the real model's piece_chars: as many piece vectors as a real index

    def embed_documents(self, texts, batch_size: int = 32, progress=None):
        import hashlib

        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha1(t.encode("utf-8", "replace")).digest()[:8], "big")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out

    def embed_query(self, text: str):
        return self.embed_documents([text])[0]


def identifier_queries(store, n: int) -> list[str]:
    """Deterministic sample of qualified symbols from the index (exact-identifier queries)."""
    rows = store.where("symbol IS NOT NULL AND kind != 'window'", limit=5000)
    names = sorted({c.symbol for _, c, _ in rows if c.symbol and "." in c.symbol})
    step = max(1, len(names) // max(n, 1))
    return names[::step][:n]


def library_latency(corpus: Path, n_queries: int) -> tuple[dict[str, dict[str, float]], int]:
    from askrepo.retriever import Retriever, SearchOptions

    retr = Retriever.open(corpus)
    chunks = retr.store.meta().chunk_count
    idents = identifier_queries(retr.store, max(0, n_queries - len(QUESTIONS)))
    queries = (QUESTIONS + idents)[:n_queries]
    modes = {
        "dense": SearchOptions(k=8, mode="dense"),
        "fts": SearchOptions(k=8, mode="fts"),
        "hybrid": SearchOptions(k=8, mode="hybrid"),
        "hybrid+expand": SearchOptions(k=8, mode="hybrid", expand=True),
    }
    out: dict[str, dict[str, float]] = {}
    for name, opts in modes.items():
        retr.search("warm up the model and the table", opts)
        times = []
        for q in queries:
            t0 = time.perf_counter()
            retr.search(q, opts)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = {
            "n": len(times),
            "median_ms": statistics.median(times),
            "p95_ms": nearest_rank(times, 95),
            "max_ms": max(times),
        }
        r = out[name]
        print(f"  {name:14s} median {r['median_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms")
    return out, chunks


def _askrepo_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("askrepo")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "askrepo.cli"]


def cold_start(corpus: Path, runs: int) -> dict[str, float]:
    def median_run(cmd: list[str]) -> float:
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)

    base = median_run([sys.executable, "-c", "pass"])
    lance = median_run([sys.executable, "-c", "import lancedb"])
    help_ms = median_run(_askrepo_cmd() + ["--help"])
    search = median_run(
        _askrepo_cmd() + ["search", "how are command line options parsed", "--repo", str(corpus)]
    )
    fts = median_run(
        _askrepo_cmd()
        + ["search", "how are command line options parsed", "--mode", "fts", "--repo", str(corpus)]
    )
    return {
        "python_pass_ms": base,
        "import_lancedb_ms": lance,
        "help_ms": help_ms,
        "search_ms": search,
        "search_fts_ms": fts,
    }


def render(lat, chunks, files, libs, cold, runs, idx_note) -> str:
    cpu = platform.processor() or platform.machine()
    lines = [
        "## Search",
        "",
        f"Measured by `benchmarks/bench_search.py` on {os.cpu_count()} cores ({cpu}), "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}. Corpus: the installed "
        f"libraries {', '.join(libs)} copied into one directory: {files:,} files, "
        f"**{chunks:,} chunks** ({idx_note}).",
        "",
        "Library-level `Retriever.search` latency, k=8, model loaded and one warm-up query "
        "done; process start excluded. Queries: "
        f"{len(QUESTIONS)} natural-language questions + qualified symbol names from the index "
        "(nearest-rank p95).",
        "",
        "| mode | queries | median ms | p95 ms | max ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, r in lat.items():
        lines.append(
            f"| {name} | {r['n']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['max_ms']:.1f} |"
        )
    lines += [
        "",
        f"CLI cold start (fresh process each time, median of {runs} runs, wall clock):",
        "",
        "| command | median ms |",
        "|---|---:|",
        f"| `python -c pass` (baseline) | {cold['python_pass_ms']:.0f} |",
        f"| `python -c 'import lancedb'` | {cold['import_lancedb_ms']:.0f} |",
        f"| `askrepo --help` | {cold['help_ms']:.0f} |",
        f"| `askrepo search QUESTION --repo CORPUS` (hybrid) | {cold['search_ms']:.0f} |",
        f"| `askrepo search QUESTION --mode fts --repo CORPUS` | {cold['search_fts_ms']:.0f} |",
        "",
        "The hybrid cold start includes loading the embedding model (ONNX Runtime directly, "
        "not fastembed's heavier import), opening the LanceDB table, checking the work tree "
        "for changes and the search itself. A plain `import lancedb` costs more than the "
        "whole askrepo search because about half of it is lancedb's REST-namespace client "
        "(`lance_namespace_urllib3_client`), which askrepo defers until something uses it "
        "(`askrepo/store.py::_lancedb`). Library latencies are from the second search on, "
        "when the index is held in memory (the first search of a process reads it through "
        "LanceDB). The machine's 2 cores may have been shared with other jobs; treat the "
        "numbers as upper bounds.",
        "",
    ]
    return "\n".join(lines)


def write_section(doc: Path, section: str) -> None:
    """Replace the section of ``doc`` whose heading starts ``section`` (up to the next
    '## ' heading), or append it. Shared by the benchmark scripts."""
    heading = section.split("\n", 1)[0]
    text = doc.read_text() if doc.exists() else "# Benchmarks\n\n"
    pattern = re.compile("^" + re.escape(heading) + r"\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section.rstrip("\n") + "\n\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    doc.write_text(re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libs", default=DEFAULT_LIBS)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("/tmp/askrepo-bench"))
    ap.add_argument("--write", type=Path, default=None, help="markdown file to update")
    ap.add_argument("--vectors", choices=("hashed", "real"), default="hashed")
    args = ap.parse_args()
    libs = [x.strip() for x in args.libs.split(",") if x.strip()]

    os.environ["ASKREPO_HOME"] = str(args.work / f"home-{args.vectors}")
    os.environ.setdefault("ASKREPO_MODELS", str(ROOT / ".cache" / "models"))
    corpus = build_corpus(args.work / "corpus", libs)
    from askrepo.indexer import index_repo

    print(f"indexing {corpus} …", flush=True)
    t0 = time.perf_counter()
    summary = index_repo(corpus, embedder=HashedEmbedder() if args.vectors == "hashed" else None)
    idx_s = time.perf_counter() - t0
    print(f"  {summary.chunks_total} chunks, {summary.files_total} files, {idx_s:.0f} s")
    print("library latency:")
    lat, chunks = library_latency(corpus, args.queries)
    print("cold start:")
    cold = cold_start(corpus, args.runs)
    for key, v in cold.items():
        print(f"  {key:15s} {v:7.0f} ms")
    if summary.chunks_embedded != summary.chunks_total:
        idx_note = "index built by an earlier run of the script"
    elif args.vectors == "hashed":
        idx_note = (
            f"indexed in {idx_s:.0f} s with hashed stored vectors, i.e. without the embedding "
            "cost (see Index for real indexing throughput); queries are embedded by the real "
            "model"
        )
    else:
        idx_note = f"a full index with the real model took {idx_s:.0f} s here"
    section = render(lat, chunks, summary.files_total, libs, cold, args.runs, idx_note)
    if args.write:
        write_section(args.write, section)
        print(f"wrote the Search section of {args.write}")
    else:
        print(section)


if __name__ == "__main__":
    main()
