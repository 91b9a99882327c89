"""Freshness-check benchmark (run by hand, not a test): 20k files, nothing changed / one edit.

    .venv/bin/python benchmarks/bench_freshness.py [--files 20000] [--runs 7]

Builds a synthetic repository of small Python files under /work/.corpora (or --dir), commits
it, takes the manifest a full index would record (``ingest.walk``), and times:

* ``git``: ``freshness.check`` inside the work tree (git status + stat cache), target <= 50 ms
  when nothing changed;
* ``stat``: the same check with no commit recorded (outside-git path: list + stat);
* ``walk+hash``: what every search did before (``ingest.walk``: list, read and hash every file).

Medians of --runs, warm page cache. Quote them with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace


def make_repo(root: Path, n: int) -> None:
    if (root / ".git").exists() and len(list(root.glob("d*/f*.py"))) == n:
        return
    root.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        d = root / f"d{i // 100:03d}"
        d.mkdir(exist_ok=True)
        (d / f"f{i:05d}.py").write_text(f"def function_{i}(x):\n    return x + {i}\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b")
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@b")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)


def timed(fn, runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def main() -> None:
    from askrepo.freshness import check
    from askrepo.ingest import git_commit, walk

    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--dir", default="/work/.corpora/fresh20k")
    args = ap.parse_args()
    root = Path(args.dir)
    make_repo(root, args.files)
    walked = walk(root)
    files = {f.path: f for f in walked.files}
    git_meta = SimpleNamespace(commit=git_commit(root), dirty=[])
    stat_meta = SimpleNamespace(commit=None, dirty=[])
    print(f"{len(files):,} indexed files; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")

    from askrepo.freshness import _status_v2

    rows = []
    for label, fn in (
        ("`git status` alone (the floor of the git check)", lambda: _status_v2(root)),
        ("git, nothing changed", lambda: check(root, git_meta, files)),
        ("stat, nothing changed", lambda: check(root, stat_meta, files)),
        ("walk+hash (before), nothing changed", lambda: walk(root)),
    ):
        ms, out = timed(fn, args.runs)
        if hasattr(out, "stale") and "before" not in label:
            assert not out.stale, out
        rows.append((label, ms))
    edited = root / "d000" / "f00000.py"
    old = edited.read_text()
    edited.write_text(old + "# edit\n")
    try:
        for label, fn in (
            ("git, one file edited", lambda: check(root, git_meta, files)),
            ("stat, one file edited", lambda: check(root, stat_meta, files)),
        ):
            ms, out = timed(fn, args.runs)
            assert out.stale and out.changed_files == 1, out
            rows.append((label, ms))
    finally:
        edited.write_text(old)
    for label, ms in rows:
        print(f"| {label} | {ms:.1f} ms |")


if __name__ == "__main__":
    main()
