"""Dump the top-N hits of every question of a benchmark manifest to JSON (run by hand).

    PYTHONPATH=. .venv/bin/python benchmarks/dump_candidates.py -o /tmp/cand-base-50.json \
        [--manifest eval/dev/manifest.json] [-c hybrid+scope] [-n 50] [--candidates N] \
        [--set NAME=VALUE ...]

Opens each repository of ``--manifest`` (``askrepo.evaluate.load_manifest``; every one must be
indexed, in the ASKREPO_HOME of the environment) and searches each of its questions (absent
ones skipped) with the options of configuration ``-c`` (``askrepo.evaluate.parse_config``),
reading ``-n`` hits deep (``--candidates`` overrides ``SearchOptions.candidates``). The
askrepo measured is the one on PYTHONPATH, so two checkouts can be dumped with the same
script.

``--set NAME=VALUE`` (repeatable) changes a numeric constant of ``askrepo.ranking`` for the
run (``--set PRIOR_DECLARATIONS=1.0`` undoes the declaration prior), which is how a constant
is measured before it is changed in the code. The value is set on the module, so it reaches
code that reads ``NAME`` (or ``ranking.NAME``) when it runs; a default argument or another
module's ``from askrepo.ranking import NAME`` keeps the old value (a warning names such
modules).

The output is a JSON list, one object per question:
``{repo, id, q, tags, lang, expected, secondary, hits: [{path, s, e, sym, kind, score, src,
text}]}`` (``text`` only for the first 20 hits, empty after). Score and compare dumps with
``benchmarks/compare_candidates.py``. For the dev benchmark (docs/eval.md, "Session 15"):

    export ASKREPO_CORPORA=/work/.corpora ASKREPO_HOME=... ASKREPO_MODELS=...
    PYTHONPATH=. .venv/bin/python benchmarks/dump_candidates.py -o /tmp/cand-new-50.json
    PYTHONPATH=. .venv/bin/python benchmarks/compare_candidates.py /tmp/cand-base-50.json \
        /tmp/cand-new-50.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

TEXT_HITS = 20  # hits whose text is kept (the rest have text "")


def parse_setting(arg: str) -> tuple[str, float | int]:
    """``NAME=VALUE`` for argparse: a numeric constant of askrepo.ranking and its new value."""
    from askrepo import ranking

    name, sep, value = arg.partition("=")
    name = name.strip()
    if not sep or not name or not value.strip():
        raise argparse.ArgumentTypeError(f"{arg!r} is not NAME=VALUE")
    if not hasattr(ranking, name):
        raise argparse.ArgumentTypeError(f"askrepo.ranking has no constant {name!r}")
    current = getattr(ranking, name)
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise argparse.ArgumentTypeError(
            f"askrepo.ranking.{name} is a {type(current).__name__}, not a number"
        )
    try:
        if isinstance(current, int):
            try:
                return name, int(value)
            except ValueError:
                pass
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: {value!r} is not a number") from None


def apply_settings(settings: list[tuple[str, float | int]]) -> None:
    """Set the constants on askrepo.ranking; warn about modules holding their own copy."""
    from askrepo import ranking

    for name, value in settings:
        print(f"askrepo.ranking.{name}: {getattr(ranking, name)!r} -> {value!r}", file=sys.stderr)
        setattr(ranking, name, value)
        copies = sorted(
            m
            for m, mod in list(sys.modules.items())
            if m.startswith("askrepo.") and m != "askrepo.ranking" and name in vars(mod)
        )
        if copies:
            print(
                f"  warning: {', '.join(copies)} imported {name} by value and keep the old one",
                file=sys.stderr,
            )


def hit_record(i: int, h) -> dict:
    return {
        "path": h.path,
        "s": h.start_line,
        "e": h.end_line,
        "sym": h.symbol,
        "kind": h.kind,
        "score": h.score,
        "src": h.sources,
        "text": h.text if i < TEXT_HITS else "",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", type=Path, default=Path("eval/dev/manifest.json"))
    ap.add_argument("-c", "--config", default="hybrid+scope", help="one evaluation configuration")
    ap.add_argument("-n", "--depth", type=int, default=50, help="hits kept per question")
    ap.add_argument("--candidates", type=int, help="SearchOptions.candidates (default: askrepo's)")
    ap.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        type=parse_setting,
        metavar="NAME=VALUE",
        help="override a numeric constant of askrepo.ranking for this run (repeatable)",
    )
    ap.add_argument("-o", "--out", type=Path, required=True, help="output JSON file")
    args = ap.parse_args()
    if args.depth < 1:
        ap.error("--depth must be at least 1")

    import askrepo
    from askrepo.errors import AskrepoError
    from askrepo.evaluate import load_manifest, load_queries, parse_config
    from askrepo.retriever import Retriever

    apply_settings(args.settings)
    try:
        entries = load_manifest(args.manifest)
        opts = replace(parse_config(args.config).options(10), k=args.depth)
    except AskrepoError as exc:
        sys.exit(str(exc))
    if args.candidates is not None:
        opts = replace(opts, candidates=args.candidates)
    print(
        f"askrepo from {Path(askrepo.__file__).parent}; {args.config}, {args.depth} hits, "
        f"{opts.candidates} candidates; {len(entries)} repositories",
        file=sys.stderr,
    )

    out = []
    t0 = time.perf_counter()
    for e in entries:
        try:
            r = Retriever.open(e.repo)
        except AskrepoError as exc:
            sys.exit(f"{e.name} ({e.repo}): {exc}")
        n = 0
        for q in load_queries(e.queries):
            if q.absent:
                continue
            hits = r.search(q.question, opts).hits
            out.append(
                {
                    "repo": e.name,
                    "id": q.id,
                    "q": q.question,
                    "tags": q.tags,
                    "lang": e.language or q.language,
                    "expected": [asdict(x) for x in q.expected],
                    "secondary": [asdict(x) for x in q.secondary],
                    "hits": [hit_record(i, h) for i, h in enumerate(hits)],
                }
            )
            n += 1
        print(f"  {e.name}: {n} questions", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f)
    print(f"{len(out)} questions -> {args.out} ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
