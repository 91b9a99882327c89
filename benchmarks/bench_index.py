"""Index benchmark (run by hand, not a test): Click 8.4.1 from scratch, then after a one-file edit.

    .venv/bin/python benchmarks/bench_index.py [--runs 3] [--write docs/benchmarks.md]

Each run is a fresh process with its own ASKREPO_HOME (the model cache is shared and warm), so
peak RSS is per run. Reports medians over the runs: per-stage seconds (walk, chunk, embed,
store, fts), chunks per second, re-index time after touching one file, peak RSS. The targets
(issue #2): everything except embedding <= 20% of the embedding time; one-file re-index <= 2 s;
peak RSS <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from askrepo.indexer import index_repo
root = Path(sys.argv[1])
t = time.perf_counter(); s1 = index_repo(root); full = time.perf_counter() - t
p = root / "src" / "click" / "termui.py"
p.write_text(p.read_text() + "\n# touched\n")
t = time.perf_counter(); s2 = index_repo(root); again = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"full": full, "again": again, "s1": s1.to_dict(), "s2": s2.to_dict(),
                  "rss_mb": rss}))
"""


def click_corpus(cache: Path) -> Path:
    src = cache / "click-8.4.1"
    if (src / "src" / "click" / "core.py").exists():
        return src
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "click==8.4.1", "-d", d, "-q"],
            check=True,
        )  # fmt: skip
        with tarfile.open(Path(d) / "click-8.4.1.tar.gz") as tar:
            tar.extractall(cache, filter="data")
    return src


def run_once(corpus: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "click"
        shutil.copytree(corpus, repo)
        env = dict(os.environ, ASKREPO_HOME=str(Path(tmp) / "home"))
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(repo)],
            capture_output=True, text=True, env=env, check=True,
        )  # fmt: skip
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--write", type=Path, default=None)
    args = ap.parse_args()
    corpus = click_corpus(ROOT / ".cache")
    runs = [run_once(corpus) for _ in range(args.runs)]

    def med(f):
        return statistics.median(f(r) for r in runs)

    stages = ["load_model", "walk", "chunk", "embed", "store", "fts"]
    s1 = runs[0]["s1"]
    rows = {st: med(lambda r, st=st: r["s1"]["timings_s"].get(st, 0.0)) for st in stages}
    non_embed = sum(v for k, v in rows.items() if k not in ("embed", "load_model"))
    chunks = s1["chunks_total"]
    lines = [
        f"Corpus: Click 8.4.1 sdist ({s1['files_total']} files indexed, {chunks} chunks, "
        f"skipped {s1['skipped']}), model `{s1['model_id']}`, {args.runs} runs, medians.",
        "",
        "| stage | seconds (full index) |",
        "|---|---|",
        *[f"| {k} | {v:.3f} |" for k, v in rows.items()],
        f"| **total (wall)** | {med(lambda r: r['full']):.2f} |",
        "",
        f"- embedding rate: {med(lambda r: r['s1']['embed_rate']):.0f} chunks/s",
        f"- everything except embedding (walk+chunk+store+fts): {non_embed:.2f} s = "
        f"{100 * non_embed / rows['embed']:.0f}% of embedding time (target <= 20%)",
        f"- re-index after touching one file (termui.py): {med(lambda r: r['again']):.2f} s "
        f"wall, {med(lambda r: r['s2']['chunks_embedded'])} chunks re-embedded (target <= 2 s)",
        f"- peak RSS of the whole process: {med(lambda r: r['rss_mb']):.0f} MB (target <= 1.5 GB)",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_search import write_section

        write_section(
            args.write,
            f"## Index\n\n`.venv/bin/python benchmarks/bench_index.py --runs {args.runs} "
            f"--write {args.write}`\n\n{text}\n",
        )


if __name__ == "__main__":
    main()
