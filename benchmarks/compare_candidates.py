"""Score a candidates dump, or compare two, question by question (run by hand).

    PYTHONPATH=. .venv/bin/python benchmarks/compare_candidates.py A.json [B.json] [--json]
        [--list CATEGORY [--max 0.5]] [--diff MIN]

A and B are dumps of ``benchmarks/dump_candidates.py``. For each dump: nDCG@10 over all
questions, per category (a question's first tag, "-" without one) and per language; hit@1 and
hit@5 (questions whose first hit / one of the first five hits covers a relevant target); file
hit@1 and file hit@5 (a relevant target's file is first / among the first five distinct files
of the dump's hits). The metrics are askrepo's own: ``askrepo.metrics.ndcg_at_k`` (secondary
targets at half gain), ``askrepo.evaluate.is_hit``, ``askrepo.metrics.file_rank``. With B,
also the questions B gains and loses at hit@1 and hit@5 (A -> B), by ``repo/id``; only the
questions present in both dumps are compared.

``--diff MIN`` (with B) prints every question whose nDCG@10 moved by at least MIN between the
dumps, with the first hits of each and the expected targets: what a change did, question by
question.

``--list CATEGORY`` (or ``ALL``) prints, for each dump, the questions of that category whose
nDCG@10 is at most ``--max`` with their top 10 (``R``: covers a relevant target, ``s``: a
secondary one) and the expected targets. ``--json`` prints all of it as one JSON object
instead.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from askrepo import metrics
from askrepo.evaluate import Expected, is_hit

NDCG_K = 10
SHOWN = 10  # hits listed per question by --list


def load(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(f"{path}: {exc}")
    if not isinstance(data, list):
        sys.exit(f"{path}: not a dump of benchmarks/dump_candidates.py (a JSON list)")
    return data


def category(q: dict) -> str:
    return q["tags"][0] if q["tags"] else "-"


def score(q: dict) -> dict:
    """One question's figures, and its hits and targets as objects the metrics read."""
    hits = [
        SimpleNamespace(
            path=h["path"],
            start_line=h["s"],
            end_line=h["e"],
            symbol=h["sym"],
            kind=h["kind"],
            score=h["score"],
        )
        for h in q["hits"]
    ]
    exp = [Expected(**x) for x in q["expected"]]
    sec = [Expected(**x) for x in q["secondary"]]
    return {
        "ndcg": metrics.ndcg_at_k(hits, exp, NDCG_K, sec),
        "h1": any(is_hit(hits[0], x) for x in exp) if hits else False,
        "h5": any(is_hit(h, x) for h in hits[:5] for x in exp),
        "file_rank": metrics.file_rank(hits, exp),
        "cat": category(q),
        "lang": q["lang"],
        "hits": hits,
        "expected": exp,
        "secondary": sec,
    }


def scores(dump: list[dict]) -> dict[str, dict]:
    return {f"{q['repo']}/{q['id']}": score(q) for q in dump}


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def summary(res: dict[str, dict]) -> dict:
    by_cat: dict[str, list[float]] = collections.defaultdict(list)
    by_lang: dict[str, list[float]] = collections.defaultdict(list)
    for v in res.values():
        by_cat[v["cat"]].append(v["ndcg"])
        by_lang[str(v["lang"])].append(v["ndcg"])
    file_ranks = [v["file_rank"] for v in res.values()]
    return {
        "questions": len(res),
        "ndcg": mean([v["ndcg"] for v in res.values()]) if res else 0.0,
        "ndcg_by_category": {k: mean(v) for k, v in sorted(by_cat.items())},
        "ndcg_by_language": {k: mean(v) for k, v in sorted(by_lang.items())},
        "hit1": sum(v["h1"] for v in res.values()),
        "hit5": sum(v["h5"] for v in res.values()),
        "file_hit1": sum(1 for r in file_ranks if r and r <= 1),
        "file_hit5": sum(1 for r in file_ranks if r and r <= 5),
    }


def changes(a: dict[str, dict], b: dict[str, dict]) -> dict:
    common = [k for k in a if k in b]
    out: dict = {
        "compared": len(common),
        "only_a": sorted(k for k in a if k not in b),
        "only_b": sorted(k for k in b if k not in a),
    }
    for m in ("h1", "h5"):
        name = "hit1" if m == "h1" else "hit5"
        out[f"{name}_gained"] = [k for k in common if b[k][m] and not a[k][m]]
        out[f"{name}_lost"] = [k for k in common if a[k][m] and not b[k][m]]
    return out


def listing(res: dict[str, dict], dump: list[dict], cat: str, limit: float) -> list[dict]:
    """Questions of ``cat`` (or ALL) with nDCG@10 <= limit: their top hits and targets."""
    out = []
    for q in dump:
        key = f"{q['repo']}/{q['id']}"
        v = res[key]
        if (cat != "ALL" and v["cat"] != cat) or v["ndcg"] > limit:
            continue
        top = []
        for i, h in enumerate(v["hits"][:SHOWN], 1):
            if any(is_hit(h, x) for x in v["expected"]):
                mark = "R"
            elif any(is_hit(h, x) for x in v["secondary"]):
                mark = "s"
            else:
                mark = " "
            top.append(
                {
                    "rank": i,
                    "mark": mark,
                    "path": h.path,
                    "s": h.start_line,
                    "e": h.end_line,
                    "sym": h.symbol,
                    "kind": h.kind,
                    "score": h.score,
                }
            )
        out.append(
            {
                "id": key,
                "ndcg": v["ndcg"],
                "q": q["q"],
                "top": top,
                "expected": q["expected"],
                "secondary": q["secondary"],
            }
        )
    return out


