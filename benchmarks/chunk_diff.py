"""Which definitions a chunker change gains, loses or renames (run by hand, not a test).

    .venv/bin/python benchmarks/chunk_diff.py --ref 228feb0 DIR [DIR ...] [--show 5]
        [--languages c,cpp,rust,javascript,typescript,go,java,kotlin,swift]

Chunks every file of each DIR (walking it like a repository: ``.git``, ``node_modules`` and
``vendor`` skipped; the language detected as ``askrepo index`` does) with the chunker at
``--ref`` (extracted with ``git archive`` into a temporary directory, run in its own process)
and with the working tree's, and compares the definitions (function / method / class chunks:
lines, kind, symbol, signature, calls). Prints, per DIR, the chunks and definitions of each
side and the number of files whose definitions differ, then up to ``--show`` files with their
removed (``-``) and added (``+``) definitions. Nothing is indexed or embedded.

This is how docs/eval.md's "Session 7" counts were made (spdlog +69 definitions, hyper +73, …)
on the dev corpora (benchmarks/fetch_dev_corpora.sh) and on outside repositories used only for
measurement. A refactor of the query files should print "0 files differ".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, os, sys
from askrepo import chunker
from askrepo.ingest import detect_language
root, languages = sys.argv[1], set(sys.argv[2].split(","))
out = {}
for dp, dn, fn in os.walk(root):
    dn[:] = sorted(d for d in dn if d not in (".git", "node_modules", "vendor"))
    for f in sorted(fn):
        p = os.path.join(dp, f)
        try:
            raw = open(p, "rb").read()
        except OSError:
            continue
        if len(raw) > 1_000_000:
            continue
        lang = detect_language(p, raw[:4096])
        if lang not in languages:
            continue
        text = raw.decode("utf-8", "replace")
        rel = os.path.relpath(p, root)
        out[rel] = [
            [c.start_line, c.end_line, c.kind, c.symbol, c.signature, list(c.calls or ())]
            for c in chunker.chunk_text(rel, text, lang)
        ]
json.dump(out, sys.stdout)
"""

DEFINITIONS = ("function", "method", "class")


def chunks(code_dir: Path, repo: Path, languages: str) -> dict[str, list[list]]:
    res = subprocess.run(
        [sys.executable, "-c", WORKER, str(repo), languages],
        cwd=code_dir,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(code_dir), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(res.stdout)


def definitions(rows: list[list]) -> set[tuple]:
    return {(a, b, k, s, sig, tuple(calls)) for a, b, k, s, sig, calls in rows if k in DEFINITIONS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--ref", required=True, help="commit whose chunker is the baseline")
    ap.add_argument("--show", type=int, default=5, help="files to list per directory")
    ap.add_argument(
        "--languages",
        default="c,cpp,rust,javascript,typescript,tsx,go,java,kotlin,swift,python,ruby,php,lua,zig",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="askrepo-ref-") as old:
        archive = subprocess.run(
            ["git", "archive", args.ref, "askrepo"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", old], input=archive.stdout, check=True)
        for repo in args.dirs:
            before = chunks(Path(old), repo.resolve(), args.languages)
            after = chunks(ROOT, repo.resolve(), args.languages)
            n_before = sum(len(v) for v in before.values())
            n_after = sum(len(v) for v in after.values())
            d_before = sum(len(definitions(v)) for v in before.values())
            d_after = sum(len(definitions(v)) for v in after.values())
            changed = [
                p
                for p in sorted(set(before) | set(after))
                if definitions(before.get(p, [])) != definitions(after.get(p, []))
            ]
            print(
                f"{repo}: {len(after)} files; chunks {n_before} -> {n_after}, definitions "
                f"{d_before} -> {d_after}; {len(changed)} files differ"
            )
            for p in changed[: args.show]:
                a, b = definitions(before.get(p, [])), definitions(after.get(p, []))
                print(f"  {p}")
                for row in sorted(a - b):
                    print(f"    - {row[0]}-{row[1]} {row[2]} {row[3]}")
                for row in sorted(b - a):
                    print(f"    + {row[0]}-{row[1]} {row[2]} {row[3]}")


if __name__ == "__main__":
    main()
