"""Vector reuse on re-index (run by hand, not a test): wall time and chunks embedded for
(1) the rebuild a chunker upgrade forces and (2) re-indexing after one function of the
largest file was edited, each from the same committed index, for one or more askrepo trees.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_reuse.py --corpus /work/.corpora/dev/hyper \\
        --home /work/.devhome-reuse --tree new=. --tree base=/tmp/askrepo-base --runs 3

``--home`` holds an index of ``--corpus`` built already (the dev benchmark's). Each run copies
the corpus to a temporary directory, puts a copy of that index under a fresh ASKREPO_HOME for
the copy, then, in a fresh process with ``PYTHONPATH=<tree>``: (1) marks the index as built by
chunker version "0-bench" and runs ``index_repo``; (2) starts again from the same index, edits
one function (inserts a comment line into the body of the middle ``fn``/``def`` of the largest
source file) and runs ``index_repo``. Trees alternate inside each run; medians are reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
from pathlib import Path
from askrepo.indexer import index_repo
t = time.perf_counter(); s = index_repo(Path(sys.argv[1])); wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "embedded": s.chunks_embedded,
                  "reused": getattr(s, "chunks_reused", 0), "total": s.chunks_total,
                  "timings": s.timings_s, "rebuilt": s.rebuilt}))
"""
SOURCE = (".rs", ".py", ".go", ".ts", ".js", ".c", ".java")


def largest_source(root: Path) -> Path:
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in SOURCE]
    return max(files, key=lambda p: p.stat().st_size)


def edit_one_function(path: Path) -> None:
    """Insert a comment line at the top of the body of the file's middle function."""
    lines = path.read_text().splitlines(keepends=True)
    starts = [
        i
        for i, line in enumerate(lines)
        if ("fn " in line or "def " in line) and line.rstrip().endswith(("{", ":"))
    ]
    if not starts:
        raise SystemExit(f"no function found in {path}")
    i = starts[len(starts) // 2]
    lines.insert(i + 1, "    // edited by bench_reuse\n")
    path.write_text("".join(lines))


def prepare(corpus: Path, home: Path, tmp: Path, scenario: str, tree: Path) -> tuple[Path, dict]:
    """A copy of the corpus and an ASKREPO_HOME holding a copy of its index, ready to run."""
    from askrepo.store import repo_key  # the same in every tree

    repo = tmp / "repo" / corpus.name
    shutil.copytree(corpus, repo)
    src = home / "indexes" / repo_key(corpus)
    dst_home = tmp / "home"
    dst = dst_home / "indexes" / repo_key(repo)
    shutil.copytree(src, dst)
    for meta_path in dst.glob("*/meta.json"):
        meta = json.loads(meta_path.read_text())
        meta["repo"] = str(repo.resolve())
        if scenario == "upgrade":
            meta["chunker_version"] = "0-bench"
        meta_path.write_text(json.dumps(meta))
    if scenario == "edit":
        edit_one_function(largest_source(repo))
    env = dict(os.environ, ASKREPO_HOME=str(dst_home), PYTHONPATH=str(tree))
    return repo, env


def run_once(corpus: Path, home: Path, scenario: str, tree: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as d:
        repo, env = prepare(corpus, home, Path(d), scenario, tree)
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(repo)],
            capture_output=True, text=True, env=env, check=True, cwd=tree,
        )  # fmt: skip
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--tree", action="append", required=True, help="name=path of an askrepo")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenario", action="append", choices=["upgrade", "edit"])
    args = ap.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree)
    scenarios = args.scenario or ["upgrade", "edit"]
    results: dict[tuple[str, str], list[dict]] = {}
    for n in range(args.runs):
        for scenario in scenarios:
            for name, path in trees.items():
                r = run_once(args.corpus, args.home, scenario, Path(path).resolve())
                results.setdefault((scenario, name), []).append(r)
                print(f"run {n + 1} {scenario:7s} {name:5s} {r['wall']:7.2f} s "
                      f"embedded {r['embedded']} reused {r['reused']} of {r['total']} "
                      f"{r['timings']}", flush=True)  # fmt: skip
    print("\n| scenario | tree | wall s (median) | chunks embedded | chunks reused |")
    print("|---|---|---:|---:|---:|")
    for (scenario, name), rs in results.items():
        wall = statistics.median(r["wall"] for r in rs)
        emb = statistics.median(r["embedded"] for r in rs)
        reu = statistics.median(r["reused"] for r in rs)
        print(f"| {scenario} | {name} | {wall:.2f} | {emb:.0f} | {reu:.0f} |")


if __name__ == "__main__":
    main()