def span(x: dict) -> str:
    if x.get("start_line") is None:
        return f"{x['path']}" + (f" ({x['symbol']})" if x.get("symbol") else "")
    return f"{x['path']}:{x['start_line']}-{x['end_line']}"


def print_summary(name: str, s: dict) -> None:
    cats = " ".join(f"{k}={v:.4f}" for k, v in s["ndcg_by_category"].items())
    print(f"{name} ALL={s['ndcg']:.4f} {cats} h1={s['hit1']} h5={s['hit5']} (n={s['questions']})")
    print("   ", " ".join(f"{k}={v:.3f}" for k, v in s["ndcg_by_language"].items()))


def print_listing(rows: list[dict]) -> None:
    for r in rows:
        print(f"## {r['id']} {r['ndcg']:.3f} {r['q']}")
        for h in r["top"]:
            print(
                f"   {h['rank']:2} {h['mark']} {h['path']}:{h['s']}-{h['e']} {h['sym']} "
                f"{h['kind']} {h['score']:.4f}"
            )
        print("   R:", " ".join(span(x) for x in r["expected"]))
        print("   S:", " ".join(span(x) for x in r["secondary"]))


def first_hits(q: dict, n: int = 6) -> list[str]:
    """A dumped question's first ``n`` hits as ``path:start-end symbol``."""
    return [f"{h['path']}:{h['s']}-{h['e']} {h['sym'] or ''}".strip() for h in q["hits"][:n]]


def moved(res: dict[str, dict], dumps: dict[str, list[dict]], limit: float) -> list[dict]:
    """The questions present in both dumps whose nDCG@10 differs by at least ``limit``, in
    dump order: id, question, both scores, each dump's first six hits and the expected targets."""
    by_id = {n: {f"{q['repo']}/{q['id']}": q for q in d} for n, d in dumps.items()}
    out = []
    for key, a in res["A"].items():
        b = res["B"].get(key)
        if b is None or abs(a["ndcg"] - b["ndcg"]) < limit:
            continue
        tops = {n: first_hits(by_id[n][key]) for n in ("A", "B")}
        q = by_id["A"][key]
        out.append(
            {
                "id": key,
                "q": q["q"],
                "a": a["ndcg"],
                "b": b["ndcg"],
                **tops,
                "expected": [span(x) for x in q["expected"]],
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", metavar="A", type=Path, help="a dump of dump_candidates.py")
    ap.add_argument("b", metavar="B", type=Path, nargs="?", help="a second dump, compared to A")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--list", metavar="CATEGORY", help="list the weak questions of a category")
    ap.add_argument("--max", type=float, default=0.5, help="nDCG@10 limit of --list")
    ap.add_argument(
        "--diff", metavar="MIN", type=float, help="with B: the questions whose nDCG@10 moved by MIN"
    )
    args = ap.parse_args()
    if args.diff is not None and not args.b:
        ap.error("--diff compares two dumps: give B too")

    dumps = {"A": (args.a, load(args.a))}
    if args.b:
        dumps["B"] = (args.b, load(args.b))
    res = {name: scores(dump) for name, (_, dump) in dumps.items()}
    report: dict = {}
    for name, (path, dump) in dumps.items():
        report[name] = {"file": str(path), **summary(res[name])}
        if args.list:
            report[name]["listed"] = listing(res[name], dump, args.list, args.max)
    if args.b:
        report["changes"] = changes(res["A"], res["B"])
        if args.diff is not None:
            report["moved"] = moved(res, {n: d for n, (_, d) in dumps.items()}, args.diff)

    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
        return
    for name in dumps:
        print_summary(name, report[name])
    if args.b:
        c = report["changes"]
        print(
            f"hit@1 +{len(c['hit1_gained'])} -{len(c['hit1_lost'])}  "
            f"hit@5 +{len(c['hit5_gained'])} -{len(c['hit5_lost'])}"
        )
        for n in (1, 5):
            print(f"file hit@{n}: A {report['A'][f'file_hit{n}']} B {report['B'][f'file_hit{n}']}")
        for key in ("hit1_gained", "hit1_lost", "hit5_gained", "hit5_lost"):
            if c[key]:
                metric, change = key.split("_")
                print(f"  {metric[:3]}@{metric[3:]} {change}: {' '.join(c[key])}")
        if c["only_a"] or c["only_b"]:
            print(
                f"  compared {c['compared']} questions; only in A: {len(c['only_a'])}, "
                f"only in B: {len(c['only_b'])}"
            )
    else:
        for n in (1, 5):
            print(f"file hit@{n}: {report['A'][f'file_hit{n}']}")
    for m in report.get("moved", []):
        print(f"## {m['id']} {m['a']:.3f} -> {m['b']:.3f}  {m['q']}")
        for name in ("A", "B"):
            print(f"   {name} " + " | ".join(m[name]))
        print("   R:", " ".join(m["expected"]))
    if args.list:
        for name in dumps:
            rows = report[name]["listed"]
            cats = report[name]["ndcg_by_category"]
            print(f"\n# {name}: {len(rows)} {args.list} questions with nDCG@10 <= {args.max}")
            print_listing(rows)
            if args.list != "ALL" and args.list not in cats:
                print(f"   (no category {args.list!r}; categories: {', '.join(cats)}, ALL)")


if __name__ == "__main__":
    main()
