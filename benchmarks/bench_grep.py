"""grep benchmark (run by hand, not a test): `askrepo.grep.grep` on Click 8.4.1, before/after.

    .venv/bin/python benchmarks/bench_grep.py [--before REF] [--runs 5] [--passes 5] [--corpus DIR]

One *pass* is the 18 shared Click literal cases (../shared/eval/click/literal_cases.jsonl) plus
three regex searches (a definition regex, a case-insensitive regex, a path-filtered regex),
each a library call ``grep(root, files, ...)`` over the files the walker keeps (no index, no
process start). Each run is a fresh process that does one warm-up pass and then ``--passes``
timed passes. With ``--before REF`` the ``askrepo`` package of git ref REF is extracted to a
temporary directory and its runs alternate with this checkout's runs, so both see the same
machine load. Prints the median pass time and the median per-search time of each, and the
ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REGEX = [
    {"query": r"def \w+_callback\(", "literal": False},
    {"query": r"usageerror\(", "literal": False, "case_sensitive": False},
    {"query": r"^\s+ctx\.\w+ = ", "literal": False, "path": r"src/click/.*\.py$"},
]

CHILD = r"""
import json, sys, time
from pathlib import Path
from askrepo.grep import grep
from askrepo.ingest import walk
root, passes = Path(sys.argv[1]), int(sys.argv[2])
searches = json.loads(sys.argv[3])
files = [(f.path, f.language, f.file_class) for f in walk(root).files]
def one_pass():
    per = []
    for s in searches:
        t = time.perf_counter()
        grep(root, files, s["query"], literal=s.get("literal", False), path=s.get("path"),
             lang=s.get("lang"), limit=s.get("limit", 20),
             case_sensitive=s.get("case_sensitive", True))
        per.append(time.perf_counter() - t)
    return per
one_pass()  # warm-up
runs = [one_pass() for _ in range(passes)]
print(json.dumps(runs))
"""


def _searches() -> list[dict]:
    sys.path.insert(0, str(ROOT / "tests"))
    from click_corpus import literal_cases

    cases = [c["search"] for c in literal_cases(skip=False)]
    return [{k: v for k, v in s.items() if k != "repo"} for s in cases] + REGEX


def _extract(ref: str, dest: Path) -> Path:
    tar = subprocess.run(
        ["git", "archive", "--format=tar", ref, "askrepo"], cwd=ROOT, capture_output=True
    )
    if tar.returncode != 0:
        sys.exit(f"git archive {ref} failed: {tar.stderr.decode().strip()}")
    path = dest / "tree.tar"
    path.write_bytes(tar.stdout)
    with tarfile.open(path) as t:
        t.extractall(dest, filter="data")
    return dest


def _run(pkg_parent: Path, root: Path, passes: int, searches: list[dict]) -> list[list[float]]:
    env = dict(os.environ, PYTHONPATH=str(pkg_parent))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(passes), json.dumps(searches)],
        env=env,
        cwd=pkg_parent,  # python -c puts the cwd first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="git ref whose askrepo/grep.py is the baseline")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--corpus", help="search this directory instead of Click (same searches)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from click_corpus import click_src

    root = Path(args.corpus).resolve() if args.corpus else click_src(skip=False)
    searches = _searches()
    trees = {"after": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before:
            trees = {"before": _extract(args.before, Path(tmp)), "after": ROOT}
        results: dict[str, list[list[float]]] = {k: [] for k in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                results[name].extend(_run(tree, root, args.passes, searches))
    print(
        f"corpus: {root}, {len(searches)} searches per pass, {args.runs} runs x "
        f"{args.passes} passes per tree"
    )
    medians = {}
    for name, passes in results.items():
        totals = [sum(p) * 1000 for p in passes]
        per = [t * 1000 for p in passes for t in p]
        medians[name] = statistics.median(totals)
        print(
            f"{name}: median pass {statistics.median(totals):.1f} ms, "
            f"median search {statistics.median(per):.2f} ms, max search {max(per):.1f} ms"
        )
    if "before" in medians:
        print(f"speed-up (median pass): {medians['before'] / medians['after']:.1f}x")
    print("\nper search, median ms (" + " / ".join(results) + "):")
    for i, s in enumerate(searches):
        cells = [statistics.median(p[i] for p in passes) * 1000 for passes in results.values()]
        opts = "".join(
            f" {k}={s[k]}" for k in ("literal", "path", "lang", "case_sensitive") if k in s
        )
        print(f"  {' / '.join(f'{c:7.1f}' for c in cells)}  {s['query'][:40]!r}{opts}")


if __name__ == "__main__":
    main()
